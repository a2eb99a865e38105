// The trusted harness, the candidate runner and every GPU stage on real kernels, in one harness
// process (one evaluate_batch): a passing kernel, each failure class (wrong values, an out-of-bounds
// write, a hang, a host crash, a shape refused through the ABI's error kind), a kernel ABI v1 build,
// and the passing kernel again, which must still pass after all of that. Runs on a Hopper GPU host
// with compute-sanitizer and ncu (`ctest -L gpu`); skips visibly elsewhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "eval/pipeline.h"
#include "test_support.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;

struct expected_case {
  std::string file;             ///< relative to the repository root
  eval_outcome outcome;
  std::optional<target_verdict> target;
};

TEST(HarnessPipelineGpu, EveryFailureClassThenAGoodKernelInOneHarness) {
  if (!fs::exists("/dev/nvidia0")) GTEST_SKIP() << "needs an NVIDIA GPU (/dev/nvidia0 is absent)";
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok()) << s.err().message;
  auto pair = resolve_evaluation(*s, "gemm_n7168_k5120", "h200", true);
  ASSERT_TRUE(pair.ok()) << pair.err().message;

  const std::vector<expected_case> cases = {
      {"examples/gemm/wgmma.cu", eval_outcome::passed, target_verdict::executed},
      {"examples/gemm/wrong_result.cu", eval_outcome::incorrect_numerical, std::nullopt},
      {"examples/gemm/out_of_bounds.cu", eval_outcome::runtime_error, std::nullopt},
      {"examples/gemm/hang.cu", eval_outcome::timeout, std::nullopt},
      {"examples/gemm/host_segfault.cu", eval_outcome::runtime_error, std::nullopt},
      {"tests/fixtures/kernels/shape_refusal.cu", eval_outcome::incorrect_shape, std::nullopt},
      {"tests/fixtures/kernels/abi_v1_plain_tiled.cu", eval_outcome::passed, target_verdict::absent_in_sass},
      {"examples/gemm/wgmma.cu", eval_outcome::passed, target_verdict::executed},
  };
  std::vector<eval_request> requests;
  for (const auto& c : cases) {
    auto text = read_text_file(testing::repo_root() / c.file, 1u << 20);
    ASSERT_TRUE(text.ok()) << text.err().message;
    requests.push_back({pair->t, pair->target,
                        eval::solution_for_kernel_file("kernel.cu", *text, *pair->t, *pair->target), true});
  }
  auto cache = testing::make_temp_dir("harness-gpu");
  eval::pipeline_config config;
  config.root = testing::repo_root();
  config.cache_dir = cache;
  config.cuda_root = PTXBENCH_CUDA_ROOT_FOR_TESTS;
  config.gpu.harness = testing::bin_dir() / "ptxbench-harness";
  config.gpu.warmup = 3;
  config.gpu.iterations = 10;
  config.gpu.call_timeout_s = 10;  // the hang: long enough for the real kernels, short enough for the test
  auto verdicts = eval::make_pipeline_evaluator(config)->evaluate_batch(requests);
  ASSERT_EQ(verdicts.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    ASSERT_TRUE(verdicts[i].ok()) << c.file << ": " << verdicts[i].err().message;
    const verdict& v = *verdicts[i];
    EXPECT_EQ(outcome_name(v.outcome()), outcome_name(c.outcome)) << c.file << ": " << v.decided.message;
    if (c.target) {
      EXPECT_EQ(target_verdict_name(v.targets.verdict), target_verdict_name(*c.target)) << c.file;
    }
    if (c.outcome == eval_outcome::passed) {
      ASSERT_TRUE(v.timing.has_value()) << c.file;
      EXPECT_GT(v.timing->speedup, 0.0) << c.file;
    }
  }
  EXPECT_NE(verdicts[5]->decided.message.find("handles only M <= 4096"), std::string::npos);
  fs::remove_all(cache);
}

// The GQA tasks end to end: int32 index inputs from the sequence layout, sm_scale handed to the
// candidate by value, the cuDNN GQA baseline (or its named fallback) as the reference.
TEST(HarnessPipelineGpu, GqaExamplesPassAgainstTheirBaseline) {
  if (!fs::exists("/dev/nvidia0")) GTEST_SKIP() << "needs an NVIDIA GPU (/dev/nvidia0 is absent)";
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok()) << s.err().message;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gqa_paged_decode_h24_kv8_d128_ps1", "examples/gqa/plain_paged_decode.cu"},
      {"gqa_paged_prefill_causal_h24_kv8_d128_ps1", "examples/gqa/plain_paged_prefill.cu"},
      {"gqa_ragged_prefill_causal_h32_kv4_d128", "examples/gqa/wgmma_ragged_prefill.cu"}};
  auto cache = testing::make_temp_dir("harness-gqa");
  eval::pipeline_config config;
  config.root = testing::repo_root();
  config.cache_dir = cache;
  config.cuda_root = PTXBENCH_CUDA_ROOT_FOR_TESTS;
  config.gpu.harness = testing::bin_dir() / "ptxbench-harness";
  config.gpu.warmup = 2;
  config.gpu.iterations = 5;
  auto evaluator = eval::make_pipeline_evaluator(config);
  for (const auto& [task, file] : cases) {
    auto pair = resolve_evaluation(*s, task, "h200", true);
    ASSERT_TRUE(pair.ok()) << pair.err().message;
    auto text = read_text_file(testing::repo_root() / file, 1u << 20);
    ASSERT_TRUE(text.ok()) << text.err().message;
    auto verdicts = evaluator->evaluate_batch(
        {{pair->t, pair->target, eval::solution_for_kernel_file("kernel.cu", *text, *pair->t, *pair->target), true}});
    ASSERT_EQ(verdicts.size(), 1U);
    ASSERT_TRUE(verdicts[0].ok()) << file << ": " << verdicts[0].err().message;
    const verdict& v = *verdicts[0];
    EXPECT_EQ(outcome_name(v.outcome()), "passed") << file << ": " << v.decided.message;
    const std::string baseline = v.environment.value("baseline", "");
    EXPECT_NE(baseline.find("cudnn_sdpa_gqa"), std::string::npos) << baseline;
    EXPECT_NE(v.environment.value("derived_inputs", "").find("sequences"), std::string::npos) << v.environment.dump();
  }
  fs::remove_all(cache);
}

}  // namespace
}  // namespace ptxbench
