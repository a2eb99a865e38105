#include <chrono>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "build/build_stage.h"
#include "core/file_io.h"
#include "core/file_lock.h"
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

// Identical builds at once: the second waits for the first's key lock and takes its entry, so nvcc
// runs once (exactly one result is a fresh build, the other a cache hit).
TEST_F(BuildStage, IdenticalConcurrentBuildsRunNvccOnce) {
  const std::string code = "__global__ void once(float* x) { x[threadIdx.x] = 3.0f; }\n";
  result<build_result> a = make_error("not run"), b = make_error("not run");
  std::thread t1([&] { a = build_candidate(request(code), m_tc); });
  std::thread t2([&] { b = build_candidate(request(code), m_tc); });
  t1.join();
  t2.join();
  ASSERT_TRUE(a.ok()) << a.err().message;
  ASSERT_TRUE(b.ok()) << b.err().message;
  EXPECT_EQ(int(a->cache_hit) + int(b->cache_hit), 1) << "nvcc ran " << 2 - int(a->cache_hit) - int(b->cache_hit)
                                                      << " times";
  EXPECT_EQ(a->shared_object, b->shared_object);
  EXPECT_TRUE(std::filesystem::exists(m_cache / "locks" / (a->key + ".lock")));
}

// A truncated artifact in the cache (a full disk, a killed copy) no longer fails every later check
// with a malformed ELF file: its sha256 no longer matches meta.json, so it is rebuilt.
TEST_F(BuildStage, ATruncatedCachedArtifactIsRebuilt) {
  auto first = build_candidate(request(k_kernel), m_tc);
  ASSERT_TRUE(first.ok()) << first.err().message;
  const auto so = first->shared_object;
  auto whole = read_file(so, 1u << 30);
  ASSERT_TRUE(whole.ok());
  std::filesystem::resize_file(so, whole->size() / 2);
  auto again = build_candidate(request(k_kernel), m_tc);
  ASSERT_TRUE(again.ok()) << again.err().message;
  EXPECT_FALSE(again->cache_hit) << "a damaged entry was served";
  EXPECT_EQ(again->outcome, build_outcome::built);
  auto rebuilt = read_file(again->shared_object, 1u << 30);
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_EQ(rebuilt->size(), whole->size());
  auto third = build_candidate(request(k_kernel), m_tc);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->cache_hit);
  // A changed cubin is caught the same way.
  ASSERT_FALSE(third->cubins.empty());
  ASSERT_TRUE(write_file_atomic(third->cubins[0], "not a cubin").ok());
  auto fourth = build_candidate(request(k_kernel), m_tc);
  ASSERT_TRUE(fourth.ok());
  EXPECT_FALSE(fourth->cache_hit);
}

// Killed builds leave tmp/build-* folders: an old one nobody holds is removed on the next miss; an
// old one whose .lock a live process holds, and a young one, are kept.
TEST_F(BuildStage, StaleBuildFoldersAreRemovedAndLiveOnesKept) {
  namespace fs = std::filesystem;
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  auto make = [&](const std::string& name, bool age) {
    fs::path dir = m_cache / "tmp" / name;
    fs::create_directories(dir / "src");
    EXPECT_TRUE(write_file_atomic(dir / "src" / "kernel.cu", k_kernel).ok());
    if (age) fs::last_write_time(dir, old_time);
    return dir;
  };
  fs::path stale = make("build-killed", true);
  fs::path live = make("build-live", true);
  fs::path young = make("build-young", false);
  fs::path other = make("harness-x", true);
  auto acquired = file_lock::acquire(live / ".lock", 0);  // this process plays the live builder
  ASSERT_TRUE(acquired);
  std::optional<file_lock> held = std::move(*acquired);
  fs::last_write_time(live, old_time);
  auto r = build_candidate(request("__global__ void fresh(float* x) { x[0] = 4.0f; }\n"), m_tc);
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_FALSE(fs::exists(stale)) << "a killed build's folder stayed";
  EXPECT_TRUE(fs::exists(live)) << "a live build's folder was removed";
  EXPECT_TRUE(fs::exists(young));
  EXPECT_TRUE(fs::exists(other)) << "only build-* folders are the build stage's";
  held.reset();
  auto removed = clean_stale_build_folders(m_cache, std::chrono::minutes(10));
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], live);
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
