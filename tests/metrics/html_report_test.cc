// The HTML report as text: sections present, self-contained, texts escaped. (report_browser_test.cc
// renders it in Chromium.)
#include <regex>

#include <gtest/gtest.h>

#include "metrics/html_report.h"
#include "metrics/inputs.h"
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

std::size_t count(const std::string& s, const std::string& what) {
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
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 5u);  // Fast_p, Fast^Inst_p, 2 best-speedup, 1 label bar chart
  // 12 turn cells (the infra error included, dashed), each linking to its texts.
  EXPECT_EQ(count(html, "<a class=\"cell"), 12u);
  EXPECT_EQ(count(html, "<a class=\"cell infra\""), 1u);
  EXPECT_EQ(count(html, "<a class=\"cell tc\""), 3u);
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
  EXPECT_EQ(count(html, "<span class=\"cell"), 864u + k_all_outcomes.size());  // every turn, plus the legend
  EXPECT_EQ(count(html, "<a class=\"cell"), 0u);
  EXPECT_NE(html.find("Claude Opus 4.8"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::metrics
