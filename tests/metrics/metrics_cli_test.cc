// `ptxbench metrics` and `ptxbench report` as black boxes. They need the CLI binary; build it with
// `cmake --build build --target ptxbench` (scripts/test.sh builds everything). Skips without it.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/process.h"
#include "run_dir_fixtures.h"
#include "cli/cli_test_support.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {
namespace fs = std::filesystem;
using testing::first_line;

class MetricsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    m_bin = testing::bin_dir() / "ptxbench";
    if (!fs::exists(m_bin)) GTEST_SKIP() << m_bin << " not built";
    m_dir = testing::make_temp_dir("metrics-cli");
  }
  void TearDown() override {
    if (!m_dir.empty()) fs::remove_all(m_dir);
  }
  static process_result run(const std::vector<std::string>& args) { return testing::run_cli(args, 60); }
  std::string file(const std::string& name) { return *read_text_file(m_dir / name, 64 << 20); }
  static std::string last_line(const std::string& text) {
    std::string t = text.substr(0, text.size() - (!text.empty() && text.back() == '\n'));
    return t.substr(t.rfind('\n') + 1);
  }

  fs::path m_bin, m_dir;
  const std::string m_run = (testing::fixtures_dir() / "trajectories/run_small").string();
};

TEST_F(MetricsCli, WritesEveryTableAndPrintsTable1) {
  auto r = run({"metrics", m_run, "--turn-limits", "1,2,3", "--fast-p", "0:1:0.5", "--out", m_dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| fixture-model | 25.0 / 25.0 / 27.3 |\n|  | (25.0 / 25.0 / 45.5) |"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("11 turns in 1 runs (1 infra-error turns excluded)"), std::string::npos) << r.err;
  const std::string key = "fixture-model,sm_90a,cuda,gemm_n7168_k5120," + m_run;
  EXPECT_NE(file("turn_rates.csv").find(key + ",3,11,5,3,0.45454545454545453,0.2727272727272727,,\n"), std::string::npos);
  EXPECT_NE(file("trajectory_rates.csv").find(key + ",3,4,4,3,1,0.75\n"), std::string::npos);
  EXPECT_NE(file("best_speedup.csv").find(key + ",2,0.62,0.62\n"), std::string::npos);
  // T=3, p=0.5: base variant 3/6 (1/6 target), multicast 1/5 (1/5 target); mean, then min/max.
  EXPECT_NE(file("fast_p.csv").find(key + ",3,0.5,0.35,0.18333333333333335,11,2,0.2,0.5,0.16666666666666666,0.2\n"),
            std::string::npos)
      << file("fast_p.csv");
  EXPECT_EQ(file("turns.csv").substr(0, 6), "model,");
  EXPECT_EQ(file("turns.json").substr(0, 2), "[\n");
  EXPECT_NE(file("metrics.json").find("\"infra_error_turns_excluded\": 1"), std::string::npos);
}

TEST_F(MetricsCli, BadInputIsOneLineAndExitCode2) {
  auto r = run({"metrics", "--out", m_dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ptxbench: nothing to read: give one or more RUN_DIRs and/or --import-upstream FILE\n");
  auto bad = run({"metrics", m_dir.string(), "--out", m_dir.string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "ptxbench: " + m_dir.string() + ": not a run directory (no trajectories/ folder inside) nor a Harbor job (no trial folder with agent/ or verifier/ inside)\n");
  EXPECT_EQ(run({"metrics", m_run, "--turn-limits", "1,a", "--out", m_dir.string()}).exit_code, 2);
}

TEST_F(MetricsCli, CeilingSetsTheReferenceKernelBesideTheModelsBest) {
  const std::string ref = (testing::fixtures_dir() / "reference/pack_gemm_h100.json").string();
  auto r = run({"metrics", m_run, "--ceiling", ref, "--out", m_dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("## Ceiling: the pack's reference kernel beside the models' best (target-correct, turns < 8)"),
            std::string::npos)
      << r.out;
  // The fixture's run is on h200, the reference on h100: two rows, never compared with each other.
  EXPECT_NE(r.out.find("| h100 | gemm_n7168_k5120 | `examples/gemm/wgmma_tma_pack.cu` | 0.979× (0.979–0.979; 1 of 1 "
                       "target-correct) | no turns | – |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| h200 | gemm_n7168_k5120 | no reference kernel | – |"), std::string::npos) << r.out;
  EXPECT_EQ(first_line(file("ceiling.csv")),
            "target,task,turn_limit,reference_file,reference_evaluations,reference_target_correct,reference_speedup,"
            "reference_speedup_min,reference_speedup_max,models_turns,models_best_target_speedup,best_model,"
            "models_over_reference");
  EXPECT_NE(file("table1.md").find("## Ceiling"), std::string::npos);
  auto missing = run({"metrics", m_run, "--ceiling", (m_dir / "nope.json").string(), "--out", (m_dir / "x").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(first_line(missing.err).find("nope.json"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_FALSE(fs::exists(m_dir / "x")) << "nothing written";
  auto html = m_dir / "r.html";
  ASSERT_EQ(run({"report", m_run, "--ceiling", ref, "--out", html.string()}).exit_code, 0);
  EXPECT_NE(file("r.html").find("<section id=\"ceiling\">"), std::string::npos);
}

TEST_F(MetricsCli, ReportWritesOneHtmlFile) {
  auto out = m_dir / "report.html";
  auto r = run({"report", m_run, "--import-upstream", (testing::fixtures_dir() / "upstream/turns_subset.csv").string(),
                "--out", out.string(), "--title", "CLI test"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto html = file("report.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<h1>CLI test</h1>"), std::string::npos);
  EXPECT_NE(html.find("fixture-model"), std::string::npos);
  EXPECT_NE(html.find("Claude Opus 4.8"), std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(m_dir), fs::directory_iterator()), 1);  // nothing beside it
}

TEST_F(MetricsCli, WritesTable1MarkdownFile) {
  auto r = run({"metrics", m_run, "--out", (m_dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file("out/table1.md"), "# Table 1 (turn correctness)\n\n" + r.out);  // no warnings, no notes: the table
  EXPECT_EQ(file("out/warnings.csv"), "kind,source,message\n");
  EXPECT_NE(file("out/metrics.json").find("\"warnings\": []"), std::string::npos);
}

TEST_F(MetricsCli, UnfinishedTrajectoryIsAWarningEverywhere) {
  auto run_dir = testing_runs::copy_run(m_run, m_dir / "run");
  testing_runs::make_unfinished(run_dir / "trajectories/base-t0.json", 2);
  const std::string warning = (run_dir / "trajectories/base-t0.json").string() +
                              ": unfinished (exit status Running, 2 of 3 turns); re-run the same `ptxbench run` "
                              "command to finish it";
  const auto out = m_dir / "out";
  auto r = run({"metrics", run_dir.string(), "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(first_line(r.err), "ptxbench: warning: " + warning);
  EXPECT_EQ(last_line(r.err), "ptxbench: 1 warning about the data behind these numbers (listed above and in " +
                                  out.string() + "/warnings.csv, table1.md and metrics.json); --strict refuses such data");
  EXPECT_NE(file("out/warnings.csv").find("unfinished_trajectory," + (run_dir / "trajectories/base-t0.json").string()),
            std::string::npos);
  EXPECT_NE(file("out/table1.md").find("> - " + warning + "\n"), std::string::npos) << file("out/table1.md");
  auto meta = parse_json(file("out/metrics.json"), "metrics.json");
  ASSERT_TRUE(meta);
  ASSERT_EQ((*meta)["warnings"].size(), 1u);
  EXPECT_EQ((*meta)["warnings"][0]["kind"], "unfinished_trajectory");
  EXPECT_EQ((*meta)["warnings"][0]["message"], warning);
}

TEST_F(MetricsCli, MissingPlannedFileIsAWarning) {
  auto run_dir = testing_runs::incomplete_run(m_dir / "run");
  auto r = run({"metrics", run_dir.string(), "--out", (m_dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(first_line(r.err), "ptxbench: warning: " + (run_dir / "trajectories/multicast-t1.json").string() +
                                   ": planned in plan.json but missing (its turns are not counted)");
  EXPECT_NE(r.err.find("ptxbench: 2 warnings about the data behind these numbers"), std::string::npos) << r.err;
}

TEST_F(MetricsCli, StrictRefusesWarningsAndWritesNothing) {
  auto run_dir = testing_runs::incomplete_run(m_dir / "run");
  for (const char* cmd : {"metrics", "report"}) {
    const auto out = m_dir / (std::string(cmd) + "-out");
    auto r = run({cmd, run_dir.string(), "--strict", "--out", out.string()});
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.err;
    EXPECT_EQ(first_line(r.err), "ptxbench: warning: " + (run_dir / "trajectories/multicast-t1.json").string() +
                                     ": planned in plan.json but missing (its turns are not counted)");
    EXPECT_EQ(last_line(r.err), "ptxbench: --strict: 2 warnings above; nothing written") << cmd;
    EXPECT_FALSE(fs::exists(out)) << cmd;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(run({"metrics", m_run, "--strict", "--out", (m_dir / "clean").string()}).exit_code, 0);
}

TEST_F(MetricsCli, DoubledUpstreamRowsAreCountedOnce) {
  auto once = run({"metrics", "--import-upstream", testing_runs::upstream_subset().string(), "--out", (m_dir / "once").string()});
  ASSERT_EQ(once.exit_code, 0) << once.err;
  auto doubled = testing_runs::doubled_upstream(m_dir / "doubled.csv");
  auto r = run({"metrics", "--import-upstream", doubled.string(), "--out", (m_dir / "twice").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(first_line(r.err), "ptxbench: warning: " + doubled.string() +
                                   ": 864 duplicated rows dropped: identical copies of earlier rows with the same model, "
                                   "arch, definition, exp_dir, trajectory_id and turn (first: line 3, a copy of line 2); "
                                   "864 turns counted");
  EXPECT_NE(r.err.find("ptxbench: 864 turns in 8 runs"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, once.out);
  for (const char* f : {"turn_rates.csv", "trajectory_rates.csv", "best_speedup.csv", "fast_p.csv", "turns.csv"})
    EXPECT_EQ(file(std::string("twice/") + f), file(std::string("once/") + f)) << f;
  auto strict = run({"metrics", "--import-upstream", doubled.string(), "--strict", "--out", (m_dir / "strict").string()});
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_EQ(last_line(strict.err), "ptxbench: --strict: 1 warning above; nothing written");
}

TEST_F(MetricsCli, ConflictingDuplicateRowsAreRefused) {
  auto conflict = testing_runs::doubled_upstream(m_dir / "conflict.csv", 3);
  for (const char* cmd : {"metrics", "report"}) {
    auto r = run({cmd, "--import-upstream", conflict.string(), "--out", (m_dir / "out").string()});
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_EQ(r.err, "ptxbench: " + conflict.string() +
                         ":5: the turn of line 4 again (run /home/ubuntu/AccRL-exps/eval_runs/opus48-b200-gemm, "
                         "trajectory exp_000, turn 1) with different content (correctness: 'Compilation error' vs "
                         "'Runtime error'); which row is right cannot be known, so nothing is computed\n");
    EXPECT_FALSE(fs::exists(m_dir / "out"));
  }
}

// Every numeric option of metrics and report: one line, exit 2, nothing written, and fast (nan in
// --fast-p once grew memory for a minute and died with std::bad_alloc).
TEST_F(MetricsCli, BadNumbersAreOneLineAndExitCode2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--fast-p", "nan:1:0.1"}, "--fast-p: FROM must be a finite number, got 'nan' in 'nan:1:0.1'"},
      {{"--fast-p", "0:inf:0.1"}, "--fast-p: TO must be a finite number, got 'inf' in '0:inf:0.1'"},
      {{"--fast-p", "-1:1:0.1"}, "--fast-p: FROM must be at least 0 (p is a speedup), got '-1:1:0.1'"},
      {{"--fast-p", "2:1:0.1"}, "--fast-p: TO must not be below FROM, got '2:1:0.1'"},
      {{"--fast-p", "0:1:0"}, "--fast-p: STEP must be at least 1e-9, got '0:1:0'"},
      {{"--fast-p", "0:1000000:0.00001"}, "--fast-p: '0:1000000:0.00001' makes more than 10001 points; use a larger STEP"},
      {{"--turn-limits", "0"}, "--turn-limits: expected positive integers separated by commas, got '0'"},
      {{"--turn-limits", "1,nan"}, "--turn-limits: expected positive integers separated by commas, got 'nan'"},
      {{"--turn-limits", "1000000000"}, "--turn-limits: 1000000000 is more turns than a trajectory can have (at most 100000)"},
      {{"--min-coverage", "nan"}, "--min-coverage: expected a share from 0 to 1 (0.9 = 90%), got 'nan'"},
      {{"--min-coverage", "90"}, "--min-coverage: expected a share from 0 to 1 (0.9 = 90%), got '90'"},
      {{"--min-coverage", "-1"}, "--min-coverage: expected a share from 0 to 1 (0.9 = 90%), got '-1'"},
      {{"--variant-block", "2.5"}, "--variant-block: expected a whole number from 0 to 1000, got '2.5'"},
      {{"--variant-block", "-1"}, "--variant-block: expected a whole number from 0 to 1000, got '-1'"},
  };
  for (const char* cmd : {"metrics", "report"}) {
    for (const auto& [args, message] : cases) {
      std::vector<std::string> argv = {cmd, m_run, "--out", (m_dir / "out").string()};
      argv.insert(argv.end(), args.begin(), args.end());
      auto r = run(argv);
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << args[0] << " " << args[1];
      EXPECT_EQ(r.err, "ptxbench: " + message + "\n");
      EXPECT_FALSE(fs::exists(m_dir / "out"));
    }
  }
}

TEST_F(MetricsCli, ReportSaysHowManyWarnings) {
  auto run_dir = testing_runs::incomplete_run(m_dir / "run");
  auto r = run({"report", run_dir.string(), "--out", (m_dir / "r.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(last_line(r.err), "ptxbench: 2 warnings about the data behind these numbers (listed above and in the "
                              "report's banner); --strict refuses such data");
  EXPECT_NE(file("r.html").find("id=\"report-warnings\""), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::metrics
