// The agent's Triton path: finding kernel.py in a reply (```python fences, @triton.jit and a
// top-level run), the turn's Solution (kernel.py::run, language triton), the feedback's wording,
// and the trajectory recording the language (and refusing to resume another language's file).
#include <filesystem>

#include <gtest/gtest.h>

#include "agent/code_extract.h"
#include "agent/feedback.h"
#include "agent/trajectory.h"
#include "agent/turn_loop.h"
#include "agent/turn_setup.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "core/process.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench::agent {
namespace {

const std::string k_py =
    "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr):\n    pass\n\n\n"
    "def run(A, B, C):\n    k[(1,)](C)\n";

std::string triton_fenced(const std::string& tag, const std::string& body) { return "```" + tag + "\n" + body + "```\n"; }

TEST(TritonCodeExtract, AcceptsPythonTags) {
  for (const char* tag : {"python", "py", "Python", "python3", "triton"}) {
    auto x = extract_kernel("Here:\n" + triton_fenced(tag, k_py), 512u << 10, "triton");
    ASSERT_TRUE(x.code) << tag << ": " << x.problem;
    EXPECT_EQ(x.code->code, k_py);
    EXPECT_TRUE(x.code->valid);
  }
}

TEST(TritonCodeExtract, CudaBlocksAreNotTritonAndViceVersa) {
  auto x = extract_kernel(triton_fenced("cuda", "__global__ void k() {}\nPTXBENCH_EXPORT(run, PTXBENCH_FLOAT32)\n"), 512u << 10,
                          "triton");
  EXPECT_FALSE(x.code);
  EXPECT_NE(x.problem.find("none is tagged python or contains a @triton.jit kernel"), std::string::npos) << x.problem;
  auto y = extract_kernel(triton_fenced("python", k_py));  // the CUDA default ignores Python
  EXPECT_FALSE(y.code);
}

TEST(TritonCodeExtract, ValidNeedsAJitKernelAndATopLevelRun) {
  auto untagged = extract_kernel(triton_fenced("", k_py), 512u << 10, "triton");
  ASSERT_TRUE(untagged.code);
  EXPECT_TRUE(untagged.code->valid);
  // The last valid block wins over a later fragment without run().
  auto two = extract_kernel(triton_fenced("python", k_py) + "and the launch:\n" + triton_fenced("python", "k[(1,)](C)\n"), 512u << 10,
                            "triton");
  ASSERT_TRUE(two.code);
  EXPECT_EQ(two.code->block_index, 0);
  auto nested = extract_kernel(triton_fenced("python", "@triton.jit\ndef k():\n    pass\nclass X:\n    def run(self):\n        pass\n"),
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

namespace ptxbench::agent {
namespace {
namespace fs = std::filesystem;

// The shipped Triton replay through `ptxbench run --language triton --cpu-only` on the real
// pipeline evaluator (CPU stages): turn 0 (torch.matmul) is rejected by the Python gate with rule
// and line, turn 1 (the tl.dot GEMM) is built with static SASS deferred to the GPU.
TEST(TritonReplay, RunLanguageTritonOnTheShippedReplay) {
  if (!find_executable("python3")) GTEST_SKIP() << "python3 not found on PATH (the Triton gate needs it)";
  fs::path bin = ptxbench::testing::bin_dir() / "ptxbench";
  if (!fs::exists(bin)) GTEST_SKIP() << "build the `ptxbench` target first";
  fs::path out = ptxbench::testing::make_temp_dir("triton-replay");
  fs::path replay = ptxbench::testing::repo_root() / "examples" / "agent" / "triton_gemm_replay.json";
  process_spec spec;
  spec.argv = {bin.string(), "run", "--model", "replay:" + replay.string(), "--language", "triton", "--tasks",
               "gemm_n7168_k5120", "--variants", "base", "--trajectories", "1", "--turns", "2", "--cpu-only",
               "--out", out.string(), "-q"};
  spec.timeout_s = 120;
  spec.env_overrides = {{"PTXBENCH_ROOT", ptxbench::testing::repo_root().string()},
                        {"PTXBENCH_CACHE", (out / "cache").string()}};
  auto r = run_process(spec);
  ASSERT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
  auto plan = read_text_file(out / "plan.json", 1u << 20);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ((*parse_json(*plan, "plan"))["language"], "triton");
  auto t = trajectory::load(out / "trajectories" / "gemm_n7168_k5120__h200__base__t0.json");
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->meta().language, "triton");
  const auto& msgs = t->json()["messages"];
  ASSERT_GE(msgs.size(), 6u);
  const auto& first = msgs[3]["extra"]["ptxbench"];
  EXPECT_EQ(first["label"], "rejected");
  EXPECT_NE(msgs[3]["content"].get<std::string>().find("kernel.py:42: [torch-compute]"), std::string::npos)
      << msgs[3]["content"];
  EXPECT_EQ(first["code_block"]["fence_tag"], "python");
  const auto& second = msgs[5]["extra"]["ptxbench"];
  EXPECT_EQ(second["label"], "built");
  EXPECT_EQ(second["verdict"]["target_instructions"]["verdict"], "deferred");
  EXPECT_TRUE(second["code_block"]["valid"].get<bool>());
  fs::remove_all(out);
}

}  // namespace
}  // namespace ptxbench::agent
