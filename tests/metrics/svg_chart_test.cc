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

TEST(MetricsSvg, XmlEscape) { EXPECT_EQ(xml_escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"); }

}  // namespace
}  // namespace ptxbench::metrics
