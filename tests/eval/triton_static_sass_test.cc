// The static SASS stage of a Triton candidate (eval/static_stage.h, run_static_sass_on_cubins) on a
// machine without cuobjdump: a stand-in cuobjdump in a fake CUDA root prints a real sm_90a listing
// (tests/fixtures/sass) for each "cubin", so the stage's own logic is exercised: every cubin's
// families add up, the CPU stages' deferred record is replaced (one static_sass record), no cubins
// leave it deferred with the reason, a disassembler that fails is an error that names the cubin.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "core/process.h"
#include "eval/static_stage.h"
#include "test_support.h"

namespace ptxbench::eval {
namespace {
namespace fs = std::filesystem;

class TritonStaticSass : public ::testing::Test {
 protected:
  void SetUp() override {
    // PATH comes first in the disassembler search: a real cuobjdump would be asked about fake cubins.
    if (find_executable("cuobjdump")) GTEST_SKIP() << "cuobjdump on PATH (a GPU host): this test needs the stand-in";
    root = fs::temp_directory_path() / ("ptxbench-triton-sass-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "cuda" / "bin");
    target.name = "h200";
    target.arch = "sm_90a";
    target.required_families = {"GMMA", "TMA"};
    v.stages.push_back({stage_id::static_sass, stage_outcome::deferred, 0, "deferred to the GPU", nullptr});
  }
  void TearDown() override { fs::remove_all(root); }

  // cuobjdump -sass FILE: prints FILE (our "cubins" hold a listing), or fails when asked to.
  void write_tool(bool fail) {
    fs::path tool = root / "cuda" / "bin" / "cuobjdump";
    std::ofstream(tool) << (fail ? "#!/bin/sh\necho 'cuobjdump fatal : not a cubin' >&2\nexit 1\n"
                                 : "#!/bin/sh\nfor a; do last=$a; done\ncat \"$last\"\n");
    ::chmod(tool.c_str(), 0755);
  }
  // A "cubin" holding the fixture listing; rename != "" renames its functions (another kernel).
  fs::path cubin(const std::string& name, const std::string& rename = "") {
    fs::path p = root / name;
    std::ifstream in(ptxbench::testing::fixtures_dir() / "sass" / "probe_sm90a.cuobjdump.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::size_t at = 0; !rename.empty() && (at = text.find("Function : ", at)) != std::string::npos;)
      text.insert(at += 11, rename);
    std::ofstream(p) << text;
    return p;
  }
  int static_records() const {
    int n = 0;
    for (const auto& s : v.stages) n += s.id == stage_id::static_sass;
    return n;
  }

  fs::path root;
  target_info target;
  verdict v;
};

TEST_F(TritonStaticSass, EveryCubinIsDisassembledAndTheDeferredRecordReplaced) {
  write_tool(false);
  auto one = run_static_sass_on_cubins({cubin("000-a.cubin")}, target, root / "cuda", v);
  ASSERT_TRUE(one) << one.err().message;
  ASSERT_TRUE(v.targets.static_counts);
  const auto single = *v.targets.static_counts;
  ASSERT_GT(single.at("GMMA"), 0);

  verdict two_cubins;
  two_cubins.stages = v.stages;
  v = two_cubins;
  auto two = run_static_sass_on_cubins({cubin("001-a.cubin"), cubin("002-b.cubin", "other_")}, target, root / "cuda", v);
  ASSERT_TRUE(two) << two.err().message;
  EXPECT_EQ(v.targets.static_counts->at("GMMA"), 2 * single.at("GMMA"));  // the cubins' families add up
  EXPECT_EQ(static_records(), 1);
  const auto& s = v.stages.front();
  EXPECT_EQ(s.outcome, stage_outcome::passed);
  EXPECT_NE(s.summary.find("Triton's cubins"), std::string::npos) << s.summary;
  EXPECT_EQ(s.details["cubins"].size(), 2u);
  EXPECT_FALSE(v.targets.static_per_kernel.empty());
}

TEST_F(TritonStaticSass, TheSameCodeInTwoCubinsCountsOnce) {
  // The parser drops identical functions (same name, arch and instructions): a kernel Triton wrote
  // twice is one kernel.
  write_tool(false);
  ASSERT_TRUE(run_static_sass_on_cubins({cubin("000-a.cubin")}, target, root / "cuda", v));
  const auto single = *v.targets.static_counts;
  ASSERT_TRUE(run_static_sass_on_cubins({cubin("001-a.cubin"), cubin("002-a.cubin")}, target, root / "cuda", v));
  EXPECT_EQ(*v.targets.static_counts, single);
}

TEST_F(TritonStaticSass, NoCubinLeavesTheStageDeferredWithTheReason) {
  write_tool(false);
  auto st = run_static_sass_on_cubins({}, target, root / "cuda", v);
  ASSERT_TRUE(st);
  EXPECT_EQ(static_records(), 1);
  EXPECT_EQ(v.stages.front().outcome, stage_outcome::deferred);
  EXPECT_NE(v.stages.front().summary.find("compiled no Triton kernel"), std::string::npos);
  EXPECT_FALSE(v.targets.static_counts);
}

TEST_F(TritonStaticSass, WithoutADisassemblerTheStageIsDeferred) {
  // The fake CUDA root has no cuobjdump and PATH has none (SetUp).
  auto st = run_static_sass_on_cubins({cubin("000-a.cubin")}, target, root / "cuda", v);
  ASSERT_TRUE(st);
  EXPECT_EQ(v.stages.front().outcome, stage_outcome::deferred);
  EXPECT_NE(v.stages.front().summary.find("no cuobjdump"), std::string::npos);
}

TEST_F(TritonStaticSass, AFailingDisassemblerIsAnErrorNamingTheCubin) {
  write_tool(true);
  auto st = run_static_sass_on_cubins({cubin("003-gemm_kernel.cubin")}, target, root / "cuda", v);
  ASSERT_FALSE(st);
  EXPECT_NE(st.err().message.find("003-gemm_kernel.cubin"), std::string::npos) << st.err().message;
  EXPECT_EQ(v.stages.front().outcome, stage_outcome::error);
}

}  // namespace
}  // namespace ptxbench::eval
