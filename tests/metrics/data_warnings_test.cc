// Incomplete or duplicated data never aggregates silently: unfinished, missing, unreadable and
// unplanned trajectories, a run directory given twice, and duplicated upstream rows each become a
// warning (identical duplicates are dropped; conflicting ones refused). The CLI side (stderr, exit
// codes, --strict, the files) is in metrics_cli_test.cc.
#include <filesystem>

#include <gtest/gtest.h>

#include "metrics/aggregate.h"
#include "metrics/inputs.h"
#include "metrics/metrics_csv.h"
#include "metrics/run_completeness.h"
#include "run_dir_fixtures.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {
namespace fs = std::filesystem;
using namespace testing_runs;

class MetricsDataWarnings : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = ptxbench::testing::make_temp_dir("data-warnings"); }
  void TearDown() override { fs::remove_all(m_dir); }

  loaded_inputs load_run(const fs::path& dir) {
    input_spec spec;
    spec.run_dirs = {dir};
    auto in = load_inputs(spec);
    EXPECT_TRUE(in) << in.err().message;
    return in ? std::move(*in) : loaded_inputs{};
  }

  fs::path m_dir;
};

TEST_F(MetricsDataWarnings, CompleteRunHasNone) {
  auto in = load_run(run_small());
  EXPECT_TRUE(in.warnings.empty()) << in.warnings.front().message;
  EXPECT_TRUE(in.notes.empty());
  EXPECT_TRUE(in.cpu_only_runs.empty());
}

TEST_F(MetricsDataWarnings, UnfinishedTrajectory) {
  auto dir = copy_run(run_small(), m_dir / "run");
  make_unfinished(dir / "trajectories/base-t0.json", 2);
  auto in = load_run(dir);
  ASSERT_EQ(in.warnings.size(), 1u);
  EXPECT_EQ(in.warnings[0].kind, warning_kind::unfinished_trajectory);
  EXPECT_EQ(in.warnings[0].message, (dir / "trajectories/base-t0.json").string() +
                                        ": unfinished (exit status Running, 2 of 3 turns); re-run the same `ptxbench "
                                        "run` command to finish it");
  EXPECT_EQ(in.records.size(), 11u);  // its two turns still count (one dropped), and the warning says so
}

TEST_F(MetricsDataWarnings, FinalStatusesAreFinished) {
  trajectory t;
  t.file = "t.json";
  t.turn_limit = 3;
  t.turns.resize(2);
  for (auto& r : t.turns) r.label = eval_outcome::compile_error;
  t.exit_status = "Submitted";  // met the target early
  EXPECT_FALSE(unfinished_warning(t));
  t.exit_status = "ContextWindowExceeded";
  EXPECT_FALSE(unfinished_warning(t));
  t.exit_status = "LimitsExceeded";  // says every turn was used, but 2 of 3 are there
  ASSERT_TRUE(unfinished_warning(t));
  EXPECT_EQ(unfinished_warning(t)->message,
            "t.json: unfinished (exit status LimitsExceeded, 2 of 3 turns); re-run the same `ptxbench run` command "
            "to finish it");
  t.exit_status = "";
  EXPECT_EQ(unfinished_warning(t)->message,
            "t.json: unfinished (no exit status, 2 of 3 turns); re-run the same `ptxbench run` command to finish it");
  t.turns.push_back(t.turns[0]);
  t.turns.back().label = eval_outcome::infra_error;  // not a turn of the model
  EXPECT_TRUE(unfinished_warning(t));
  t.turns.back().label = eval_outcome::built;
  EXPECT_FALSE(unfinished_warning(t));
  for (const char* s : {"Running", "Interrupted", "APIError", "AuthError", "InfraError"}) {
    t.exit_status = s;
    EXPECT_TRUE(unfinished_warning(t)) << s;
  }
}

TEST_F(MetricsDataWarnings, PlannedFileMissingAndUnplannedFile) {
  auto dir = copy_run(run_small(), m_dir / "run");
  fs::rename(dir / "trajectories/multicast-t1.json", dir / "trajectories/extra.json");
  auto in = load_run(dir);
  ASSERT_EQ(in.warnings.size(), 2u);
  EXPECT_EQ(in.warnings[0].kind, warning_kind::missing_trajectory);
  EXPECT_EQ(in.warnings[0].message,
            (dir / "trajectories/multicast-t1.json").string() + ": planned in plan.json but missing (its turns are not counted)");
  EXPECT_EQ(in.warnings[1].kind, warning_kind::unplanned_trajectory);
  EXPECT_EQ(in.warnings[1].source, (dir / "trajectories/extra.json").string());
}

TEST_F(MetricsDataWarnings, NoUsablePlan) {
  auto dir = copy_run(run_small(), m_dir / "run");
  fs::remove(dir / "plan.json");
  auto in = load_run(dir);
  ASSERT_EQ(in.warnings.size(), 1u);
  EXPECT_EQ(in.warnings[0].kind, warning_kind::no_plan);
  EXPECT_EQ(in.warnings[0].message,
            (dir / "plan.json").string() + ": missing; trajectories missing from this run cannot be detected");
  ASSERT_TRUE(write_file_atomic(dir / "plan.json", "{\"format\": \"x\"}"));
  EXPECT_NE(load_run(dir).warnings.at(0).message.find("format is 'x', not 'ptxbench.run-plan/1'"), std::string::npos);
}

TEST_F(MetricsDataWarnings, UnreadableFileIsSkippedWithAWarning) {
  auto dir = copy_run(run_small(), m_dir / "run");
  const fs::path file = dir / "trajectories/multicast-t0.json";
  auto text = *read_text_file(file, 1 << 20);
  ASSERT_TRUE(write_file_atomic(file, text.substr(0, text.size() / 2)));  // torn copy
  auto in = load_run(dir);
  ASSERT_EQ(in.warnings.size(), 1u);
  EXPECT_EQ(in.warnings[0].kind, warning_kind::unreadable_trajectory);
  EXPECT_EQ(in.warnings[0].message.rfind(file.string() + ": unreadable (invalid JSON at line ", 0), 0u) << in.warnings[0].message;
  EXPECT_NE(in.warnings[0].message.find("); skipped, its turns are not counted"), std::string::npos);
  EXPECT_EQ(in.runs.at(0).trajectories.size(), 3u);
  // Every file unreadable: nothing to compute from.
  for (const auto& e : fs::directory_iterator(dir / "trajectories")) ASSERT_TRUE(write_file_atomic(e.path(), "{"));
  input_spec spec;
  spec.run_dirs = {dir};
  auto none = load_inputs(spec);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.err().message.rfind((dir / "trajectories").string() + ": none of its 4 trajectory files could be read", 0), 0u)
      << none.err().message;
}

TEST_F(MetricsDataWarnings, MalformedFileIsStillRefused) {
  auto dir = copy_run(run_small(), m_dir / "run");
  const fs::path file = dir / "trajectories/base-t0.json";
  auto j = *parse_json(*read_text_file(file, 1 << 20), "x");
  j["messages"][5]["extra"]["turn"] = 0;  // the second turn numbered like the first: one turn counted twice
  ASSERT_TRUE(write_file_atomic(file, dump_pretty(j)));
  input_spec spec;
  spec.run_dirs = {dir};
  auto in = load_inputs(spec);
  ASSERT_FALSE(in);
  EXPECT_EQ(in.err().message, file.string() + ": messages[5].extra.turn: turn 0 follows counted turn 0; counted turns "
                                              "must be numbered upwards (only an infra_error turn repeats a number)");
}

TEST_F(MetricsDataWarnings, RunDirGivenTwiceIsReadOnce) {
  input_spec spec;
  spec.run_dirs = {run_small(), run_small() / "trajectories" / ".."};
  auto in = load_inputs(spec);
  ASSERT_TRUE(in) << in.err().message;
  EXPECT_EQ(in->records.size(), 12u);
  EXPECT_EQ(in->runs.size(), 1u);
  ASSERT_EQ(in->warnings.size(), 1u);
  EXPECT_EQ(in->warnings[0].kind, warning_kind::repeated_run_dir);
  EXPECT_EQ(in->warnings[0].message, (run_small() / "trajectories" / "..").string() + ": the same run directory as " +
                                         run_small().string() + ", given again; read once");
}

TEST_F(MetricsDataWarnings, CpuOnlyRunIsNoted) {
  auto in = load_run(run_cpu_only());
  EXPECT_TRUE(in.warnings.empty()) << in.warnings.front().message;
  ASSERT_EQ(in.cpu_only_runs.size(), 1u);
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_NE(in.notes[0].find("nothing ran on a GPU (`ptxbench run --cpu-only`)"), std::string::npos);
  EXPECT_EQ(in.sources[0]["cpu_only"], true);
}

// Every row twice (1,728 rows for 864 turns): the copies are dropped with one warning and every
// number equals the single copy's.
TEST_F(MetricsDataWarnings, DoubledUpstreamRowsCountOnce) {
  input_spec once, twice;
  once.upstream_turns = upstream_subset();
  twice.upstream_turns = doubled_upstream(m_dir / "doubled.csv");
  auto a = load_inputs(once), b = load_inputs(twice);
  ASSERT_TRUE(a && b) << (b ? "" : b.err().message);
  EXPECT_EQ(b->records.size(), 864u);
  ASSERT_EQ(b->warnings.size(), 1u);
  EXPECT_EQ(b->warnings[0].kind, warning_kind::duplicate_rows);
  EXPECT_EQ(b->warnings[0].message,
            (m_dir / "doubled.csv").string() +
                ": 864 duplicated rows dropped: identical copies of earlier rows with the same model, arch, definition, "
                "exp_dir, trajectory_id and turn (first: line 3, a copy of line 2); 864 turns counted");
  const metrics_options opt;
  auto ta = compute_metrics(group_turns(a->records), opt), tb = compute_metrics(group_turns(b->records), opt);
  EXPECT_EQ(turn_rates_csv(ta.turn_rates), turn_rates_csv(tb.turn_rates));
  EXPECT_EQ(trajectory_rates_csv(ta.trajectory_rates), trajectory_rates_csv(tb.trajectory_rates));
  EXPECT_EQ(best_speedup_csv(ta.best_speedups), best_speedup_csv(tb.best_speedups));
  EXPECT_EQ(fast_p_csv(ta.fast_p), fast_p_csv(tb.fast_p));
  EXPECT_EQ(records_to_csv(a->records), records_to_csv(b->records));
}

TEST_F(MetricsDataWarnings, ConflictingUpstreamDuplicateIsRefused) {
  input_spec spec;
  spec.upstream_turns = doubled_upstream(m_dir / "conflict.csv", 3);
  auto in = load_inputs(spec);
  ASSERT_FALSE(in);
  EXPECT_EQ(in.err().message, (m_dir / "conflict.csv").string() +
                                  ":5: the turn of line 4 again (run /home/ubuntu/AccRL-exps/eval_runs/opus48-b200-gemm, "
                                  "trajectory exp_000, turn 1) with different content (correctness: 'Compilation error' "
                                  "vs 'Runtime error'); which row is right cannot be known, so nothing is computed");
}

TEST_F(MetricsDataWarnings, WarningsFileAndJson) {
  std::vector<data_warning> w = {{warning_kind::missing_trajectory, "r/t.json", "r/t.json: planned, but \"missing\""}};
  EXPECT_EQ(warnings_csv(w), "kind,source,message\nmissing_trajectory,r/t.json,\"r/t.json: planned, but \"\"missing\"\"\"\n");
  EXPECT_EQ(warnings_csv({}), "kind,source,message\n");
  EXPECT_EQ(warnings_json(w).dump(),
            R"([{"kind":"missing_trajectory","source":"r/t.json","message":"r/t.json: planned, but \"missing\""}])");
}

}  // namespace
}  // namespace ptxbench::metrics
