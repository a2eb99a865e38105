// The pack's ceiling (issue 30): reference kernels read from `ptxbench eval --out` verdict files, the
// median of their passed target-correct evaluations, set beside the models' best target-correct
// speedup per (target, task); upstream rows (no target) never meet one; bad files fail naming them.
#include <gtest/gtest.h>

#include <fstream>

#include "core/file_io.h"
#include "metrics/ceiling.h"
#include "test_support.h"
#include "verdict/verdict_json.h"

namespace ptxbench::metrics {
namespace {
namespace fs = std::filesystem;

ordered_json reference_verdict(const std::string& task, const std::string& file, eval_outcome outcome,
                               target_verdict tv, double speedup, const std::string& message = "") {
  verdict v;
  v.mode = eval_mode::eval;
  v.task = task;
  v.target = "h100";
  v.arch = "sm_90a";
  v.decided.outcome = outcome;
  v.decided.message = message;
  v.targets.verdict = tv;
  v.targets.reason = tv == target_verdict::executed ? "GMMA executed" : "no GMMA or TMA in the SASS";
  if (speedup > 0) {
    timing_summary t;
    t.speedup = speedup;
    v.timing = t;
  }
  auto j = to_json(v);
  j["file"] = file;
  return j;
}

turn_record model_turn(const std::string& model, const std::string& target, const std::string& task, int turn,
                       eval_outcome label, std::optional<double> speedup, bool executed) {
  turn_record r;
  r.model = model;
  r.target = target;
  r.arch = "sm_90a";
  r.definition = task;
  r.exp_dir = "runs/" + model;
  r.trajectory = "t0";
  r.turn = turn;
  r.label = label;
  r.speedup = speedup;
  r.target_verdict = executed ? "executed" : "absent_in_sass";
  r.target_correct = r.correct() && executed;
  return r;
}

class Ceiling : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = testing::make_temp_dir("ceiling"); }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path write(const std::string& name, const std::string& text) {
    auto p = m_dir / name;
    std::ofstream(p) << text;
    return p;
  }
  fs::path m_dir;
};

TEST_F(Ceiling, TheReferenceIsTheMedianOfItsTargetCorrectEvaluations) {
  using L = eval_outcome;
  ordered_json evals = ordered_json::array();
  const std::string gemm = "gemm_n7168_k5120", ref = "examples/reference/gemm_n7168_k5120.cu";
  evals.push_back(reference_verdict(gemm, ref, L::passed, target_verdict::executed, 1.010));
  evals.push_back(reference_verdict(gemm, ref, L::passed, target_verdict::executed, 0.990));
  evals.push_back(reference_verdict(gemm, ref, L::passed, target_verdict::executed, 1.004));
  const std::string fwd = "mha_with_lse_d128", fwd_ref = "examples/reference/mha_with_lse_d128.cu";
  evals.push_back(reference_verdict(fwd, fwd_ref, L::passed, target_verdict::absent_in_sass, 0.9));
  evals.push_back(reference_verdict(fwd, fwd_ref, L::incorrect_numerical, target_verdict::deferred, 0, "trial 0 | off"));
  auto refs = load_reference_verdicts({write("ref.json", evals.dump())});
  ASSERT_TRUE(refs) << refs.err().message;
  ASSERT_EQ(refs->kernels.size(), 2u);
  const auto& g = refs->kernels[0];
  EXPECT_EQ(g.file, ref);
  EXPECT_EQ(g.evaluations, 3);
  EXPECT_DOUBLE_EQ(g.speedup, 1.004);
  EXPECT_DOUBLE_EQ(g.speedup_min, 0.990);
  EXPECT_DOUBLE_EQ(g.speedup_max, 1.010);
  const auto& f = refs->kernels[1];
  EXPECT_EQ(f.evaluations, 2);
  EXPECT_TRUE(f.speedups.empty()) << "a correct kernel without the target instructions is no ceiling";
  EXPECT_EQ(f.speedup, 0);
  EXPECT_EQ(f.last_failure, "trial 0 | off");

  std::vector<turn_record> turns = {
      model_turn("opus", "h100", gemm, 0, L::passed, 0.91, true),
      model_turn("opus", "h100", gemm, 1, L::passed, 1.30, false),  // faster, but not target-correct
      model_turn("gpt", "h100", gemm, 0, L::passed, 0.95, true),
      model_turn("gpt", "h100", gemm, 9, L::passed, 0.99, true),    // beyond the turn limit
      model_turn("gpt", "h200", gemm, 0, L::passed, 1.20, true),    // another target: its own row
      model_turn("upstream", "", gemm, 0, L::passed, 1.50, true),   // upstream names no target
      model_turn("opus", "h100", fwd, 0, L::compile_error, std::nullopt, false),
  };
  auto rows = compute_ceiling(turns, 8, *refs);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].target, "h100");
  EXPECT_EQ(rows[0].task, gemm);
  ASSERT_TRUE(rows[0].reference);
  EXPECT_DOUBLE_EQ(rows[0].models_best, 0.95);
  EXPECT_EQ(rows[0].best_model, "gpt");
  EXPECT_EQ(rows[0].turns, 3);
  EXPECT_EQ(rows[1].task, fwd);
  EXPECT_EQ(rows[1].models_best, 0);
  EXPECT_EQ(rows[2].target, "h200");
  EXPECT_FALSE(rows[2].reference);
  EXPECT_DOUBLE_EQ(rows[2].models_best, 1.20);

  auto md = render_ceiling_markdown(rows, 8);
  EXPECT_NE(md.find("| h100 | gemm_n7168_k5120 | `examples/reference/gemm_n7168_k5120.cu` | 1.004× (0.990–1.010; 3 of 3 "
                    "target-correct) | 0.950× (gpt) | 0.95 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("none target-correct in 2 evaluation(s): trial 0 \\| off"), std::string::npos)
      << "a '|' in a message does not end the cell\n" << md;
  EXPECT_NE(md.find("| h200 | gemm_n7168_k5120 | no reference kernel | – | 1.200× (gpt) | – |"), std::string::npos) << md;
  auto csv = ceiling_csv(rows, 8);
  EXPECT_NE(csv.find("h100,gemm_n7168_k5120,8,examples/reference/gemm_n7168_k5120.cu,3,3,1.004,0.99,1.01,3,0.95,gpt,"),
            std::string::npos)
      << csv;
}

TEST_F(Ceiling, AFileThatIsNoVerdictFailsNamingIt) {
  auto bad = load_reference_verdicts({write("bad.json", "{\"format\": \"something else\"}")});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.err().message.find("bad.json"), std::string::npos) << bad.err().message;
  auto empty = load_reference_verdicts({write("empty.json", "[]")});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.err().message.find("no verdict"), std::string::npos) << empty.err().message;
  auto torn = load_reference_verdicts({write("torn.json", "[{\"format\"")});
  ASSERT_FALSE(torn);
  EXPECT_NE(torn.err().message.find("torn.json"), std::string::npos) << torn.err().message;
  EXPECT_FALSE(load_reference_verdicts({m_dir / "missing.json"}));
}

}  // namespace
}  // namespace ptxbench::metrics
