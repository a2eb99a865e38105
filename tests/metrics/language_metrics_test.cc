// Language as a dimension of the metrics: records carry the candidates' language (ours from the
// trajectory, upstream's from its run folder's name), groups split by it, and the CUDA-PTX vs
// Triton comparison (the paper's Fig. 3) pools each language's runs per model and task.
#include <gtest/gtest.h>

#include "metrics/aggregate.h"
#include "metrics/html_report.h"
#include "metrics/language_comparison.h"
#include "metrics/table1.h"
#include "metrics/trajectory_reader.h"

namespace ptxbench::metrics {
namespace {

turn_record language_turn(std::string language, std::string exp_dir, std::string traj, int t, eval_outcome label,
                 std::optional<double> speedup = {}, bool executed = false) {
  turn_record r;
  r.model = "m";
  r.arch = "sm_90a";
  r.language = std::move(language);
  r.definition = "mha_with_lse_d128_causal";
  r.exp_dir = std::move(exp_dir);
  r.trajectory = std::move(traj);
  r.variant = "base";
  r.turn = t;
  r.label = label;
  r.speedup = speedup;
  r.target_verdict = executed ? "executed" : "absent_in_sass";
  r.target_correct = r.correct() && executed;
  return r;
}

std::vector<turn_record> two_languages() {
  using L = eval_outcome;
  return {
      language_turn("cuda", "runs/ptx", "t0", 0, L::compile_error),
      language_turn("cuda", "runs/ptx", "t0", 1, L::passed, 0.768, true),
      language_turn("triton", "runs/triton-a", "t0", 0, L::passed, 0.759, true),
      language_turn("triton", "runs/triton-a", "t0", 1, L::passed, 0.9, false),  // fell back to mma.sync
      language_turn("triton", "runs/triton-b", "t0", 0, L::runtime_error),       // a second Triton run, pooled
      language_turn("triton", "runs/triton-b", "t0", 1, L::passed, 0.5, true),
  };
}

TEST(LanguageMetrics, GroupsSplitByLanguage) {
  auto groups = group_turns(two_languages());
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].key.language, "cuda");
  EXPECT_EQ(groups[1].key.language, "triton");
  EXPECT_EQ(groups[2].key.exp_dir, "runs/triton-b");
}

TEST(LanguageMetrics, ComparisonPoolsEachLanguagesRuns) {
  auto rows = compare_languages(group_turns(two_languages()), 8, {0.0, 0.76, 1.0});
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  EXPECT_EQ(r.definition, "mha_with_lse_d128_causal");
  EXPECT_EQ(r.cuda.runs, 1);
  EXPECT_EQ(r.triton.runs, 2);
  EXPECT_EQ(r.cuda.turns, 2);
  EXPECT_EQ(r.triton.turns, 4);
  EXPECT_DOUBLE_EQ(r.cuda.best.best, 0.768);
  EXPECT_DOUBLE_EQ(r.triton.best.best, 0.9);
  EXPECT_DOUBLE_EQ(r.triton.best.best_target, 0.759);
  // p = 0.76: CUDA 1 of 2 turns fast and target-correct; Triton 1 of 4 fast (0.9), none target-correct.
  ASSERT_EQ(r.triton.fast_p.size(), 3u);
  EXPECT_DOUBLE_EQ(r.cuda.fast_p[1].fast, 0.5);
  EXPECT_DOUBLE_EQ(r.cuda.fast_p[1].inst, 0.5);
  EXPECT_DOUBLE_EQ(r.triton.fast_p[1].fast, 0.25);
  EXPECT_DOUBLE_EQ(r.triton.fast_p[1].inst, 0.0);
  auto csv = language_comparison_csv(rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "model,arch,definition,turn_limit,p,cuda_fast_p,cuda_fast_inst_p,cuda_best_speedup,cuda_best_target_speedup,"
            "cuda_runs,cuda_n_turns,triton_fast_p,triton_fast_inst_p,triton_best_speedup,triton_best_target_speedup,"
            "triton_runs,triton_n_turns");
  EXPECT_NE(csv.find("m,sm_90a,mha_with_lse_d128_causal,8,0.76,0.5,0.5,0.768,0.768,1,2,0.25,0,0.9,0.759,2,4\n"),
            std::string::npos)
      << csv;
}

TEST(LanguageMetrics, NoTritonRunsNoComparisonAndTheReportSaysSo) {
  std::vector<turn_record> cuda_only = {language_turn("cuda", "runs/ptx", "t0", 0, eval_outcome::passed, 1.0, true)};
  EXPECT_TRUE(compare_languages(group_turns(cuda_only), 8, {0.0}).empty());
  loaded_inputs in;
  in.records = cuda_only;
  auto html = render_html_report(in, {});
  EXPECT_NE(html.find("CUDA–PTX vs Triton (Fig. 3)"), std::string::npos);
  EXPECT_NE(html.find("No Triton run in these inputs"), std::string::npos);
}

TEST(LanguageMetrics, ReportShowsBothLanguagesPerTask) {
  loaded_inputs in;
  in.records = two_languages();
  auto html = render_html_report(in, {});
  auto section = html.substr(html.find("<section id=\"languages\">"));
  section = section.substr(0, section.find("</section>"));
  EXPECT_NE(section.find("mha_with_lse_d128_causal · sm_90a · m"), std::string::npos);
  EXPECT_NE(section.find("<th>CUDA–PTX</th><td>1</td><td>2</td><td>0.768×</td><td>0.768×</td>"), std::string::npos)
      << section;
  EXPECT_NE(section.find("<th>Triton</th><td>2</td><td>4</td><td>0.900×</td><td>0.759×</td>"), std::string::npos);
  EXPECT_NE(section.find("Triton Fast^Inst_p"), std::string::npos);
}

TEST(LanguageMetrics, Table1GivesTritonRunsTheirOwnRows) {
  std::vector<turn_rate_row> rows;
  for (const auto& g : group_turns(two_languages())) rows.push_back({g.key, 8, compute_turn_rates(g.turns, 8)});
  auto blocks = build_table1(rows, {8}, std::nullopt);
  ASSERT_EQ(blocks.size(), 1u);
  ASSERT_GE(blocks[0].rows.size(), 2u);
  EXPECT_EQ(blocks[0].rows[0].label, "m");
  EXPECT_EQ(blocks[0].rows[1].label, "m · Triton");
}

TEST(LanguageMetrics, TrajectoryLanguageIsReadAndDefaultsToCuda) {
  auto doc = ordered_json::parse(R"({
    "info": {"ptxbench": {"model": "m", "task": "gemm_n7168_k5120", "target": "h200", "arch": "sm_90a",
                          "variant": "base", "language": "triton", "turn_limit": 2, "trajectory_index": 0}},
    "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                 {"role": "assistant", "content": "a"},
                 {"role": "user", "content": "f", "extra": {"turn": 0, "event": "evaluation",
                  "ptxbench": {"label": "rejected"}}}],
    "trajectory_format": "mini-swe-agent-1.1"})");
  auto t = trajectory_from_json(doc, "t0", "runs/x");
  ASSERT_TRUE(t.ok()) << t.err().message;
  ASSERT_FALSE(t->turns.empty());
  EXPECT_EQ(t->turns[0].language, "triton");
  doc["info"]["ptxbench"].erase("language");
  auto old = trajectory_from_json(doc, "t0", "runs/x");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->turns[0].language, "cuda");
}

}  // namespace
}  // namespace ptxbench::metrics
