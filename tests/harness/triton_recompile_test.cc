// The harness's side of the trusted recompile (gpu/harness/triton_recompile.h) against a stand-in
// script (fake_recompile/fake_recompile.py): each cubin's hash is computed from the file, never taken
// from the script's answer; a source problem is the candidate's, a crash is infrastructure; results
// are cached by their inputs, a source problem is not.
#include <gtest/gtest.h>

#include <fstream>

#include "core/file_io.h"
#include "core/sha256.h"
#include "gpu/harness/triton_recompile.h"
#include "test_support.h"

namespace ptxbench::gpu {
namespace {

namespace fs = std::filesystem;

struct recompile_fixture {
  fs::path dir = testing::make_temp_dir("triton-recompile");
  recompile_request q;
  explicit recompile_fixture(const std::string& source) {
    std::ofstream(dir / "kernel.py") << source;
    q.python = "/usr/bin/python3";
    q.script = testing::repo_root() / "tests/harness/fake_recompile/fake_recompile.py";
    q.source = dir / "kernel.py";
    q.cache_dir = dir / "cache";
    q.kernels = {ordered_json{{"id", "cap1"}, {"jit", "gemm_kernel"}, {"specialization_data", "{}"}}};
    q.timeout_s = 60;
  }
  ~recompile_fixture() { fs::remove_all(dir); }
  int runs() const {
    int n = 0;
    for (auto& e : fs::recursive_directory_iterator(q.cache_dir))
      if (e.path().filename() == "runs.log") {
        std::ifstream in(e.path());
        std::string line;
        while (std::getline(in, line)) ++n;
      }
    return n;
  }
};

TEST(TritonRecompile, HashesTheCubinItselfAndCachesTheResult) {
  recompile_fixture f("import triton\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_TRUE(r) << r.err().message;
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_EQ(r->kernels[0].id, "cap1");
  EXPECT_EQ(r->kernels[0].sha256, sha256_hex("gemm_kernel")) << "the script's own claim is ignored";
  EXPECT_EQ(r->triton_version, "9.9-fake");
  EXPECT_FALSE(r->cache_hit);
  auto again = recompile_triton_kernels(f.q);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->kernels[0].sha256, r->kernels[0].sha256);
  EXPECT_EQ(f.runs(), 1);
  f.q.kernels[0]["specialization_data"] = "{\"options\": {}}";
  ASSERT_TRUE(recompile_triton_kernels(f.q));
  EXPECT_EQ(f.runs(), 2) << "another compile record is another key";
}

TEST(TritonRecompile, ASourceProblemIsTheCandidatesAndIsNotCached) {
  recompile_fixture f("SOURCE_PROBLEM\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_TRUE(r->kernels.empty());
  EXPECT_NE(r->source_problem.find("does not compile from kernel.py alone"), std::string::npos) << r->source_problem;
  ASSERT_TRUE(recompile_triton_kernels(f.q));
  EXPECT_EQ(f.runs(), 2);
}

TEST(TritonRecompile, ACrashIsInfrastructure) {
  recompile_fixture f("CRASH\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("exited with code 3"), std::string::npos) << r.err().message;
}

TEST(TritonRecompile, ACubinOutsideItsFolderIsRefused) {
  recompile_fixture f("WRONG_NAME\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("outside its folder"), std::string::npos) << r.err().message;
}

}  // namespace
}  // namespace ptxbench::gpu
