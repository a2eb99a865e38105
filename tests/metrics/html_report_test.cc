// The HTML report as text: sections present, self-contained, texts escaped. (report_browser_test.cc
// renders it in Chromium.)
#include <regex>

#include <gtest/gtest.h>

#include "metrics/html_report.h"
#include "metrics/inputs.h"
#include "run_dir_fixtures.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {

loaded_inputs fixture_inputs() {
  input_spec spec;
  spec.run_dirs = {testing::fixtures_dir() / "trajectories/run_small"};
  auto in = load_inputs(spec);
  EXPECT_TRUE(in) << in.err().message;
  return *in;
}

std::size_t count_in(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(MetricsHtmlReport, HasEverySection) {
  auto html = render_html_report(fixture_inputs(), {});
  for (const char* id : {"id=\"table1\"", "id=\"curves\"", "id=\"labels\"", "id=\"strips\"", "id=\"report-errors\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  // Table 1 cell of the fixture at <=1/<=4/<=8: target 1/4, 3/11, 3/11; plain 1/4, 5/11, 5/11.
  EXPECT_NE(html.find("<b>25.0 / 27.3 / 27.3</b><br><span class=\"plain\">(25.0 / 45.5 / 45.5)</span>"), std::string::npos);
  EXPECT_EQ(count_in(html, "<svg class=\"chart\""), 5u);  // Fast_p, Fast^Inst_p, 2 best-speedup, 1 label bar chart
  // 12 turn cells (the infra error included, dashed), each linking to its texts.
  EXPECT_EQ(count_in(html, "<a class=\"cell"), 12u);
  EXPECT_EQ(count_in(html, "<a class=\"cell infra\""), 1u);
  EXPECT_EQ(count_in(html, "<a class=\"cell tc\""), 3u);
  EXPECT_NE(html.find("href=\"#turn-0\""), std::string::npos);
  EXPECT_NE(html.find("<details class=\"turn\" id=\"turn-0\">"), std::string::npos);
  EXPECT_NE(html.find("Rejected: cublas_v2.h is a vendor library header."), std::string::npos);
}

TEST(MetricsHtmlReport, IsSelfContained) {
  auto html = render_html_report(fixture_inputs(), {});
  for (const char* pattern : {R"(\ssrc\s*=)", R"(href\s*=\s*"(?!#))", R"(url\s*\()", R"(@import)", R"(<link\b)",
                              R"(<iframe\b)", R"(<img\b)", R"(https?://)"})
    EXPECT_FALSE(std::regex_search(html, std::regex(pattern, std::regex::icase))) << pattern;
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
}

TEST(MetricsHtmlReport, EscapesModelWrittenText) {
  auto in = fixture_inputs();
  in.runs[0].trajectories[0].texts[0].kernel = "</pre><script>alert(1)</script>";
  in.runs[0].trajectories[0].texts[0].feedback = std::string(100, 'x') + "é";
  report_options opt;
  opt.max_text_bytes = 101;  // cuts inside the two-byte é: the cut backs off to a whole character
  auto html = render_html_report(in, opt);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find(std::string(100, 'x') + "\n… [2 more bytes not shown; see the trajectory file]"), std::string::npos);
}

TEST(MetricsHtmlReport, UpstreamRowsHaveNoLinks) {
  input_spec spec;
  spec.upstream_turns = testing::fixtures_dir() / "upstream/turns_subset.csv";
  auto in = load_inputs(spec);
  ASSERT_TRUE(in);
  auto html = render_html_report(*in, {});
  EXPECT_EQ(count_in(html, "<span class=\"cell"), 864u + k_all_outcomes.size());  // every turn, plus the legend
  EXPECT_EQ(count_in(html, "<a class=\"cell"), 0u);
  EXPECT_NE(html.find("Claude Opus 4.8"), std::string::npos);
}

TEST(MetricsHtmlReport, ChartsSpeakProperly) {
  auto html = render_html_report(fixture_inputs(), {});
  EXPECT_EQ(html.find("Fast^Inst_p"), std::string::npos);
  EXPECT_EQ(html.find(">Fast_p"), std::string::npos);
  EXPECT_NE(html.find(">Fast<tspan baseline-shift=\"super\" font-size=\"9\">Inst</tspan><tspan baseline-shift=\"sub\" "
                      "font-size=\"9\">p</tspan> (gemm_n7168_k5120, sm_90a)</text>"),
            std::string::npos);
  EXPECT_NE(html.find(">Fast<tspan baseline-shift=\"sub\" font-size=\"9\">p</tspan> (gemm_n7168_k5120, sm_90a)</text>"),
            std::string::npos);
  // 1.0x on both best-speedup charts, p = 1 on both Fast_p charts.
  EXPECT_EQ(count_in(html, ">1.0× = reference</text>"), 2u);
  EXPECT_EQ(count_in(html, ">p = 1</text>"), 2u);
  EXPECT_EQ(count_in(html, "<path class=\"gap\""), 0u);  // a correct turn with a speedup from T = 1 on
}

TEST(MetricsHtmlReport, CleanRunHasNoBanner) {
  auto html = render_html_report(fixture_inputs(), {});
  EXPECT_EQ(html.find("id=\"report-warnings\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"report-cpu-only\""), std::string::npos);
}

TEST(MetricsHtmlReport, IncompleteRunShowsTheWarningsBanner) {
  auto dir = testing::make_temp_dir("html-incomplete");
  auto run = testing_runs::incomplete_run(dir / "run");
  input_spec spec;
  spec.run_dirs = {run};
  auto in = load_inputs(spec);
  ASSERT_TRUE(in) << in.err().message;
  auto html = render_html_report(*in, {});
  auto banner = html.find("<div id=\"report-warnings\" class=\"banner warn\" role=\"alert\"><p><b>2 warnings about the "
                          "data behind these numbers.</b>");
  ASSERT_NE(banner, std::string::npos);
  EXPECT_LT(banner, html.find("id=\"table1\""));  // above every number
  EXPECT_NE(html.find("<li data-kind=\"missing_trajectory\">" + (run / "trajectories/multicast-t1.json").string() +
                      ": planned in plan.json but missing (its turns are not counted)</li>"),
            std::string::npos);
  EXPECT_NE(html.find("<li data-kind=\"unfinished_trajectory\">"), std::string::npos);
  EXPECT_NE(html.find("Running · unfinished</td>"), std::string::npos);  // beside its strip too
  std::filesystem::remove_all(dir);
}

TEST(MetricsHtmlReport, CpuOnlyRunShowsWhatTheNumbersMean) {
  input_spec spec;
  spec.run_dirs = {testing_runs::run_cpu_only()};
  auto in = load_inputs(spec);
  ASSERT_TRUE(in) << in.err().message;
  auto html = render_html_report(*in, {});
  EXPECT_NE(html.find("<div id=\"report-cpu-only\" class=\"banner info\" role=\"note\"><p><b>Nothing in this report ran "
                      "on a GPU.</b>"),
            std::string::npos);
  EXPECT_EQ(html.find("id=\"report-warnings\""), std::string::npos);
  // Both turn limits of both best-speedup charts: no speedup, marked, not plotted as 0.
  EXPECT_EQ(count_in(html, "<path class=\"gap\""), 4u);
  // With upstream data beside it, the banner names the CPU-only run instead.
  spec.upstream_turns = testing_runs::upstream_subset();
  auto mixed = render_html_report(*load_inputs(spec), {});
  EXPECT_NE(mixed.find("<b>Nothing in <code>" + testing_runs::run_cpu_only().string() + "</code> ran on a GPU.</b>"),
            std::string::npos);
}

}  // namespace
}  // namespace ptxbench::metrics
