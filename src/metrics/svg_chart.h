#pragma once
// Small hand-written SVG charts for the HTML report: line charts with optional min–max bands, and
// stacked bar charts. Hand-written rather than a bundled charting library because the output is
// deterministic text (testable, diffable), needs no script to draw, adds no dependency, and keeps the
// report a small single file that renders offline.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::metrics {

struct chart_series {
  std::string name;
  std::string color;                         ///< any CSS color
  std::vector<double> x, y;
  std::vector<double> band_low, band_high;   ///< optional shaded band; empty or the same length as x
  bool dashed = false;
  bool markers = false;                      ///< a dot at every point (for short series)
};

struct line_chart {
  std::string title, x_label, y_label;
  std::vector<chart_series> series;
  std::optional<double> x_min, x_max, y_min, y_max;  ///< default: the data's range, y from 0
  std::vector<double> x_ticks;                        ///< default: nice ticks over the x range
  int width_px = 440;
  int height_px = 260;                                ///< grows when the legend needs it
};

/// Returns an <svg> element: axes, grid, ticks, one path per series, bands, a legend on the right and
/// a <title> per series for hover. An empty chart says "no data".
std::string render_line_chart(const line_chart& chart);

struct bar_layer {
  std::string name, color;
  std::vector<double> values;  ///< one per category
};

struct stacked_bar_chart {
  std::string title, x_label, y_label;
  std::vector<std::string> categories;
  std::vector<bar_layer> layers;  ///< bottom first
  int width_px = 440;
  int height_px = 260;
};

/// Returns an <svg> element with one stacked bar per category (hover shows each segment's count).
std::string render_stacked_bars(const stacked_bar_chart& chart);

/// Returns 2 to about max_ticks "nice" values (steps of 1, 2 or 5 x 10^k) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);

/// Escapes & < > " ' for XML/HTML text and attributes.
std::string xml_escape(std::string_view text);

/// A categorical palette of 20 colors (Tableau 20 order: dark ones first); index wraps around.
std::string_view palette_color(std::size_t index);

}  // namespace ptxbench::metrics
