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
  std::vector<double> x, y;                  ///< y NaN: no value there (a gap in the line; see gap_label)
  std::vector<double> band_low, band_high;   ///< optional shaded band; empty or the same length as x
  bool dashed = false;
  bool markers = false;                      ///< a dot at every point (for short series)
};

/// A piece of a chart title, drawn raised or lowered where `shift` says: Fast^Inst_p is
/// {"Fast"}, {"Inst", super}, {"p", sub} (an SVG <tspan> with baseline-shift).
struct text_run {
  enum class shift { none, super, sub };
  std::string text;
  shift where = shift::none;
};

/// A dashed gray line at a value, with a short label (the 1.0x line of a speedup axis).
struct reference_line {
  double value = 0;
  std::string label;
};

struct line_chart {
  std::string title, x_label, y_label;              ///< title: the accessible name (and the drawn title without title_runs)
  std::vector<chart_series> series;
  std::optional<double> x_min, x_max, y_min, y_max;  ///< default: the data's range, y from 0
  std::vector<double> x_ticks;                        ///< default: nice ticks over the x range
  int width_px = 440;
  int height_px = 260;                                ///< grows when the legend needs it
  std::vector<text_run> title_runs;                   ///< when set, drawn instead of `title`
  std::vector<reference_line> x_refs;                 ///< vertical lines, drawn when inside the x range
  std::vector<reference_line> y_refs;                 ///< horizontal lines; the y range grows to show them
  /// Points whose y is NaN are drawn as an x on the x axis in the series' color and explained by a
  /// legend entry with this text ("no correct turn yet"); empty: they are only a gap in the line.
  std::string gap_label;
};

/// Returns an <svg> element: axes, grid, ticks, one path per series, bands, reference lines, a legend on
/// the right (long names wrap onto up to three lines; the whole name is in a <title>) and a <title>
/// per series for hover. An empty chart says "no data".
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

/// Returns an <svg> element with one stacked bar per category (hover shows each segment's count) and
/// a legend like the line chart's.
std::string render_stacked_bars(const stacked_bar_chart& chart);

/// Returns 2 to about max_ticks "nice" values (steps of 1, 2 or 5 x 10^k) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);

/// Splits a legend name into lines of at most `width` characters (UTF-8 aware), preferring breaks after
/// '/', ':', '_', '-', '.', ' ' and '·'; at most `max_lines`, the last cut with "…" when the name is longer.
std::vector<std::string> wrap_label(const std::string& name, std::size_t width, std::size_t max_lines);

/// Escapes & < > " ' for XML/HTML text and attributes.
std::string xml_escape(std::string_view text);

/// A categorical palette of 20 colors (Tableau 20 order: dark ones first); index wraps around.
std::string_view palette_color(std::size_t index);

}  // namespace ptxbench::metrics
