#include <thread>

#include <gtest/gtest.h>

#include "build/build_stage.h"
#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::build {
namespace {

// These tests compile with nvcc; they skip (visibly) where the CUDA toolkit is absent.
class BuildStage : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tc = find_toolchain(PTXBENCH_CUDA_ROOT_FOR_TESTS);
    if (!tc) GTEST_SKIP() << "needs nvcc: " << tc.err().message;
    m_tc = *tc;
    m_cache = testing::make_temp_dir("cache");
  }
  void TearDown() override { std::filesystem::remove_all(m_cache); }

  build_request request(const std::string& code) {
    build_request r;
    r.sources = {{"kernel.cu", code}};
    r.gencode = "arch=compute_90a,code=sm_90a";
    r.include_dirs = {testing::repo_root() / "include"};
    r.cache_dir = m_cache;
    return r;
  }

  toolchain m_tc;
  std::filesystem::path m_cache;
};

const char* k_kernel = "__global__ void k(float* x) { x[threadIdx.x] = 2.0f; }\n";

TEST_F(BuildStage, BuildsOnceThenHitsTheCache) {
  auto first = build_candidate(request(k_kernel), m_tc);
  ASSERT_TRUE(first.ok()) << first.err().message;
  EXPECT_EQ(first->outcome, build_outcome::built);
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(std::filesystem::exists(first->shared_object));
  ASSERT_FALSE(first->cubins.empty());
  ASSERT_EQ(first->log.kernels.size(), 1u);
  EXPECT_EQ(first->log.kernels[0].arch, "sm_90a");
  auto second = build_candidate(request(k_kernel), m_tc);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->key, first->key);
  EXPECT_EQ(second->log.text, first->log.text);
}

TEST_F(BuildStage, DifferentSourceOrArchIsADifferentKey) {
  auto a = build_candidate(request(k_kernel), m_tc);
  auto r = request(k_kernel);
  r.gencode = "arch=compute_100a,code=sm_100a";
  auto b = build_candidate(r, m_tc);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->key, b->key);
  EXPECT_EQ(b->log.kernels.at(0).arch, "sm_100a");
}

TEST_F(BuildStage, CompileErrorKeepsTheLogVerbatim) {
  auto r = build_candidate(request("__global__ void k(float* x) { x[0] = y; }\n"), m_tc);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, build_outcome::compile_error);
  EXPECT_NE(r->log.text.find("kernel.cu(1): error: identifier \"y\" is undefined"), std::string::npos) << r->log.text;
  ASSERT_FALSE(r->log.errors.empty());
}

TEST_F(BuildStage, ConcurrentBuildsOfTheSameSourceAgree) {
  result<build_result> a = make_error("not run"), b = make_error("not run");
  std::thread t1([&] { a = build_candidate(request(k_kernel), m_tc); });
  std::thread t2([&] { b = build_candidate(request(k_kernel), m_tc); });
  t1.join();
  t2.join();
  ASSERT_TRUE(a.ok()) << a.err().message;
  ASSERT_TRUE(b.ok()) << b.err().message;
  EXPECT_EQ(a->key, b->key);
  EXPECT_EQ(a->shared_object, b->shared_object);
  EXPECT_TRUE(std::filesystem::exists(a->shared_object));
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(m_cache / "builds")) { (void)e; ++entries; }
  EXPECT_EQ(entries, 1);
}

TEST_F(BuildStage, TimeoutIsReportedAndNotCached) {
  auto r = request(k_kernel);
  r.timeout_s = 0.05;
  auto res = build_candidate(r, m_tc);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->outcome, build_outcome::timeout);
  EXPECT_NE(res->log.text.find("timed out"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(m_cache / "builds" / res->key));
}

}  // namespace
}  // namespace ptxbench::build
