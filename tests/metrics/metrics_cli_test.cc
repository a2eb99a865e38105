// `ptxbench metrics` and `ptxbench report` as black boxes. They need the CLI binary; build it with
// `cmake --build build --target ptxbench` (scripts/test.sh builds everything). Skips without it.
#include <filesystem>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/process.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {
namespace fs = std::filesystem;

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
  process_result run(std::vector<std::string> args) {
    process_spec spec;
    spec.argv = {m_bin.string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout_s = 60;
    return run_process(spec);
  }
  std::string file(const std::string& name) { return *read_text_file(m_dir / name, 64 << 20); }

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
  EXPECT_EQ(bad.err, "ptxbench: " + m_dir.string() + ": not a run directory (no trajectories/ folder inside)\n");
  EXPECT_EQ(run({"metrics", m_run, "--turn-limits", "1,a", "--out", m_dir.string()}).exit_code, 2);
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

}  // namespace
}  // namespace ptxbench::metrics
