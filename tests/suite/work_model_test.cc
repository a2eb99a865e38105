// The work formulas of suite/tasks.json, checked against arithmetic done by hand, and the formula
// evaluator's error cases.
#include <gtest/gtest.h>

#include "suite/task.h"
#include "suite/work_model.h"
#include "test_support.h"

namespace ptxbench {
namespace {

const suite& the_suite() {
  static const suite s = [] {
    auto loaded = load_suite(testing::repo_root() / "suite");
    if (!loaded) throw std::runtime_error(loaded.err().message);
    return std::move(*loaded);
  }();
  return s;
}

const task_work& work_of(const std::string& name) {
  const task* t = the_suite().find_task(name);
  if (!t || !t->work) throw std::runtime_error("no work for " + name);
  return *t->work;
}

TEST(WorkModel, EveryTaskStatesItsWork) {
  for (const auto& t : the_suite().tasks) {
    ASSERT_TRUE(t.work_formula.has_value()) << t.name;
    ASSERT_TRUE(t.work.has_value()) << t.name;
    EXPECT_GT(t.work->flops, 0) << t.name;
    EXPECT_GT(t.work->bytes_read, 0) << t.name;
    EXPECT_GT(t.work->bytes_written, 0) << t.name;
    EXPECT_FALSE(t.work_formula->note.empty()) << t.name;
  }
}

TEST(WorkModel, GemmHeadline) {
  // M = 8192, N = 7168, K = 5120.
  // FLOPs = 2·M·N·K = 2 · 8192 · 7168 · 5120 = 2 · 58,720,256 · 5120 = 601,295,421,440.
  // Read  = 2·M·K + 2·N·K = 83,886,080 + 73,400,320 = 157,286,400 (A and B in bf16).
  // Write = 2·M·N = 117,440,512 (C in bf16).
  const auto& w = work_of("gemm_n7168_k5120");
  EXPECT_EQ(w.flops, 601295421440.0);
  EXPECT_EQ(w.bytes_read, 157286400.0);
  EXPECT_EQ(w.bytes_written, 117440512.0);
  EXPECT_EQ(w.bytes(), 274726912.0);
}

TEST(WorkModel, AttentionForwardD128) {
  // B = 4, H = 48, S = 4096, D = 128; B·H·S·D = 192 · 524,288 = 100,663,296.
  // FLOPs = 4·B·H·S²·D = 4 · 192 · 16,777,216 · 128 = 1,649,267,441,664.
  // Read  = 3 tensors · 2 bytes · 100,663,296 = 603,979,776.
  // Write = O: 2 · 100,663,296 = 201,326,592, LSE: 4 · B·H·S = 4 · 786,432 = 3,145,728 → 204,472,320.
  const auto& w = work_of("mha_with_lse_d128");
  EXPECT_EQ(w.flops, 1649267441664.0);
  EXPECT_EQ(w.bytes_read, 603979776.0);
  EXPECT_EQ(w.bytes_written, 204472320.0);
}

TEST(WorkModel, CausalForwardCountsUnmaskedPairsExactly) {
  // S·(S+1)/2 = 4096 · 4097 / 2 = 8,390,656 pairs per head (not S²/2 = 8,388,608).
  // FLOPs = 4 · B·H · D · 8,390,656 = 4 · 192 · 128 · 8,390,656 = 824,835,047,424
  // = half the non-causal FLOPs (824,633,720,832) plus 4·B·H·D·S/2 = 201,326,592.
  const auto& w = work_of("mha_with_lse_d128_causal");
  EXPECT_EQ(w.flops, 824835047424.0);
  EXPECT_EQ(w.flops, work_of("mha_with_lse_d128").flops / 2 + 4.0 * 4 * 48 * 128 * 4096 / 2);
  EXPECT_EQ(w.bytes_read, work_of("mha_with_lse_d128").bytes_read);
}

TEST(WorkModel, BackwardIsFiveForwardSizedMatmuls) {
  // FLOPs = 10·B·H·S²·D = 2.5 × 1,649,267,441,664 = 4,123,168,604,160.
  // Read  = 5 bf16 tensors (Q, K, V, O, dO): 10 · 100,663,296 = 1,006,632,960, + L: 3,145,728 → 1,009,778,688.
  // Write = dQ, dK, dV: 6 · 100,663,296 = 603,979,776.
  const auto& w = work_of("mha_bwd_d128");
  EXPECT_EQ(w.flops, 4123168604160.0);
  EXPECT_EQ(w.flops, 2.5 * work_of("mha_with_lse_d128").flops);
  EXPECT_EQ(w.bytes_read, 1009778688.0);
  EXPECT_EQ(w.bytes_written, 603979776.0);
  // Causal: 2.5 × the causal forward = 2,062,087,618,560.
  EXPECT_EQ(work_of("mha_bwd_d128_causal").flops, 2062087618560.0);
  EXPECT_EQ(work_of("mha_bwd_d128_causal").flops, 2.5 * work_of("mha_with_lse_d128_causal").flops);
}

TEST(WorkModel, HeldOutHeadDimensionsScaleWithD) {
  // D = 64: 4 · 192 · 16,777,216 · 64 = 824,633,720,832; D = 96: × 1.5 = 1,236,950,581,248.
  EXPECT_EQ(work_of("mha_with_lse_d64").flops, 824633720832.0);
  EXPECT_EQ(work_of("mha_with_lse_d96").flops, 1236950581248.0);
  EXPECT_EQ(work_of("mha_bwd_d64").flops, 2061584302080.0);
  EXPECT_EQ(work_of("mha_bwd_d96").flops, 3092376453120.0);
  EXPECT_EQ(work_of("mha_with_lse_d64_causal").flops, 412417523712.0);
  EXPECT_EQ(work_of("mha_with_lse_d96_causal").flops, 618626285568.0);
  EXPECT_EQ(work_of("mha_bwd_d64_causal").flops, 2.5 * 412417523712.0);
}

TEST(WorkModel, GqaTasksUseTheirWorkloadAxes) {
  // Decode: 24 query heads, head_dim 128, 9,625 indexed pages of 1 token: 4 · 24 · 128 · 9,625 = 118,272,000.
  // Read: q 2·15·24·128 = 92,160; K and V pages 2·2·9,625·8·128 = 39,424,000; indptr 4·16 = 64;
  // indices 4·9,625 = 38,500 → 39,554,724. Write: output 92,160 + lse 4·15·24 = 1,440 → 93,600.
  const auto& d = work_of("gqa_paged_decode_h24_kv8_d128_ps1");
  EXPECT_EQ(d.flops, 118272000.0);
  EXPECT_EQ(d.bytes_read, 39554724.0);
  EXPECT_EQ(d.bytes_written, 93600.0);
  // Paged prefill, one sequence of 892 queries and 892 keys: 892 · 893 / 2 = 398,278 causal pairs;
  // 4 · 24 · 128 · 398,278 = 4,894,040,064.
  EXPECT_EQ(work_of("gqa_paged_prefill_causal_h24_kv8_d128_ps1").flops, 4894040064.0);
  // Ragged prefill: 33 sequences assumed equal, L = 16,294 / 33 = 493.76 queries = keys each;
  // pairs = 16,294 · (L + 1) / 2 = 4,030,773.9...; × 4 · 32 · 128 = 66,040,462,863.5.
  EXPECT_NEAR(work_of("gqa_ragged_prefill_causal_h32_kv4_d128").flops, 66040462863.515, 1.0);
}

TEST(WorkModel, DenseTaskBytesAreTheirTensorsReadAndWrittenOnce) {
  // For every dense task (no index inputs) the byte formulas must equal the definition's tensors.
  for (const auto& t : the_suite().tasks) {
    if (t.problem == "gqa") continue;
    auto axes = resolve_axes(t.wl, t.def);
    double in = 0, out = 0;
    for (const auto& x : t.def.inputs) {
      double n = dtype_bits(x.type) / 8.0;
      for (auto e : concrete_shape(x, axes)) n *= static_cast<double>(e);
      in += n;
    }
    for (const auto& x : t.def.outputs) {
      double n = dtype_bits(x.type) / 8.0;
      for (auto e : concrete_shape(x, axes)) n *= static_cast<double>(e);
      out += n;
    }
    EXPECT_EQ(t.work->bytes_read, in) << t.name;
    EXPECT_EQ(t.work->bytes_written, out) << t.name;
  }
}

TEST(WorkFormula, Arithmetic) {
  std::map<std::string, int64_t> axes{{"M", 3}, {"N", 4}, {"len_indptr", 5}};
  EXPECT_EQ(*evaluate_work_formula("2*M*N + 1", axes), 25.0);
  EXPECT_EQ(*evaluate_work_formula("(M + N) * 2", axes), 14.0);
  EXPECT_EQ(*evaluate_work_formula("N / (len_indptr - 1)", axes), 1.0);
  EXPECT_EQ(*evaluate_work_formula("M / 2", axes), 1.5);
  EXPECT_EQ(*evaluate_work_formula(" 10 - M - N ", axes), 3.0);  // left-associative
  EXPECT_EQ(*evaluate_work_formula("-M + 4", axes), 1.0);
}

TEST(WorkFormula, ErrorsNameTheProblem) {
  std::map<std::string, int64_t> axes{{"M", 3}, {"one", 1}};
  auto unknown = evaluate_work_formula("2*M*X", axes, "work.flops");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.err().message, "work.flops: unknown axis \"X\" at character 5 of \"2*M*X\"");
  EXPECT_FALSE(evaluate_work_formula("M / (one - 1)", axes).ok());
  EXPECT_FALSE(evaluate_work_formula("(M", axes).ok());
  EXPECT_FALSE(evaluate_work_formula("M M", axes).ok());
  EXPECT_FALSE(evaluate_work_formula("", axes).ok());
  EXPECT_FALSE(evaluate_work_formula("M ^ 2", axes).ok());
  EXPECT_FALSE(evaluate_work_formula("one - M", axes).ok());  // negative work
  EXPECT_FALSE(evaluate_work_formula(std::string(200, '('), axes).ok());
}

TEST(WorkModel, TargetsCarryPeaksAboveTheirDatasheets) {
  for (const char* name : {"h100", "h200", "b200"}) {
    const auto* t = the_suite().find_target(name);
    ASSERT_NE(t, nullptr);
    ASSERT_TRUE(t->peaks.has_value()) << name;
    EXPECT_GE(t->peaks->bf16_dense_flops_per_s, t->peaks->datasheet_bf16_dense_flops_per_s) << name;
    EXPECT_FALSE(t->peaks->source.empty()) << name;
  }
  EXPECT_EQ(the_suite().find_target("h200")->peaks->memory_bytes_per_s, 4.8e12);
  EXPECT_EQ(the_suite().find_target("h100")->peaks->memory_bytes_per_s, 3.35e12);
  // 132 SMs × 4096 FLOP/clk × 1.98 GHz = 1.0705e15.
  EXPECT_NEAR(the_suite().find_target("h200")->peaks->bf16_dense_flops_per_s, 132.0 * 4096 * 1.98e9, 1e11);
}

}  // namespace
}  // namespace ptxbench
