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

// `title_markup` is the drawn title (escaped text and tspans); `title` the accessible name.
std::string svg_open(int w, int h, const std::string& title, const std::string& title_markup) {
  return fmt::format(
      "<svg class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"10\">"
      "<text x=\"{3}\" y=\"15\" font-size=\"12\" font-weight=\"bold\">{4}</text>",
      w, h, xml_escape(title), k_left, title_markup);
}

std::string svg_open(int w, int h, const std::string& title) { return svg_open(w, h, title, xml_escape(title)); }

std::string runs_markup(const std::vector<text_run>& runs) {
  std::string out;
  for (const auto& r : runs) {
    if (r.where == text_run::shift::none) out += xml_escape(r.text);
    else
      out += fmt::format("<tspan baseline-shift=\"{}\" font-size=\"9\">{}</tspan>",
                         r.where == text_run::shift::super ? "super" : "sub", xml_escape(r.text));
  }
  return out;
}

// The accessible name of a title drawn from runs: "Fast Inst p (…)" for Fast^Inst_p.
std::string runs_plain(const std::vector<text_run>& runs) {
  std::string out;
  for (const auto& r : runs) out += (r.where == text_run::shift::none || out.empty() ? "" : " ") + r.text;
  return out;
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

constexpr std::size_t k_legend_chars = 24;  // about 150 px of 10 px sans-serif: fits the legend column
constexpr int k_legend_line = 11;

struct legend_item {
  std::string svg;
  int height = 0;  ///< pixels taken, one row plus one line per wrapped line
};

// A legend row: a line (or box) in the series' color, then the name, wrapped; the whole name is the
// hover text.
legend_item legend_entry(int x, int y, const std::string& name, const std::string& color, bool dashed, bool box) {
  std::string mark = box ? fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>", x, y - 8, color)
                         : fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                                       x, y - 3, x + 14, y - 3, color, dashed ? " stroke-dasharray=\"4 2\"" : "");
  auto lines = wrap_label(name, k_legend_chars, 3);
  std::string text = fmt::format("<text x=\"{}\" y=\"{}\"><title>{}</title>", x + 18, y, xml_escape(name));
  for (std::size_t i = 0; i < lines.size(); ++i)
    text += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", x + 18, i == 0 ? 0 : k_legend_line, xml_escape(lines[i]));
  return {mark + text + "</text>", k_legend_row + k_legend_line * static_cast<int>(lines.size() - 1)};
}

int legend_height(const std::vector<std::string>& names) {
  int h = 0;
  for (const auto& n : names) h += k_legend_row + k_legend_line * static_cast<int>(wrap_label(n, k_legend_chars, 3).size() - 1);
  return h;
}

// UTF-8 code points of s, each as its bytes.
std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = 1;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xF0) n = 4;
    else if (c >= 0xE0) n = 3;
    else if (c >= 0xC0) n = 2;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

bool break_after(const std::string& cp) {
  return cp == "/" || cp == ":" || cp == "_" || cp == "-" || cp == "." || cp == " " || cp == "\u00b7";
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

std::vector<std::string> wrap_label(const std::string& name, std::size_t width, std::size_t max_lines) {
  auto cps = code_points(name);
  std::vector<std::string> lines;
  std::size_t at = 0;
  auto join = [&](std::size_t from, std::size_t to) {
    std::string s;
    for (std::size_t i = from; i < to; ++i) s += cps[i];
    return s;
  };
  while (at < cps.size() && lines.size() < max_lines) {
    const std::size_t left = cps.size() - at;
    if (left <= width) {
      lines.push_back(join(at, cps.size()));
      at = cps.size();
      break;
    }
    if (lines.size() + 1 == max_lines) {  // the last line: cut with an ellipsis
      lines.push_back(join(at, at + width - 1) + "\u2026");
      at = cps.size();
      break;
    }
    std::size_t cut = at + width;
    for (std::size_t i = at + width; i > at + width / 2; --i)
      if (break_after(cps[i - 1])) { cut = i; break; }
    std::string line = join(at, cut);
    while (!line.empty() && line.back() == ' ') line.pop_back();  // nor ends with one
    lines.push_back(std::move(line));
    at = cut;
    while (at < cps.size() && cps[at] == " ") ++at;  // no line starts with a space
  }
  if (lines.empty()) lines.emplace_back();
  return lines;
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
  bool gaps = false;
  for (const auto& s : c.series) {
    for (double x : s.x) { x0 = std::min(x0, x); x1 = std::max(x1, x); }
    for (double y : s.y) {
      if (std::isfinite(y)) y1 = std::max(y1, y);
      else gaps = true;
    }
    for (double y : s.band_high) if (std::isfinite(y)) y1 = std::max(y1, y);
  }
  const bool gap_entry = gaps && !c.gap_label.empty();
  std::vector<std::string> names;
  for (const auto& s : c.series) names.push_back(s.name);
  if (gap_entry) names.push_back(c.gap_label);
  const int height = std::max(c.height_px, k_top + 8 + legend_height(names));
  const std::string title = c.title_runs.empty() ? c.title : c.title.empty() ? runs_plain(c.title_runs) : c.title;
  std::string svg = svg_open(c.width_px + k_legend_width, height, title,
                             c.title_runs.empty() ? xml_escape(c.title) : runs_markup(c.title_runs));
  if (x0 > x1) return svg + fmt::format("<text x=\"{}\" y=\"60\">no data</text></svg>", k_left);
  x0 = c.x_min.value_or(x0);
  x1 = c.x_max.value_or(x1);
  if (!(x1 > x0)) x1 = x0 + 1;
  for (const auto& r : c.y_refs) y1 = std::max(y1, r.value);
  double ylo = c.y_min.value_or(0), yhi = c.y_max.value_or(y1 > 0 ? y1 * 1.05 : 1);
  frame f{x0, x1, ylo, yhi, double(k_left), double(c.width_px - 8), double(c.height_px - k_bottom), double(k_top)};
  auto yt = nice_ticks(ylo, yhi, 6);
  f.y1 = std::max(yhi, yt.back());
  svg += axes(f, c.x_ticks.empty() ? nice_ticks(x0, x1, 8) : c.x_ticks, yt, c.x_label, c.y_label);
  for (const auto& r : c.y_refs) {
    if (r.value < f.y0 || r.value > f.y1) continue;
    svg += fmt::format("<line class=\"ref\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\" "
                       "stroke-dasharray=\"6 3\"/><text x=\"{3}\" y=\"{4}\" fill=\"#666\">{5}</text>",
                       num(f.px0), num(f.sy(r.value)), num(f.px1), num(f.px0 + 4), num(f.sy(r.value) - 3), xml_escape(r.label));
  }
  for (const auto& r : c.x_refs) {
    if (r.value < f.x0 || r.value > f.x1) continue;
    svg += fmt::format("<line class=\"ref\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\" "
                       "stroke-dasharray=\"6 3\"/><text x=\"{3}\" y=\"{4}\" fill=\"#666\">{5}</text>",
                       num(f.sx(r.value)), num(f.py0), num(f.py1), num(f.sx(r.value) + 3), num(f.py1 + 10), xml_escape(r.label));
  }
  for (const auto& s : c.series) {
    if (s.band_low.size() != s.x.size() || s.band_high.size() != s.x.size() || s.x.empty()) continue;
    std::string pts;
    for (std::size_t i = 0; i < s.x.size(); ++i) pts += fmt::format("{},{} ", num(f.sx(s.x[i])), num(f.sy(s.band_high[i])));
    for (std::size_t i = s.x.size(); i-- > 0;) pts += fmt::format("{},{} ", num(f.sx(s.x[i])), num(f.sy(s.band_low[i])));
    svg += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.15\" stroke=\"none\"/>", pts, s.color);
  }
  int legend_y = k_top + 8;
  for (const auto& s : c.series) {
    // A NaN ends the line; the next value starts a new piece.
    std::string d;
    bool pen_down = false;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i])) { pen_down = false; continue; }
      d += fmt::format("{}{} {}", pen_down ? "L" : "M", num(f.sx(s.x[i])), num(f.sy(s.y[i])));
      pen_down = true;
    }
    if (!d.empty())
      svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{}><title>{}</title></path>", d,
                         s.color, s.dashed ? " stroke-dasharray=\"5 3\"" : "", xml_escape(s.name));
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (std::isfinite(s.y[i])) {
        if (s.markers)
          svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{}\"><title>{}: {:g}</title></circle>",
                             num(f.sx(s.x[i])), num(f.sy(s.y[i])), s.color, xml_escape(s.name), s.y[i]);
      } else if (gap_entry) {
        const double px = f.sx(s.x[i]), py = f.py0;
        svg += fmt::format("<path class=\"gap\" d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"{}\" stroke-width=\"1.5\">"
                           "<title>{}: {} ({:g})</title></path>",
                           num(px - 3.5), num(py - 3.5), num(px + 3.5), num(py + 3.5), num(px - 3.5), num(py + 3.5),
                           num(px + 3.5), num(py - 3.5), s.color, xml_escape(s.name), xml_escape(c.gap_label), s.x[i]);
      }
    }
    auto entry = legend_entry(c.width_px + 6, legend_y, s.name, s.color, s.dashed, false);
    svg += entry.svg;
    legend_y += entry.height;
  }
  if (gap_entry) {
    const int x = c.width_px + 6;
    svg += fmt::format("<path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#555\" stroke-width=\"1.5\"/>", x + 3, legend_y - 7,
                       x + 10, legend_y, x + 3, legend_y, x + 10, legend_y - 7);
    auto lines = wrap_label(c.gap_label, k_legend_chars, 3);
    std::string text = fmt::format("<text class=\"gap-key\" x=\"{}\" y=\"{}\" fill=\"#444\">", x + 18, legend_y);
    for (std::size_t i = 0; i < lines.size(); ++i)
      text += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", x + 18, i == 0 ? 0 : k_legend_line, xml_escape(lines[i]));
    svg += text + "</text>";
  }
  return svg + "</svg>";
}

std::string render_stacked_bars(const stacked_bar_chart& c) {
  const std::size_t n = c.categories.size();
  std::vector<double> totals(n, 0);
  for (const auto& l : c.layers)
    for (std::size_t i = 0; i < n && i < l.values.size(); ++i) totals[i] += l.values[i];
  std::vector<std::string> names;
  for (const auto& l : c.layers) names.push_back(l.name);
  const int height = std::max(c.height_px, k_top + 8 + legend_height(names));
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
    auto entry = legend_entry(c.width_px + 6, legend_y, it->name, it->color, false, true);
    svg += entry.svg;
    legend_y += entry.height;
  }
  return svg + "</svg>";
}

}  // namespace ptxbench::metrics
