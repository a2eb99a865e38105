#include <limits>

#include <gtest/gtest.h>

#include "metrics/svg_chart.h"

namespace ptxbench::metrics {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(MetricsSvg, NiceTicks) {
  EXPECT_EQ(nice_ticks(0, 1, 6), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0}));
  EXPECT_EQ(nice_ticks(0, 1.5, 8), (std::vector<double>{0, 0.5, 1.0, 1.5}));  // 0.2 would need 8 intervals
  EXPECT_EQ(nice_ticks(0, 0.15, 6), (std::vector<double>{0, 0.05, 0.1, 0.15}));
  EXPECT_EQ(nice_ticks(1, 8, 8), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(nice_ticks(0, 0, 5), (std::vector<double>{0, 0.5, 1}));  // an empty range still gets an axis
}

TEST(MetricsSvg, LineChartMapsDataToPixels) {
  line_chart c;
  c.title = "T<1>";
  c.width_px = 446;   // plot area x: 46 .. 438
  c.height_px = 264;  // plot area y: 226 (bottom) .. 26 (top)
  c.x_min = 0;
  c.x_max = 1;
  c.y_max = 1;
  c.series.push_back({"a & b", "#123456", {0, 0.5, 1}, {0, 0.5, 1}, {0, 0.25, 0.5}, {0, 0.75, 1}, false, false});
  auto svg = render_line_chart(c);
  EXPECT_EQ(svg.rfind("<svg class=\"chart\" width=\"626\"", 0), 0u) << svg.substr(0, 80);  // + 180 legend
  EXPECT_NE(svg.find("aria-label=\"T&lt;1&gt;\""), std::string::npos);
  EXPECT_NE(svg.find("<path d=\"M46.0 226.0L242.0 126.0L438.0 26.0\" fill=\"none\" stroke=\"#123456\""), std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<polygon points=\"46.0,226.0 242.0,76.0 438.0,26.0 438.0,126.0 242.0,176.0 46.0,226.0 \""),
            std::string::npos);
  EXPECT_NE(svg.find("<title>a &amp; b</title>"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  EXPECT_EQ(count(svg, "<script"), 0u);
}

TEST(MetricsSvg, EmptyChartsSayNoData) {
  EXPECT_NE(render_line_chart({}).find("no data"), std::string::npos);
  stacked_bar_chart b;
  b.categories = {"1"};
  EXPECT_NE(render_stacked_bars(b).find("no data"), std::string::npos);
}

TEST(MetricsSvg, StackedBarsStackInOrder) {
  stacked_bar_chart c;
  c.width_px = 446;
  c.height_px = 264;
  c.categories = {"1", "2"};
  c.layers = {{"ok", "#0f0", {1, 3}}, {"bad", "#f00", {3, 1}}};  // totals 4 and 4
  auto svg = render_stacked_bars(c);
  EXPECT_EQ(count(svg, "<rect"), 4u + 2u);  // 4 segments + 2 legend boxes
  EXPECT_NE(svg.find("<title>1 ok: 1</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>2 bad: 1</title>"), std::string::npos);
  // Category 1: "ok" (1 of 4) sits at the bottom: y from 226 - 50 = 176, height 50.
  EXPECT_NE(svg.find("y=\"176.0\" width=\"137.2\" height=\"50.0\" fill=\"#0f0\""), std::string::npos) << svg;
}

// Long legend names wrap at natural breaks instead of being cut ("replay:examples/agent/gemm_…").
TEST(MetricsSvg, WrapsLegendNames) {
  EXPECT_EQ(wrap_label("replay:examples/agent/gemm_replay.json", 24, 3),
            (std::vector<std::string>{"replay:examples/agent/", "gemm_replay.json"}));
  EXPECT_EQ(wrap_label("Claude Opus 4.8", 24, 3), (std::vector<std::string>{"Claude Opus 4.8"}));
  EXPECT_EQ(wrap_label("Claude Opus 4.8 · opus48-b200-mha-bwd-d128", 24, 3),
            (std::vector<std::string>{"Claude Opus 4.8 ·", "opus48-b200-mha-bwd-d128"}));
  EXPECT_EQ(wrap_label("Claude Opus 4.8 · opus48-b200-mha-bwd-d128-causal", 24, 3),
            (std::vector<std::string>{"Claude Opus 4.8 ·", "opus48-b200-mha-bwd-", "d128-causal"}));
  EXPECT_EQ(wrap_label(std::string(80, 'x'), 24, 3),
            (std::vector<std::string>{std::string(24, 'x'), std::string(24, 'x'), std::string(23, 'x') + "…"}));
  EXPECT_EQ(wrap_label("", 24, 3), (std::vector<std::string>{""}));
  line_chart c;
  c.series.push_back({"replay:examples/agent/gemm_replay.json", "#123456", {0, 1}, {0, 1}, {}, {}, false, false});
  auto svg = render_line_chart(c);
  EXPECT_NE(svg.find("<title>replay:examples/agent/gemm_replay.json</title><tspan x=\"464\" dy=\"0\">replay:examples/agent/"
                     "</tspan><tspan x=\"464\" dy=\"11\">gemm_replay.json</tspan>"),
            std::string::npos)
      << svg;
}

// Fast^Inst_p is drawn with a raised "Inst" and a lowered "p", never as the literal text.
TEST(MetricsSvg, TitlesWithSuperAndSubscripts) {
  line_chart c;
  c.title_runs = {{"Fast"}, {"Inst", text_run::shift::super}, {"p", text_run::shift::sub}, {" (gemm, sm_90a)"}};
  c.series.push_back({"m", "#123456", {0, 1}, {0, 1}, {}, {}, false, false});
  auto svg = render_line_chart(c);
  EXPECT_NE(svg.find(">Fast<tspan baseline-shift=\"super\" font-size=\"9\">Inst</tspan><tspan baseline-shift=\"sub\" "
                     "font-size=\"9\">p</tspan> (gemm, sm_90a)</text>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("aria-label=\"Fast Inst p (gemm, sm_90a)\""), std::string::npos);
  EXPECT_EQ(svg.find("^"), std::string::npos);
}

// A speedup axis has a line at 1.0x, and the y range grows to show it when every speedup is below.
TEST(MetricsSvg, ReferenceLines) {
  line_chart c;
  c.width_px = 446;
  c.height_px = 264;  // plot area y: 226 (bottom) .. 26 (top)
  c.y_refs = {{1.0, "1.0× = reference"}};
  c.x_refs = {{1.0, "p = 1"}, {5.0, "outside"}};
  c.series.push_back({"m", "#123456", {0, 2}, {0.2, 0.5}, {}, {}, false, false});
  auto svg = render_line_chart(c);
  // The data reach 0.5; the line at 1 stretches y to 1.05, so 1 sits at 226 - 200 / 1.05.
  EXPECT_NE(svg.find("<line class=\"ref\" x1=\"46.0\" y1=\"35.5\" x2=\"438.0\" y2=\"35.5\""), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1.0× = reference</text>"), std::string::npos);
  EXPECT_NE(svg.find("<line class=\"ref\" x1=\"242.0\" y1=\"226.0\" x2=\"242.0\" y2=\"26.0\""), std::string::npos) << svg;
  EXPECT_EQ(svg.find("outside"), std::string::npos);  // x = 5 is beyond the data's x range
}

// A point without a value (no correct turn yet) is not drawn as 0: the line breaks, an x sits on the
// axis, and the legend explains it.
TEST(MetricsSvg, GapsAreMarkedNotZero) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  line_chart c;
  c.width_px = 446;
  c.height_px = 264;
  c.x_min = 1;
  c.x_max = 4;
  c.y_max = 2;
  c.gap_label = "no correct turn yet";
  c.series.push_back({"m", "#123456", {1, 2, 3, 4}, {none, 1, none, 2}, {}, {}, false, true});
  auto svg = render_line_chart(c);
  EXPECT_NE(svg.find("<path d=\"M176.7 126.0M438.0 26.0\""), std::string::npos) << svg;
  EXPECT_EQ(count(svg, "<circle"), 2u);
  EXPECT_EQ(count(svg, "<path class=\"gap\""), 2u);
  EXPECT_NE(svg.find("<title>m: no correct turn yet (1)</title>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"gap-key\""), std::string::npos);
  EXPECT_NE(svg.find(">no correct turn yet</tspan>"), std::string::npos);
  c.gap_label.clear();  // without a label: only the gap
  auto plain = render_line_chart(c);
  EXPECT_EQ(count(plain, "class=\"gap"), 0u);
}

TEST(MetricsSvg, XmlEscape) { EXPECT_EQ(xml_escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"); }

}  // namespace
}  // namespace ptxbench::metrics
