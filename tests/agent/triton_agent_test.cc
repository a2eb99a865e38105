// The agent's Triton path: finding kernel.py in a reply (```python fences, @triton.jit and a
// top-level run), the turn's Solution (kernel.py::run, language triton), the feedback's wording,
// and the trajectory recording the language (and refusing to resume another language's file).
#include <gtest/gtest.h>

#include "agent/code_extract.h"
#include "agent/feedback.h"
#include "agent/trajectory.h"
#include "agent/turn_loop.h"
#include "agent/turn_setup.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench::agent {
namespace {

const std::string k_py =
    "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr):\n    pass\n\n\n"
    "def run(A, B, C):\n    k[(1,)](C)\n";

std::string fenced(const std::string& tag, const std::string& body) { return "```" + tag + "\n" + body + "```\n"; }

TEST(TritonCodeExtract, AcceptsPythonTags) {
  for (const char* tag : {"python", "py", "Python", "python3", "triton"}) {
    auto x = extract_kernel("Here:\n" + fenced(tag, k_py), 512u << 10, "triton");
    ASSERT_TRUE(x.code) << tag << ": " << x.problem;
    EXPECT_EQ(x.code->code, k_py);
    EXPECT_TRUE(x.code->valid);
  }
}

TEST(TritonCodeExtract, CudaBlocksAreNotTritonAndViceVersa) {
  auto x = extract_kernel(fenced("cuda", "__global__ void k() {}\nPTXBENCH_EXPORT(run, PTXBENCH_FLOAT32)\n"), 512u << 10,
                          "triton");
  EXPECT_FALSE(x.code);
  EXPECT_NE(x.problem.find("none is tagged python or contains a @triton.jit kernel"), std::string::npos) << x.problem;
  auto y = extract_kernel(fenced("python", k_py));  // the CUDA default ignores Python
  EXPECT_FALSE(y.code);
}

TEST(TritonCodeExtract, ValidNeedsAJitKernelAndATopLevelRun) {
  auto untagged = extract_kernel(fenced("", k_py), 512u << 10, "triton");
  ASSERT_TRUE(untagged.code);
  EXPECT_TRUE(untagged.code->valid);
  // The last valid block wins over a later fragment without run().
  auto two = extract_kernel(fenced("python", k_py) + "and the launch:\n" + fenced("python", "k[(1,)](C)\n"), 512u << 10,
                            "triton");
  ASSERT_TRUE(two.code);
  EXPECT_EQ(two.code->block_index, 0);
  auto nested = extract_kernel(fenced("python", "@triton.jit\ndef k():\n    pass\nclass X:\n    def run(self):\n        pass\n"),
                               512u << 10, "triton");
  ASSERT_TRUE(nested.code);
  EXPECT_FALSE(nested.code->valid);  // run must be top-level
}

TEST(TritonTurn, SolutionIsKernelPy) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok());
  trajectory_spec spec;
  spec.t = s->find_task("gemm_n7168_k5120");
  spec.target = s->find_target("h200");
  spec.variant = "base";
  spec.language = "triton";
  spec.model_name = "m";
  solution sol = make_turn_solution(spec, 2, k_py);
  EXPECT_EQ(sol.spec.language, "triton");
  EXPECT_EQ(sol.spec.entry_point, "kernel.py::run");
  ASSERT_EQ(sol.sources.size(), 1u);
  EXPECT_EQ(sol.sources[0].path, "kernel.py");
  EXPECT_FALSE(sol.spec.binding.has_value());
  spec.language = "cuda";
  EXPECT_EQ(make_turn_solution(spec, 2, "x").spec.entry_point, "kernel.cu::run");
}

TEST(TritonTurn, FeedbackSpeaksPython) {
  EXPECT_NE(no_code_feedback("no block", "triton").find("```python"), std::string::npos);
  EXPECT_NE(no_code_feedback("no block").find("```cuda"), std::string::npos);
}

TEST(TritonTurn, TrajectoryRecordsTheLanguageAndResumesOnlyTheSame) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok());
  trajectory_meta meta;
  meta.model = "m";
  meta.task = "gemm_n7168_k5120";
  meta.target = "h200";
  meta.variant = "base";
  meta.language = "triton";
  auto t = trajectory::start(meta, ordered_json::object(), {"sys", "user"});
  EXPECT_EQ(t.meta().language, "triton");
  trajectory_spec want;
  want.t = s->find_task("gemm_n7168_k5120");
  want.target = s->find_target("h200");
  want.model_name = "m";
  want.variant = "base";
  want.language = "cuda";
  EXPECT_NE(meta_mismatch(t.meta(), want).find("language is 'triton' in the file but 'cuda' now"), std::string::npos);
  want.language = "triton";
  EXPECT_EQ(meta_mismatch(t.meta(), want).find("language"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::agent
