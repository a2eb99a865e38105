#include "metrics/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace ptxbench::metrics {
namespace {

constexpr int k_left = 46, k_top = 26, k_bottom = 38, k_legend_width = 180, k_legend_row = 14;

struct frame {
  double x0, x1, y0, y1;        // data range
  double px0, px1, py0, py1;    // plot area in pixels (py0 is the bottom)
  [[nodiscard]] double sx(double x) const { return px0 + (x - x0) / (x1 - x0) * (px1 - px0); }
  [[nodiscard]] double sy(double y) const { return py0 - (y - y0) / (y1 - y0) * (py0 - py1); }
};

std::string num(double v) { return fmt::format("{:.1f}", v); }
std::string tick_text(double v) { return fmt::format("{:g}", std::abs(v) < 1e-12 ? 0.0 : v); }

std::string svg_open(int w, int h, const std::string& title) {
  return fmt::format(
      "<svg class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"10\">"
      "<text x=\"{3}\" y=\"15\" font-size=\"12\" font-weight=\"bold\">{2}</text>",
      w, h, xml_escape(title), k_left);
}

std::string axes(const frame& f, const std::vector<double>& xt, const std::vector<double>& yt, const std::string& xl,
                 const std::string& yl) {
  std::string s;
  for (double y : yt) {
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>", num(f.px0), num(f.sy(y)),
                     num(f.px1), num(f.sy(y)));
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(f.px0 - 4), num(f.sy(y) + 3), tick_text(y));
  }
  for (double x : xt)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(f.sx(x)), num(f.py0 + 13), tick_text(x));
  s += fmt::format("<path d=\"M{} {}V{}H{}\" fill=\"none\" stroke=\"#555\"/>", num(f.px0), num(f.py1), num(f.py0), num(f.px1));
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num((f.px0 + f.px1) / 2), num(f.py0 + 30),
                   xml_escape(xl));
  s += fmt::format("<text transform=\"translate(11 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
                   num((f.py0 + f.py1) / 2), xml_escape(yl));
  return s;
}

std::string legend_entry(int x, int y, const std::string& name, const std::string& color, bool dashed, bool box) {
  std::string mark = box ? fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>", x, y - 8, color)
                         : fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                                       x, y - 3, x + 14, y - 3, color, dashed ? " stroke-dasharray=\"4 2\"" : "");
  std::string label = name.size() > 30 ? name.substr(0, 29) + "…" : name;
  return mark + fmt::format("<text x=\"{}\" y=\"{}\"><title>{}</title>{}</text>", x + 18, y, xml_escape(name), xml_escape(label));
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view palette_color(std::size_t index) {
  static constexpr std::array<std::string_view, 20> k_colors = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#79706e",
      "#a0cbe8", "#ffbe7d", "#ff9d9a", "#86bcb6", "#8cd17d", "#b6992d", "#d4a6c8", "#fabfd2", "#d7b5a6", "#bab0ac"};
  return k_colors[index % k_colors.size()];
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  if (!(hi > lo)) hi = lo + 1;
  double raw = (hi - lo) / std::max(1, max_ticks - 1);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) { step = m * mag; break; }
  // Tick k is k*step; for steps below 1 divide by 1/step instead, so 3 x 0.2 prints as 0.6.
  const double inverse = step < 1 ? std::round(1 / step) : 0;
  std::vector<double> out;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1)
    out.push_back(inverse > 0 ? k / inverse : k * step);
  return out;
}

std::string render_line_chart(const line_chart& c) {
  double x0 = 1e300, x1 = -1e300, y1 = 0;
  for (const auto& s : c.series) {
    for (double x : s.x) { x0 = std::min(x0, x); x1 = std::max(x1, x); }
    for (double y : s.y) y1 = std::max(y1, y);
    for (double y : s.band_high) y1 = std::max(y1, y);
  }
  const int height = std::max(c.height_px, k_top + 8 + k_legend_row * static_cast<int>(c.series.size()));
  std::string svg = svg_open(c.width_px + k_legend_width, height, c.title);
  if (x0 > x1) return svg + fmt::format("<text x=\"{}\" y=\"60\">no data</text></svg>", k_left);
  x0 = c.x_min.value_or(x0);
  x1 = c.x_max.value_or(x1);
  if (!(x1 > x0)) x1 = x0 + 1;
  double ylo = c.y_min.value_or(0), yhi = c.y_max.value_or(y1 > 0 ? y1 * 1.05 : 1);
  frame f{x0, x1, ylo, yhi, double(k_left), double(c.width_px - 8), double(c.height_px - k_bottom), double(k_top)};
  auto yt = nice_ticks(ylo, yhi, 6);
  f.y1 = std::max(yhi, yt.back());
  svg += axes(f, c.x_ticks.empty() ? nice_ticks(x0, x1, 8) : c.x_ticks, yt, c.x_label, c.y_label);
  for (const auto& s : c.series) {
    if (s.band_low.size() != s.x.size() || s.band_high.size() != s.x.size() || s.x.empty()) continue;
    std::string pts;
    for (std::size_t i = 0; i < s.x.size(); ++i) pts += fmt::format("{},{} ", num(f.sx(s.x[i])), num(f.sy(s.band_high[i])));
    for (std::size_t i = s.x.size(); i-- > 0;) pts += fmt::format("{},{} ", num(f.sx(s.x[i])), num(f.sy(s.band_low[i])));
    svg += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.15\" stroke=\"none\"/>", pts, s.color);
  }
  int legend_y = k_top + 8;
  for (const auto& s : c.series) {
    std::string d;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      d += fmt::format("{}{} {}", i == 0 ? "M" : "L", num(f.sx(s.x[i])), num(f.sy(s.y[i])));
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{}><title>{}</title></path>", d,
                       s.color, s.dashed ? " stroke-dasharray=\"5 3\"" : "", xml_escape(s.name));
    if (s.markers)
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{}\"><title>{}: {:g}</title></circle>",
                           num(f.sx(s.x[i])), num(f.sy(s.y[i])), s.color, xml_escape(s.name), s.y[i]);
    svg += legend_entry(c.width_px + 6, legend_y, s.name, s.color, s.dashed, false);
    legend_y += k_legend_row;
  }
  return svg + "</svg>";
}

std::string render_stacked_bars(const stacked_bar_chart& c) {
  const std::size_t n = c.categories.size();
  std::vector<double> totals(n, 0);
  for (const auto& l : c.layers)
    for (std::size_t i = 0; i < n && i < l.values.size(); ++i) totals[i] += l.values[i];
  const int height = std::max(c.height_px, k_top + 8 + k_legend_row * static_cast<int>(c.layers.size()));
  std::string svg = svg_open(c.width_px + k_legend_width, height, c.title);
  double top = n ? *std::max_element(totals.begin(), totals.end()) : 0;
  if (!(top > 0)) return svg + fmt::format("<text x=\"{}\" y=\"60\">no data</text></svg>", k_left);
  auto yt = nice_ticks(0, top, 6);
  frame f{-0.5, double(n) - 0.5, 0, std::max(top, yt.back()), double(k_left), double(c.width_px - 8),
          double(c.height_px - k_bottom), double(k_top)};
  std::vector<double> xt;
  svg += axes(f, xt, yt, c.x_label, c.y_label);
  const double bar_w = (f.px1 - f.px0) / double(n) * 0.7;
  for (std::size_t i = 0; i < n; ++i) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(f.sx(double(i))), num(f.py0 + 13),
                       xml_escape(c.categories[i]));
    double base = 0;
    for (const auto& l : c.layers) {
      double v = i < l.values.size() ? l.values[i] : 0;
      if (v <= 0) continue;
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} {}: {:g}</title></rect>",
                         num(f.sx(double(i)) - bar_w / 2), num(f.sy(base + v)), num(bar_w), num(f.sy(base) - f.sy(base + v)),
                         l.color, xml_escape(c.categories[i]), xml_escape(l.name), v);
      base += v;
    }
  }
  int legend_y = k_top + 8;
  for (auto it = c.layers.rbegin(); it != c.layers.rend(); ++it) {  // top layer first, as stacked
    svg += legend_entry(c.width_px + 6, legend_y, it->name, it->color, false, true);
    legend_y += k_legend_row;
  }
  return svg + "</svg>";
}

}  // namespace ptxbench::metrics
