// Writes only under scratch; reads only under the read paths (Landlock). The tests that need
// Landlock skip visibly, with the kernel's reason, where it is unavailable.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/violation_reporter.h"
#include "sandbox_test_support.h"

namespace ptxbench::sandbox::testing {
namespace fs = std::filesystem;
namespace {

#define REQUIRE_LANDLOCK()                                                                  \
  do {                                                                                      \
    std::string why;                                                                        \
    if (!landlock_available(&why)) GTEST_SKIP() << "Landlock unavailable on this kernel: " << why; \
  } while (0)

long create_and_write(const fs::path& p) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  long rc = ::write(fd, "x", 1);
  ::close(fd);
  return rc;
}

std::string unique_name() {
  std::random_device rd;
  return "ptxbench-sandbox-probe-" + std::to_string(rd());
}

TEST(SandboxFilesystem, WritingToHomeIsRefused) {
  REQUIRE_LANDLOCK();
  sandbox_dirs d;
  const char* home = std::getenv("HOME");
  ASSERT_NE(home, nullptr);
  fs::path target = fs::path(home) / unique_name();
  auto r = run_sandboxed(test_policy(d), [&](int fd) { report(fd, create_and_write(target)); });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, errno_line(EACCES));
  EXPECT_FALSE(fs::exists(target));
}

TEST(SandboxFilesystem, WritingToTheBuildCacheIsRefused) {
  REQUIRE_LANDLOCK();
  sandbox_dirs d;
  // An existing artifact (what other candidates are loaded from) and a new file.
  fs::path existing = d.cache / "other_candidate.so";
  std::ofstream(existing) << "original";
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    report(fd, create_and_write(d.cache / "planted.so"));
    report(fd, ::open(existing.c_str(), O_WRONLY | O_CLOEXEC));
    report(fd, ::truncate(existing.c_str(), 0));
    report(fd, ::unlink(existing.c_str()));
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, errno_line(EACCES) + errno_line(EACCES) + errno_line(EACCES) + errno_line(EACCES));
  EXPECT_FALSE(fs::exists(d.cache / "planted.so"));
  std::ifstream in(existing);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "original");
}

TEST(SandboxFilesystem, WritingToTheRunDirectoryIsRefused) {
  REQUIRE_LANDLOCK();
  sandbox_dirs d;
  fs::path verdict = d.run_dir / "verdict.json";
  std::ofstream(verdict) << "{}";
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    report(fd, create_and_write(d.run_dir / "trajectory.json"));
    report(fd, ::open(verdict.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    report(fd, ::rename(verdict.c_str(), (d.scratch / "stolen.json").c_str()));
    report(fd, ::mkdir((d.run_dir / "sub").c_str(), 0755));
  });
  EXPECT_EQ(r.exit_code, 0);
  // rename out of the run dir needs "remove" there: EACCES; Landlock answers EXDEV for a
  // cross-folder rename it cannot allow through REFER on ABI >= 2.
  std::string rename_line = r.output.substr(2 * errno_line(EACCES).size(), errno_line(EXDEV).size());
  EXPECT_TRUE(rename_line == errno_line(EACCES) || rename_line == errno_line(EXDEV)) << r.output;
  EXPECT_EQ(r.output.substr(0, 2 * errno_line(EACCES).size()), errno_line(EACCES) + errno_line(EACCES));
  EXPECT_EQ(r.output.substr(r.output.size() - errno_line(EACCES).size()), errno_line(EACCES));
  EXPECT_TRUE(fs::exists(verdict));
  EXPECT_FALSE(fs::exists(d.run_dir / "trajectory.json"));
}

TEST(SandboxFilesystem, WritingToTmpAtLargeIsRefused) {
  REQUIRE_LANDLOCK();
  sandbox_dirs d;
  fs::path target = fs::temp_directory_path() / unique_name();
  auto r = run_sandboxed(test_policy(d), [&](int fd) { report(fd, create_and_write(target)); });
  EXPECT_EQ(r.output, errno_line(EACCES));
  EXPECT_FALSE(fs::exists(target));
}

TEST(SandboxFilesystem, ScratchIsFullyWritable) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    report(fd, create_and_write(d.scratch / "a.bin"));
    report(fd, ::mkdir((d.scratch / "sub").c_str(), 0755));
    report(fd, ::rename((d.scratch / "a.bin").c_str(), (d.scratch / "sub" / "b.bin").c_str()));
    report(fd, ::truncate((d.scratch / "sub" / "b.bin").c_str(), 0));
    report(fd, create_and_write(d.scratch / "c.bin"));
    report(fd, ::unlink((d.scratch / "c.bin").c_str()));
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "ok\nok\nok\nok\nok\nok\n");
  EXPECT_TRUE(fs::exists(d.scratch / "sub" / "b.bin"));
}

TEST(SandboxFilesystem, ReadingOutsideTheReadListIsRefused) {
  REQUIRE_LANDLOCK();
  sandbox_dirs d;
  std::ofstream(d.unreadable / "secret.txt") << "secret";
  std::ofstream(d.readable / "public.txt") << "public";
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    report(fd, ::open((d.unreadable / "secret.txt").c_str(), O_RDONLY | O_CLOEXEC));
    report(fd, ::open((d.readable / "public.txt").c_str(), O_RDONLY | O_CLOEXEC));
    report(fd, ::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
    report(fd, ::open("/proc/1/status", O_RDONLY | O_CLOEXEC));  // another process's /proc entry
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, errno_line(EACCES) + "ok\nok\n" + errno_line(EACCES));
}

TEST(SandboxFilesystem, PermissionChangesFailWithEperm) {
  // Landlock governs writes, not metadata; the filter refuses chmod/chown outright.
  sandbox_dirs d;
  fs::path f = d.cache / "artifact.so";
  std::ofstream(f) << "x";
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    report(fd, ::chmod(f.c_str(), 0777));
    report(fd, ::chown(f.c_str(), 0, 0));
  });
  EXPECT_EQ(r.output, errno_line(EPERM) + errno_line(EPERM));
  EXPECT_EQ(fs::status(f).permissions() & fs::perms::others_write, fs::perms::none);
}

TEST(SandboxFilesystem, ExceedingTheFileSizeLimitIsReported) {
  sandbox_dirs d;
  auto p = test_policy(d);
  p.limits.file_size_bytes = 4096;
  auto r = run_sandboxed(p, [&](int fd) {
    int f = ::open((d.scratch / "big.bin").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    std::string block(8192, 'x');
    report(fd, ::write(f, block.data(), block.size()));  // short write of 4096 bytes: fine
    report(fd, ::write(f, block.data(), block.size()));  // at the limit: SIGXFSZ
  });
  EXPECT_EQ(r.exit_code, violation_exit_code);
  EXPECT_EQ(r.output, "ok\nptxbench-sandbox: exceeded the file size limit (4096 bytes)\n");
  EXPECT_EQ(find_violation(r.output).value_or(""), "sandbox: exceeded the file size limit (4096 bytes)");
}

TEST(SandboxFilesystem, CpuTimeAndDataLimitsAreSetWhereThePolicyAsks) {
  sandbox_dirs d;
  auto p = test_policy(d);
  p.limits.cpu_seconds = 1;
  p.limits.data_bytes = 256ull << 20;
  auto r = run_sandboxed(p, [&](int fd) {
    rlimit cpu{}, data{};
    ::getrlimit(RLIMIT_CPU, &cpu);
    ::getrlimit(RLIMIT_DATA, &data);
    std::string line = "cpu " + std::to_string(cpu.rlim_cur) + " " + std::to_string(cpu.rlim_max) + ", data " +
                       std::to_string(data.rlim_cur >> 20) + " MiB\n";
    (void)!::write(fd, line.data(), line.size());
    // More writable memory than the limit: refused (ENOMEM), not granted.
    void* big = ::mmap(nullptr, 512ull << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    report(fd, big == MAP_FAILED ? -1 : 0);
    // CPU time beyond the soft limit ends the process with SIGXCPU.
    volatile uint64_t spins = 0;
    while (true) spins = spins + 1;
  });
  EXPECT_EQ(r.output, "cpu 1 6, data 256 MiB\n" + errno_line(ENOMEM));
  EXPECT_EQ(r.signal, SIGXCPU);
}

TEST(SandboxFilesystem, NoCpuOrDataLimitUnlessAsked) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    rlimit cpu{}, data{};
    ::getrlimit(RLIMIT_CPU, &cpu);
    ::getrlimit(RLIMIT_DATA, &data);
    report(fd, cpu.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY ? 0 : -1);
  });
  EXPECT_EQ(r.output, "ok\n");
}

TEST(SandboxFilesystem, LimitsCannotBeRaisedAgain) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    rlimit rl{RLIM_INFINITY, RLIM_INFINITY};
    report(fd, ::setrlimit(RLIMIT_FSIZE, &rl));
    rlimit cur{};
    report(fd, ::getrlimit(RLIMIT_CORE, &cur));
    std::string core = "core " + std::to_string(cur.rlim_max) + "\n";
    (void)!::write(fd, core.data(), core.size());
  });
  EXPECT_EQ(r.output, errno_line(EPERM) + "ok\ncore 0\n");
}

}  // namespace
}  // namespace ptxbench::sandbox::testing
