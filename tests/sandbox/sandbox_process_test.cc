// No new programs or processes (threads work), no tracing or signals to other processes, and the
// violation handler cannot be replaced.
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/violation_reporter.h"
#include "sandbox_test_support.h"

namespace ptxbench::sandbox::testing {
namespace {

char* const k_argv[] = {const_cast<char*>("/bin/true"), nullptr};
char* const k_envp[] = {nullptr};

void expect_trapped(const child_result& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, violation_exit_code) << r.output;
  EXPECT_EQ(r.output, "ptxbench-sandbox: attempted " + what + "\n");
  EXPECT_EQ(find_violation(r.output).value_or(""), "sandbox: attempted " + what);
}

TEST(SandboxProcess, ExecveThroughLibcIsTrapped) {
  sandbox_dirs d;
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::execve("/bin/true", k_argv, k_envp)); }),
                 "execve");
}

TEST(SandboxProcess, ExecveThroughARawSystemCallIsTrapped) {
  sandbox_dirs d;
  expect_trapped(run_sandboxed(test_policy(d),
                               [&](int fd) { report(fd, ::syscall(SYS_execve, "/bin/true", k_argv, k_envp)); }),
                 "execve");
}

TEST(SandboxProcess, ExecveatIsTrapped) {
  sandbox_dirs d;
  expect_trapped(run_sandboxed(test_policy(d),
                               [&](int fd) {
                                 report(fd, ::syscall(SYS_execveat, AT_FDCWD, "/bin/true", k_argv, k_envp, 0));
                               }),
                 "execveat");
}

TEST(SandboxProcess, ExecveThroughTheI386EntryKillsTheProcess) {
  // int 0x80 uses the 32-bit table, which the native-only filter does not know: the process dies
  // (SIGSYS from the bad-architecture action, or SIGSEGV where the kernel lacks 32-bit support).
#if defined(__x86_64__)
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    long rc;
    asm volatile("int $0x80" : "=a"(rc) : "a"(11), "b"(0), "c"(0), "d"(0) : "memory");  // i386 execve
    report(fd, rc);
  });
  EXPECT_TRUE(r.signal == SIGSYS || r.signal == SIGSEGV) << "exit " << r.exit_code << " signal " << r.signal;
#else
  GTEST_SKIP() << "x86_64 only";
#endif
}

TEST(SandboxProcess, ForkIsTrapped) {
  sandbox_dirs d;
  // glibc's fork() is clone(SIGCHLD): a clone without CLONE_THREAD.
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::fork()); }), "clone (a new process)");
}

TEST(SandboxProcess, RawForkAndVforkAreTrapped) {
  sandbox_dirs d;
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::syscall(SYS_fork)); }), "fork");
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::syscall(SYS_vfork)); }), "vfork");
}

TEST(SandboxProcess, CloneWithoutCloneThreadIsTrapped) {
  sandbox_dirs d;
  // High garbage bits do not help: the kernel reads the low 32 bits, so does the rule.
  expect_trapped(run_sandboxed(test_policy(d),
                               [&](int fd) { report(fd, ::syscall(SYS_clone, 0xff00000000ull | SIGCHLD, 0, 0, 0, 0)); }),
                 "clone (a new process)");
}

TEST(SandboxProcess, CloneWithANewNamespaceIsTrapped) {
  sandbox_dirs d;
  expect_trapped(run_sandboxed(test_policy(d),
                               [&](int fd) {
                                 report(fd, ::syscall(SYS_clone, CLONE_THREAD | CLONE_VM | CLONE_SIGHAND | CLONE_NEWNET,
                                                      0, 0, 0, 0));
                               }),
                 "clone (a new namespace)");
}

TEST(SandboxProcess, Clone3AnswersEnosysSoGlibcFallsBack) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    clone_args args{};
    args.exit_signal = SIGCHLD;
    report(fd, ::syscall(SYS_clone3, &args, sizeof args));
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, errno_line(ENOSYS));
}

TEST(SandboxProcess, ThreadsStillWork) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    std::atomic<int> ran{0};
    pthread_t t[4];
    bool ok = true;
    for (auto& th : t)
      ok = ok && ::pthread_create(
                     &th, nullptr, [](void* arg) -> void* {
                       static_cast<std::atomic<int>*>(arg)->fetch_add(1);
                       return nullptr;
                     },
                     &ran) == 0;
    for (auto& th : t) ::pthread_join(th, nullptr);
    std::string line = ok && ran == 4 ? "threads ok\n" : "threads failed\n";
    (void)!::write(fd, line.data(), line.size());
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "threads ok\n");
}

TEST(SandboxProcess, PtraceOfTheParentIsTrapped) {
  sandbox_dirs d;
  pid_t parent = ::getpid();
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::ptrace(PTRACE_ATTACH, parent, 0, 0)); }),
                 "ptrace");
}

TEST(SandboxProcess, ReadingAnotherProcessMemoryIsTrapped) {
  sandbox_dirs d;
  pid_t parent = ::getpid();
  expect_trapped(run_sandboxed(test_policy(d),
                               [&](int fd) { report(fd, ::syscall(SYS_process_vm_readv, parent, 0, 0, 0, 0, 0)); }),
                 "process_vm_readv");
}

TEST(SandboxProcess, SignallingTheParentIsTrapped) {
  sandbox_dirs d;
  pid_t parent = ::getpid();
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::kill(parent, SIGTERM)); }),
                 "kill (pid " + std::to_string(parent) + ")");
  // Signal 0 only checks permission: were the filter broken, these could not harm the machine
  // (kill(-1, SIGKILL) as root would end every process of the host).
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::kill(0, 0)); }), "kill (pid 0)");
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::kill(-1, 0)); }), "kill (pid -1)");
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::syscall(SYS_tgkill, parent, parent, SIGTERM)); }),
                 "tgkill (pid " + std::to_string(parent) + ")");
}

TEST(SandboxProcess, SignalsToItselfStillWork) {
  // abort() and raise() signal the process itself.
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    ::signal(SIGUSR1, SIG_IGN);
    report(fd, ::raise(SIGUSR1));
    report(fd, ::kill(::getpid(), 0));
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "ok\nok\n");
}

TEST(SandboxProcess, ReplacingTheViolationHandlerIsTrapped) {
  sandbox_dirs d;
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::signal(SIGSYS, SIG_IGN) == SIG_ERR ? -1 : 0); }),
                 "rt_sigaction(SIGSYS)");
}

TEST(SandboxProcess, QueryingTheViolationHandlerWorks) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    struct sigaction old {};
    report(fd, ::sigaction(SIGSYS, nullptr, &old));
  });
  EXPECT_EQ(r.output, "ok\n");
}

TEST(SandboxProcess, BlockingSigsysStillEndsTheProcess) {
  // The handler cannot run with SIGSYS blocked; the kernel then kills with SIGSYS (the harness
  // reports that as a sandbox violation too).
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSYS);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    report(fd, ::syscall(SYS_execve, "/bin/true", k_argv, k_envp));
  });
  EXPECT_EQ(r.signal, SIGSYS);
  EXPECT_EQ(r.output, "");
}

TEST(SandboxProcess, MountsAndNamespacesAreTrapped) {
  sandbox_dirs d;
  // A file system type that does not exist: were the filter broken, the mount would only fail.
  auto target = d.root / "mnt";
  expect_trapped(run_sandboxed(test_policy(d),
                               [&](int fd) {
                                 report(fd, ::mount("none", target.c_str(), "ptxbench-no-such-fs", 0, nullptr));
                               }),
                 "mount");
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::unshare(CLONE_NEWUSER)); }), "unshare");
}

TEST(SandboxProcess, IoUringIsTrapped) {
  sandbox_dirs d;
  expect_trapped(run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::syscall(SYS_io_uring_setup, 8, nullptr)); }),
                 "io_uring_setup");
}

TEST(SandboxProcess, OwnFiltersAreRefused) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::syscall(SYS_seccomp, 1, 0, nullptr)); });
  EXPECT_EQ(r.output, errno_line(EPERM));
}

TEST(SandboxProcess, CapabilitiesAreDroppedForRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: nothing to drop";
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    std::ifstream status("/proc/thread-self/status");
    std::string line, out;
    while (std::getline(status, line))
      if (line.rfind("CapEff:", 0) == 0 || line.rfind("CapBnd:", 0) == 0) out += line + "\n";
    (void)!::write(fd, out.data(), out.size());
  });
  EXPECT_EQ(r.output, "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n");
}

}  // namespace
}  // namespace ptxbench::sandbox::testing

namespace ptxbench::sandbox::testing {
namespace {

TEST(SandboxProcess, UnderAToolReplacingTheHandlerFailsButTheHandlerStays) {
  sandbox_dirs d;
  auto p = test_policy(d);
  p.tool = tool_mode::nsight_compute;
  auto r = run_sandboxed(p, [&](int fd) {
    report(fd, ::signal(SIGSYS, SIG_IGN) == SIG_ERR ? -1 : 0);
    report(fd, ::syscall(SYS_execve, "/bin/true", k_argv, k_envp));  // still trapped, and still reported
  });
  EXPECT_EQ(r.output, errno_line(EPERM) + "ptxbench-sandbox: attempted execve\n");
  EXPECT_EQ(r.exit_code, violation_exit_code);
}

TEST(SandboxProcess, TheRunnersOwnBinaryIsReadable) {
  sandbox_dirs d;
  auto p = test_policy(d);
  p.read_paths = default_read_paths({}, {});
  auto r = run_sandboxed(p, [&](int fd) { report(fd, ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC)); });
  EXPECT_EQ(r.output, "ok\n");
}

}  // namespace
}  // namespace ptxbench::sandbox::testing
