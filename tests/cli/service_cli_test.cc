// Issue 27's new-user probe of `serve`, `worker`, `jobs` and `eval --remote` (points 2, 3, 4, 5, 7,
// 9) and issue 24.3's targets from the hardware, through the real binary: each defect has its exact
// exit code and first line, and nothing is created or lost on the way.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "cli/cli_test_support.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "core/spawn.h"
#include "test_support.h"

namespace ptxbench {
namespace {
namespace fs = std::filesystem;
using testing::first_line;
using testing::one_line;
using testing::run_cli;
using testing::cli_case;
using testing::expect_cases;

const std::string k_remote_task = "gemm_n7168_k5120";
const std::string k_h100 = "NVIDIA H100 80GB HBM3";

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

class ServiceCli : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = testing::make_temp_dir("service-cli"); }
  void TearDown() override {
    if (m_server > 0) stop_child(m_server, SIGTERM, 10000);
    fs::remove_all(m_dir);
  }
  std::string path(const std::string& name) const { return (m_dir / name).string(); }

  /// `ptxbench serve` in the background with fake-evaluator workers; returns its URL once it listens.
  std::string start_serve(const std::vector<std::string>& extra) {
    m_port = free_port();
    std::vector<std::string> argv = {(testing::bin_dir() / "ptxbench").string(), "--root", testing::repo_root().string(),
                                     "--cache-dir", path("cache"), "serve", "--listen", "127.0.0.1:" + std::to_string(m_port),
                                     "--service-dir", path("service"), "--evaluator", "fake", "--lease-ms", "2000",
                                     "--backoff-ms", "50"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto pid = spawn_background({.argv = argv, .log = m_dir / "serve.log"});
    EXPECT_TRUE(pid) << (pid ? "" : pid.err().message);
    m_server = pid ? *pid : -1;
    for (int i = 0; i < 300; ++i) {
      auto log = read_text_file(m_dir / "serve.log", 1 << 20);
      if (log && log->find("listening on") != std::string::npos) return "http://127.0.0.1:" + std::to_string(m_port);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "serve did not start: " << serve_log();
    return "";
  }
  std::string serve_log() const {
    auto text = read_text_file(m_dir / "serve.log", 1 << 20);
    return text ? *text : std::string();
  }

  fs::path m_dir;
  pid_t m_server = -1;
  int m_port = 0;
};

// Probe 4: every number of serve, worker and jobs is checked before anything starts, in the words the
// other commands use, with its range in --help.
TEST_F(ServiceCli, NumbersAreCheckedBeforeAnythingStarts) {
  const std::vector<std::string> serve = {"serve", "--listen", "127.0.0.1:0", "--service-dir", path("s"), "--evaluator", "fake"};
  const std::vector<std::string> worker = {"worker", "--queue", path("q") + "/", "--role", "cpu"};
  auto with = [](std::vector<std::string> base, std::vector<std::string> extra) {
    base.insert(base.end(), extra.begin(), extra.end());
    return base;
  };
  expect_cases({
      {with(serve, {"--lease-ms", "-5"}), 2, "ptxbench: --lease-ms: expected a whole number from 100 to 86400000, got '-5'"},
      {with(serve, {"--cpu-workers", "-1"}), 2, "ptxbench: --cpu-workers: expected a whole number from 0 to 64, got '-1'"},
      {with(serve, {"--call-timeout", "nan"}), 2,
       "ptxbench: --call-timeout: expected seconds above 0 and at most 604800, got 'nan'"},
      {with(serve, {"--backoff-ms", "-1"}), 2, "ptxbench: --backoff-ms: expected a whole number from 0 to 3600000, got '-1'"},
      {with(serve, {"--max-infra-failures", "-2"}), 2,
       "ptxbench: --max-infra-failures: expected a whole number from 1 to 1000, got '-2'"},
      {with(serve, {"--max-body-bytes", "-1"}), 2,
       "ptxbench: --max-body-bytes: expected a whole number from 1024 to 1073741824, got '-1'"},
      {with(serve, {"--max-sessions", "nan"}), 2, "ptxbench: --max-sessions: expected a whole number from 1 to 64, got 'nan'"},
      {with(serve, {"--gpu-workers-per-device", "0"}), 2,
       "ptxbench: --gpu-workers-per-device: expected a whole number from 1 to 16, got '0'"},
      {with(serve, {"--unserved-after", "-1"}), 2, "ptxbench: --unserved-after: expected a number from 0 to 86400, got '-1'"},
      {with(worker, {"--lease-ms", "-5"}), 2, "ptxbench: --lease-ms: expected a whole number from 100 to 86400000, got '-5'"},
      {with(worker, {"--jobs", "0"}), 2, "ptxbench: --jobs: expected a whole number from 1 to 256, got '0'"},
      {{"worker", "--queue", path("q") + "/", "--role", "gpu", "--devices", "0,x", "--evaluator", "fake"}, 2,
       "ptxbench: --devices: expected comma-separated GPU ordinals such as 0,1, got '0,x'"},
      {{"jobs", "--queue", path("q") + "/", "--slowest", "-1"}, 2,
       "ptxbench: --slowest: expected a whole number from 0 to 1000, got '-1'"},
  });
  EXPECT_FALSE(fs::exists(path("s"))) << "nothing started";
  auto help = run_cli({"serve", "--help"});
  for (const char* range : {"100..86400000", "0..64", "1024..1073741824", "0..86400"})
    EXPECT_NE(help.out.find(range), std::string::npos) << range << "\n" << help.out;
  auto worker_help = run_cli({"worker", "--help"});
  EXPECT_NE(worker_help.out.find("1..256"), std::string::npos) << worker_help.out;
}

// Probe 5: a mistyped --queue is not a new, empty queue.
TEST_F(ServiceCli, AMistypedQueueIsAnErrorAndCreatesNothing) {
  expect_cases({
      {{"jobs", "--queue", path("typo") + "/"}, 2,
       "ptxbench: queue " + path("typo") + "/: no queue there (" + path("typo") + "/queue.db does not exist)"},
      {{"worker", "--queue", path("nonexistent/dir"), "--role", "cpu", "--evaluator", "fake"}, 2,
       "ptxbench: queue " + path("nonexistent/dir") + ": no such folder " + path("nonexistent") +
           " (`ptxbench serve --queue` creates a queue)"},
  });
  EXPECT_FALSE(fs::exists(path("typo")));
  EXPECT_FALSE(fs::exists(path("nonexistent")));
  // A folder that exists but holds no queue: a reader still refuses and writes nothing into it.
  fs::create_directories(path("empty"));
  auto r = run_cli({"jobs", "--queue", path("empty") + "/"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(fs::is_empty(path("empty")));
}

// Probes 2, 7 and 9 (serve): a port in use, the fake evaluator's warning; issue 24.3: the default
// target comes from the GPU, and a --target the GPU here cannot serve is refused.
TEST_F(ServiceCli, ServeChoosesItsTargetFromTheGpuAndRefusesABusyPort) {
  std::string url = start_serve({"--fake-gpu-name", k_h100, "--unserved-after", "1"});
  ASSERT_FALSE(url.empty());
  auto log = serve_log();
  EXPECT_EQ(first_line(log),
            "ptxbench serve: warning: --evaluator fake: every verdict this server gives is made up (for tests of the "
            "service only)");
  EXPECT_NE(log.find("default target h100)"), std::string::npos) << log;
  auto second = run_cli({"serve", "--listen", "127.0.0.1:" + std::to_string(m_port), "--service-dir", path("second"),
                         "--no-local-workers"},
                        30);
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_EQ(first_line(second.err), "ptxbench: cannot listen on 127.0.0.1:" + std::to_string(m_port) +
                                        ": address in use (another server is listening there)");

  // eval --remote without --target: the service's GPU decides (h100 here). The fake evaluator's
  // markers decide the verdict: this kernel passes its CPU half and goes to a GPU.
  ASSERT_TRUE(write_file_atomic(path("k.cu"), "// wgmma FAKE_SPEEDUP=1.3\n"));
  auto remote = run_cli({"eval", path("k.cu"), "--task", k_remote_task, "--remote", url, "--json"}, 60);
  auto v = ordered_json::parse(remote.out, nullptr, false);
  ASSERT_TRUE(v.is_object()) << remote.out << remote.err;
  EXPECT_EQ(v["target"], "h100");
  EXPECT_EQ(v["service"]["target"], "h100");
  // A target no live worker serves: answered within seconds, one line, non-zero (probe 3, issue 24.3).
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(write_file_atomic(path("k200.cu"), "// wgmma for h200\n"));
  auto unserved = run_cli({"eval", path("k200.cu"), "--task", k_remote_task, "--remote", url, "--target", "h200"}, 60);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20);
  EXPECT_EQ(unserved.exit_code, 3) << unserved.err;
  EXPECT_EQ(first_line(unserved.err),
            "ptxbench: " + path("k200.cu") +
                ": the service could not evaluate it: no live GPU worker serves target h200: the live GPU workers serve "
                "h100; resubmit with \"target\": \"h100\" or add a GPU worker for h200");
  EXPECT_TRUE(one_line(unserved.err)) << unserved.err;
  // Probe 9: a Triton candidate through eval --remote is evaluated, not refused.
  ASSERT_TRUE(write_file_atomic(path("kernel.py"), "import triton\n# wgmma FAKE_SPEEDUP=1.2\n"));
  auto triton = run_cli({"eval", path("kernel.py"), "--task", k_remote_task, "--remote", url, "--json"}, 60);
  EXPECT_EQ(triton.exit_code, 0) << triton.err;
  EXPECT_EQ(ordered_json::parse(triton.out, nullptr, false).value("status", ""), "PASSED") << triton.out;
  // A submission the service refuses is bad input: exit 2.
  ASSERT_TRUE(write_file_atomic(path("huge.cu"), "// " + std::string(600 << 10, 'x') + "\n"));
  auto huge = run_cli({"eval", path("huge.cu"), "--task", k_remote_task, "--remote", url}, 60);
  EXPECT_EQ(huge.exit_code, 2) << huge.err;
  EXPECT_EQ(first_line(huge.err), "ptxbench: " + path("huge.cu") +
                                      ": the service refused the submission: HTTP 400: solution.sources: 614404 bytes in "
                                      "all, more than the limit of 524288 bytes");
}

TEST_F(ServiceCli, AnExplicitTargetTheGpuHereCannotServeIsRefused) {
  expect_cases({
      {{"serve", "--listen", "127.0.0.1:0", "--service-dir", path("s1"), "--evaluator", "fake", "--fake-gpu-name", k_h100,
        "--target", "h200"},
       2, "ptxbench: --target h200: GPU 0 here is NVIDIA H100 80GB HBM3 (target h100); it cannot serve h200 jobs"},
      {{"serve", "--listen", "127.0.0.1:0", "--service-dir", path("s2"), "--evaluator", "fake", "--target", "a100"}, 2,
       "ptxbench: --target: unknown target 'a100' (did you mean 'h100'?)"},
  });
  // The real probe path: the GPU worker's probe (`ptxbench-harness --environment`), here the stand-in
  // harness that reports "FAKE H200".
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "python3 not found: the stand-in harness cannot run";
  expect_cases({{{"serve", "--listen", "127.0.0.1:0", "--service-dir", path("s3"), "--cpu-workers", "0", "--devices", "0",
                  "--harness", (testing::repo_root() / "tests/eval/fake_harness/fake_harness.py").string(), "--target", "h100"},
                 2, "ptxbench: --target h100: GPU 0 here is FAKE H200 (target h200); it cannot serve h100 jobs"}});
  EXPECT_FALSE(fs::exists(path("s1")));
}

// Probe 10: a serve started while its PostgreSQL server is down waits for it, as workers do.
TEST_F(ServiceCli, ServeWaitsForADatabaseThatIsDown) {
  auto r = run_cli({"serve", "--listen", "127.0.0.1:0", "--queue", "postgresql://ptxbench@127.0.0.1:1/nowhere",
                    "--no-local-workers"},
                   4);
  EXPECT_TRUE(r.timed_out) << "exited instead of waiting: exit " << r.exit_code << "\n" << r.err;
  const std::string line = first_line(r.err);
  EXPECT_EQ(line.rfind("ptxbench serve: ", 0), 0u) << line;
  const std::string tail = " (retrying until the database answers; Ctrl-C to stop)";
  ASSERT_GE(line.size(), tail.size());
  EXPECT_EQ(line.substr(line.size() - tail.size()), tail) << line;
}

// Probe 3: an unreachable server is said to be unreachable, at once, and retried.
TEST_F(ServiceCli, AnUnreachableServerIsReportedWhileItIsRetried) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_cli({"eval", (testing::fixtures_dir() / "kernels" / "naive_gemm_sm90a.cu").string(), "--task", k_remote_task, "--remote", "http://127.0.0.1:1"}, 4);
  EXPECT_TRUE(r.timed_out) << "it keeps retrying (up to 15 minutes)";
  EXPECT_EQ(first_line(r.err),
            "ptxbench: cannot reach http://127.0.0.1:1: connection refused or no route; retrying for up to 900 s more");
  (void)t0;
}

}  // namespace
}  // namespace ptxbench
