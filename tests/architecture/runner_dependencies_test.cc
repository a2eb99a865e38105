// The candidate runner is the one process that executes untrusted code. It must carry nothing it
// does not need: no HTTP client, no TLS/crypto library, no regex engine, no vendor math library —
// neither as its own DT_NEEDED entries nor pulled in by them (what `ldd` resolves).
#include <gtest/gtest.h>

#include <string>

#include "build/elf_reader.h"
#include "core/process.h"

namespace ptxbench {
namespace {

const char* const k_forbidden[] = {"libcurl", "libssl", "libcrypto", "libpcre2", "libcublas", "libcudnn",
                                   "libnghttp", "libssh", "libsqlite3", "libpq"};

TEST(RunnerDependencies, DirectDependenciesAreOnlyCudaSeccompAndTheCRuntime) {
  auto elf = build::read_elf_dynamic(PTXBENCH_RUNNER);
  ASSERT_TRUE(elf.ok()) << elf.err().message;
  ASSERT_FALSE(elf->needed.empty());
  for (const auto& lib : elf->needed)
    for (const char* bad : k_forbidden) EXPECT_EQ(lib.find(bad), std::string::npos) << "the runner needs " << lib;
}

TEST(RunnerDependencies, NothingItLoadsPullsInAForbiddenLibrary) {
  auto ldd = run_process({.argv = {"ldd", PTXBENCH_RUNNER}, .timeout_s = 60, .merge_stderr = true});
  if (!ldd.succeeded()) GTEST_SKIP() << "ldd could not read the runner here: " << ldd.start_error << ldd.out;
  for (const char* bad : k_forbidden) EXPECT_EQ(ldd.out.find(bad), std::string::npos) << bad << " in\n" << ldd.out;
}

}  // namespace
}  // namespace ptxbench
