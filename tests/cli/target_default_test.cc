// Targets from the hardware: `eval` and `run` evaluate for the suite target of the local GPU when
// --target is left out, refuse a runtime target the GPU is not, and say in one line when they cannot
// tell; `check` without a GPU falls back to h200. The GPU is played: PTXBENCH_DEVICE_NODE names an
// existing file (a device node) and PTXBENCH_GPU_MODEL the model the driver would report; the
// harness is the stand-in of tests/eval/fake_harness.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_test_support.h"
#include "core/json_check.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;
using testing::first_line;
using testing::run_cli;

const std::string k_default_task = "gemm_n7168_k5120";

struct played_gpu {
  fs::path dir = testing::make_temp_dir("target-default");
  fs::path node = dir / "nvidia0";
  played_gpu() { std::ofstream(node) << ""; }
  ~played_gpu() { fs::remove_all(dir); }
  std::vector<std::pair<std::string, std::string>> env(const std::string& model) const {
    return {{"PTXBENCH_DEVICE_NODE", node.string()}, {"PTXBENCH_GPU_MODEL", model},
            {"PTXBENCH_GPU_LOCK_DIR", (dir / "locks").string()}};
  }
  static std::string harness() { return (testing::repo_root() / "tests/eval/fake_harness/fake_harness.py").string(); }
  static std::string kernel() { return (testing::repo_root() / "examples/gemm/plain_tiled.cu").string(); }
};

TEST(TargetDefault, TheSuiteNamesEachGpuByItsModel) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s) << s.err().message;
  auto name = [&](const std::string& model) {
    auto t = s->target_for_gpu(model);
    return t ? (*t)->name : "error: " + t.err().message;
  };
  EXPECT_EQ(name("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(name("NVIDIA H200"), "h200");
  EXPECT_EQ(name("NVIDIA H100 PCIe"), "h100") << "a whole word of the model";
  EXPECT_EQ(name("NVIDIA H100 NVL"), "h100");
  EXPECT_NE(name("NVIDIA GH200 480GB").find("none of the suite's targets"), std::string::npos) << "GH200 is no h200";
  EXPECT_NE(name("NVIDIA A100-SXM4-80GB").find("error: GPU 'NVIDIA A100-SXM4-80GB' is none"), std::string::npos);
}

TEST(TargetDefault, EvalOnAnH100EvaluatesForH100WithoutBeingTold) {
  played_gpu g;
  auto r = run_cli({"eval", g.kernel(), "--task", k_default_task, "--harness", g.harness(), "--json"}, 600,
                   g.env("NVIDIA H100 80GB HBM3"));
  // Passed, but not shown target-correct: without cuobjdump here the static check is deferred.
  ASSERT_EQ(r.exit_code, 4) << r.out << r.err;
  auto v = ordered_json::parse(r.out);
  EXPECT_EQ(v["target"], "h100");
  EXPECT_EQ(v["status"], "PASSED") << "the fake harness passes every 'run' candidate";
  EXPECT_EQ(v["measurement"]["exclusive"], true) << "the verdict records how its stages had the GPU";
}

TEST(TargetDefault, ARuntimeTargetThisGpuIsNotIsRefusedInOneLine) {
  played_gpu g;
  auto r = run_cli({"eval", g.kernel(), "--task", k_default_task, "--target", "h200", "--harness", g.harness()}, 120,
                   g.env("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(first_line(r.err),
            "ptxbench: --target h200 needs an NVIDIA H200, but GPU 0 is an NVIDIA H100 80GB HBM3 (target h100; leave "
            "--target out to use it)");
  EXPECT_TRUE(testing::one_line(r.err)) << r.err;
}

TEST(TargetDefault, AnUnknownGpuNeedsATargetAndSaysSo) {
  played_gpu g;
  auto r = run_cli({"eval", g.kernel(), "--task", k_default_task, "--harness", g.harness()}, 120, g.env("NVIDIA A100-SXM4-80GB"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(first_line(r.err).find("cannot tell which target GPU 0 is (GPU 'NVIDIA A100-SXM4-80GB' is none of the "
                                   "suite's targets"),
            std::string::npos)
      << r.err;
  EXPECT_NE(first_line(r.err).find("pass --target"), std::string::npos);
}

TEST(TargetDefault, CheckWithoutAGpuFallsBackToH200) {
  auto r = run_cli({"check", played_gpu::kernel(), "--task", k_default_task, "--json"}, 600,
                   {{"PTXBENCH_DEVICE_NODE", "/nonexistent/nvidia0"}});
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_EQ(ordered_json::parse(r.out)["target"], "h200");
}

}  // namespace
}  // namespace ptxbench
