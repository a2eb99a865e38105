// The policy's JSON form, the report, the violation line and its parser, and the rule table.
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/apply_sandbox.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"
#include "sandbox/syscall_rules.h"
#include "sandbox/violation_reporter.h"
#include "sandbox_test_support.h"

namespace ptxbench::sandbox::testing {
namespace {

TEST(SandboxPolicy, JsonRoundTrip) {
  auto p = runner_policy("/tmp/scratch", "/cache/builds/k/cand.so", "/usr/local/cuda", tool_mode::nsight_compute);
  p.mode = enforcement::audit;
  p.limits.file_size_bytes = 1234;
  p.limits.cpu_seconds = 300;
  p.limits.data_bytes = 1ull << 34;
  p.extra_write_paths = {"/dev/shm"};
  auto back = policy_from_json(to_json(p));
  ASSERT_TRUE(back) << back.err().message;
  EXPECT_EQ(to_json(*back), to_json(p));
  EXPECT_EQ(back->tool, tool_mode::nsight_compute);
  EXPECT_EQ(back->limits.file_size_bytes, 1234u);
  EXPECT_EQ(back->limits.cpu_seconds, 300u);
  EXPECT_EQ(back->limits.data_bytes, 1ull << 34);
}

TEST(SandboxPolicy, DefaultReadPathsHoldTheCandidateButNotItsFolder) {
  auto paths = default_read_paths("/cache/builds/k/cand.so", "/usr/local/cuda");
  std::set<std::string> s;
  for (const auto& p : paths) s.insert(p.string());
  EXPECT_TRUE(s.count("/cache/builds/k/cand.so"));
  EXPECT_FALSE(s.count("/cache/builds/k"));
  EXPECT_FALSE(s.count("/cache"));
  EXPECT_TRUE(s.count("/proc/self"));
  EXPECT_FALSE(s.count("/proc"));
  EXPECT_FALSE(s.count("/tmp"));
  EXPECT_FALSE(s.count("/root"));
}

TEST(SandboxPolicy, StrictReadingNamesTheField) {
  nlohmann::ordered_json j = {{"scratch_dir", "/s"}, {"colour", "red"}};
  EXPECT_EQ(policy_from_json(j).err().message, "sandbox policy: unknown field 'colour'");
  j = {{"scratch_dir", "/s"}, {"read_paths", "/usr"}};
  EXPECT_EQ(policy_from_json(j).err().message, "sandbox policy: 'read_paths' must be an array of paths");
  j = {{"scratch_dir", "/s"}, {"tool", "gdb"}};
  EXPECT_EQ(policy_from_json(j).err().message,
            "sandbox policy: 'tool' must be none, compute-sanitizer or nsight-compute, got 'gdb'");
  j = {{"mode", "enforce"}};
  EXPECT_EQ(policy_from_json(j).err().message, "sandbox policy: 'scratch_dir' is required");
  j = {{"scratch_dir", "/s"}, {"limits", {{"open_files", -1}}}};
  EXPECT_EQ(policy_from_json(j).err().message, "sandbox policy: 'open_files' must be an unsigned integer");
  j = {{"scratch_dir", "/s"}, {"required", {"seccomp", "selinux"}}};
  EXPECT_NE(policy_from_json(j).err().message.find("'required' holds an unknown protection"), std::string::npos);
}

TEST(SandboxPolicy, AMissingScratchFolderIsAnError) {
  sandbox_policy p;
  p.scratch_dir = "/nonexistent/ptxbench-scratch";
  auto r = run_sandboxed(p, [](int) {});
  EXPECT_EQ(r.exit_code, 99);
  EXPECT_EQ(r.output, "apply failed: sandbox: the scratch folder '/nonexistent/ptxbench-scratch' does not exist\n");
}

TEST(SandboxPolicy, AnUnavailableRequiredProtectionIsAnError) {
  sandbox_dirs d;
  auto p = test_policy(d);
  p.allow_network = true;  // so no network namespace is entered
  p.required = {"seccomp", "network_namespace"};
  auto r = run_sandboxed(p, [](int) {});
  EXPECT_EQ(r.exit_code, 99);
  EXPECT_EQ(r.output,
            "apply failed: sandbox: network_namespace is required but unavailable: the policy allows the network\n");
}

TEST(SandboxReport, JsonShape) {
  sandbox_dirs d;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto p = test_policy(d);
    p.tool = tool_mode::compute_sanitizer;
    p.violation_fd = fds[1];
    auto rep = apply_sandbox(p);
    std::string s = rep ? to_json(*rep).dump() + "\n" + summary(*rep) : rep.err().message;
    (void)!::write(fds[1], s.data(), s.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int st;
  ::waitpid(pid, &st, 0);
  auto nl = out.find('\n');
  ASSERT_NE(nl, std::string::npos) << out;
  auto j = nlohmann::ordered_json::parse(out.substr(0, nl));
  EXPECT_EQ(j["mode"], "enforce");
  EXPECT_EQ(j["tool"], "compute-sanitizer");
  EXPECT_EQ(j["seccomp"]["active"], true);
  EXPECT_GT(j["seccomp"]["rules"].get<int>(), 80);
  EXPECT_EQ(j["no_new_privs"]["active"], true);
  EXPECT_EQ(j["rlimits"]["active"], true);
  EXPECT_EQ(j["network_namespace"]["active"], false);
  EXPECT_NE(j["network_namespace"]["reason"].get<std::string>().find("under a tool"), std::string::npos);
  EXPECT_EQ(j["mount_namespace"]["active"], false);
  EXPECT_FALSE(j["mount_namespace"]["reason"].get<std::string>().empty());
  EXPECT_EQ(j["weakened"].size(), 1u);
  std::string why;
  int abi = landlock_available(&why) ? 1 : 0;
  EXPECT_EQ(j["landlock"]["active"], abi == 1);
  if (abi) {
    EXPECT_GE(j["landlock"]["abi"].get<int>(), 1);
    EXPECT_EQ(j["landlock"]["network"], false);  // not under a tool
  } else {
    EXPECT_EQ(j["landlock"]["reason"], why);
  }
  EXPECT_NE(out.find("sandbox [enforce, under compute-sanitizer]: no_new_privs on, seccomp on"), std::string::npos)
      << out;
}

TEST(SandboxViolation, FindsTheLastMarkerAtALineStart) {
  EXPECT_FALSE(find_violation("all fine\n").has_value());
  EXPECT_FALSE(find_violation("printed ptxbench-sandbox: attempted execve mid-line\n").has_value());
  EXPECT_EQ(find_violation("x\nptxbench-sandbox: attempted fork\nptxbench-sandbox: attempted execve\n").value(),
            "sandbox: attempted execve");
  EXPECT_EQ(find_violation("ptxbench-sandbox: attempted ptrace").value(), "sandbox: attempted ptrace");
  std::string long_line = "ptxbench-sandbox: " + std::string(1000, 'a');
  EXPECT_EQ(find_violation(long_line)->size(), std::string("sandbox: ").size() + 200);
}

TEST(SandboxViolation, FormatsAnUnknownCallByNumber) {
  char buf[128];
  uint64_t args[6] = {};
  auto n = format_violation(buf, sizeof buf, 4242, args);
  EXPECT_EQ(std::string(buf, n), "ptxbench-sandbox: attempted system call 4242\n");
  n = format_violation(buf, 20, 4242, args);  // truncated, still one line
  EXPECT_EQ(n, 20u);
  EXPECT_EQ(buf[19], '\n');
}

TEST(SandboxRules, EveryTrapRuleHasAReasonAndToolModeNeverTrapsTheNetwork) {
  sandbox_policy tool;
  tool.tool = tool_mode::nsight_compute;
  std::set<std::string> names;
  for (const auto& r : syscall_rules()) {
    EXPECT_FALSE(std::string(r.why).empty()) << r.syscall;
    names.insert(r.syscall);
    int err = 0;
    auto a = effective_action(r, tool, &err);
    if (r.category == rule_category::network) {
      EXPECT_NE(a, rule_action::trap) << r.syscall;
    }
    if (a == rule_action::fail) {
      EXPECT_GT(err, 0) << r.syscall;
    }
  }
  for (const char* must : {"execve", "execveat", "fork", "vfork", "clone", "clone3", "socket", "connect", "bind",
                           "listen", "accept", "accept4", "ptrace", "process_vm_readv", "process_vm_writev", "kill",
                           "tgkill", "tkill", "pidfd_send_signal", "rt_sigaction", "personality", "mount", "umount2",
                           "unshare", "setns", "bpf", "perf_event_open", "keyctl", "add_key", "io_uring_setup"})
    EXPECT_TRUE(names.count(must)) << must;
}

}  // namespace
}  // namespace ptxbench::sandbox::testing

#include <signal.h>

#include "sandbox/runner_integration.h"

namespace ptxbench::sandbox::testing {
namespace {

TEST(SandboxWiring, TheToolComesFromTheWrapper) {
  EXPECT_EQ(tool_for_wrapper({}), tool_mode::none);
  EXPECT_EQ(tool_for_wrapper({"/usr/local/cuda/bin/compute-sanitizer", "--tool", "memcheck"}),
            tool_mode::compute_sanitizer);
  EXPECT_EQ(tool_for_wrapper({"/opt/nvidia/nsight-compute/2025.3/ncu", "--metrics", "x"}), tool_mode::nsight_compute);
  auto p = policy_for_runner("/w/scratch", "/c/builds/k/x.so", {"ncu"});
  EXPECT_EQ(p.tool, tool_mode::nsight_compute);
  EXPECT_EQ(p.scratch_dir, "/w/scratch");
}

TEST(SandboxWiring, ViolationMessageFromLogOrSignal) {
  int sigsys = SIGSYS;  // a wait status for "killed by SIGSYS" is the signal number itself
  EXPECT_EQ(violation_message("x\nptxbench-sandbox: attempted ptrace\n", 86 << 8, true).value_or(""),
            "sandbox: attempted ptrace");
  EXPECT_EQ(violation_message("", sigsys, true).value_or(""), "sandbox: blocked system call (the report was suppressed)");
  EXPECT_FALSE(violation_message("Segmentation fault\n", SIGSEGV, true).has_value());
  EXPECT_FALSE(violation_message("", sigsys, false).has_value());
  // The handler's exit code without its line: the sandbox's, but no call is named.
  EXPECT_EQ(violation_message("cut log", violation_exit_code << 8, true).value_or(""),
            "sandbox: the runner exited with the sandbox's code 86 but left no report");
  EXPECT_FALSE(violation_message("", 3 << 8, true).has_value());
  EXPECT_FALSE(violation_message("", violation_exit_code << 8, false).has_value());
}

TEST(SandboxWiring, NoPolicyInTheSetupAppliesNothingAndSaysSo) {
  auto j = apply_requested_sandbox({{"type", "setup"}, {"so", "/x.so"}});
  ASSERT_TRUE(j) << j.err().message;
  EXPECT_EQ((*j)["applied"], false);
  EXPECT_EQ((*j)["reason"], "the harness asked for no sandbox");
  auto bad = apply_requested_sandbox({{"sandbox", {{"scratch_dir", "/s"}, {"mode", "lenient"}}}});
  EXPECT_EQ(bad.err().message, "sandbox policy: 'mode' must be enforce or audit, got 'lenient'");
}

TEST(SandboxWiring, ThePolicyFromTheSetupIsApplied) {
  sandbox_dirs d;
  auto policy = policy_for_runner(d.scratch, d.readable / "cand.so", {});
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  policy.violation_fd = fds[1];
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto j = apply_requested_sandbox({{"type", "setup"}, {"sandbox", to_json(policy)}});
    std::string s = j ? j->dump() : "error: " + j.err().message;
    s += "\n";
    (void)!::write(fds[1], s.data(), s.size());
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    ::execv("/bin/true", argv);  // must be trapped
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  auto nl = out.find('\n');
  ASSERT_NE(nl, std::string::npos) << out;
  auto j = nlohmann::ordered_json::parse(out.substr(0, nl));
  EXPECT_EQ(j["applied"], true);
  EXPECT_EQ(j["seccomp"]["active"], true);
  EXPECT_EQ(violation_message(out, st, true).value_or(""), "sandbox: attempted execve");
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == violation_exit_code);
}

}  // namespace
}  // namespace ptxbench::sandbox::testing
