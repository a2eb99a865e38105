// The report's CUDA-PTX vs Triton section (the paper's Fig. 3): per task and model, both
// languages' Fast_p and Fast^Inst_p curves in one chart, and their best speedups and a few points
// of the curves in a table (metrics/language_comparison.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "metrics/language_comparison.h"
#include "metrics/report_parts.h"
#include "metrics/svg_chart.h"

namespace ptxbench::metrics::report_detail {
namespace {

constexpr const char* k_cuda_color = "#4e79a7";
constexpr const char* k_triton_color = "#f28e2b";

chart_series curve(const std::string& name, const char* color, const std::vector<fast_p_point>& pts, bool inst) {
  chart_series s{name, color, {}, {}, {}, {}, inst, false};
  for (const auto& p : pts) {
    s.x.push_back(p.p);
    s.y.push_back(inst ? p.inst : p.fast);
  }
  return s;
}

// The curve's value at the grid point nearest to p ("–" without a curve).
std::string at(const std::vector<fast_p_point>& pts, double p, bool inst) {
  if (pts.empty()) return "–";
  auto best = std::min_element(pts.begin(), pts.end(), [p](const fast_p_point& a, const fast_p_point& b) {
    return std::abs(a.p - p) < std::abs(b.p - p);
  });
  return fmt::format("{:.1f}%", (inst ? best->inst : best->fast) * 100);
}

std::string side_row(const char* name, const language_side& s, const std::vector<double>& probes) {
  if (s.runs == 0) return fmt::format("<tr><th>{}</th><td colspan=\"{}\" class=\"plain\">no run</td></tr>", name, 4 + 2 * probes.size());
  std::string h = fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td><td>{:.3f}×</td><td>{:.3f}×</td>", name, s.runs,
                              s.turns, s.best.best, s.best.best_target);
  for (double p : probes) h += fmt::format("<td>{}</td><td>{}</td>", at(s.fast_p, p, false), at(s.fast_p, p, true));
  return h + "</tr>";
}

}  // namespace

std::string language_section(const std::vector<turn_group>& groups, const report_options& opt) {
  const int limit = counted_turn_limit(opt);
  auto rows = compare_languages(groups, limit, opt.p_values);
  std::string h = fmt::format(
      "<section id=\"languages\"><h2>CUDA–PTX vs Triton (Fig. 3)</h2><p class=\"note\">The same model on the same "
      "task in both languages, every run of a language pooled: Fast<sub>p</sub> (solid) and "
      "Fast<sup>Inst</sup><sub>p</sub> (dashed: the target instruction family verified as executed — for Triton, in "
      "the kernels Triton compiled) over the first {} turns, and the best speedups. Triton runs come from "
      "<code>ptxbench run --language triton</code>.</p>",
      limit);
  if (rows.empty())
    return h + "<p class=\"note\">No Triton run in these inputs, so there is nothing to compare.</p></section>";
  const std::vector<double> probes = {0.0, 0.5, 1.0};
  for (const auto& r : rows) {
    line_chart chart{"Fast_p: CUDA-PTX vs Triton (" + r.definition + ", " + r.arch + ")", "speedup threshold p",
                     "fraction of turns", {}};
    chart.x_min = opt.p_values.empty() ? 0 : opt.p_values.front();
    chart.y_max = 1;
    if (r.cuda.runs) {
      chart.series.push_back(curve("CUDA-PTX Fast_p", k_cuda_color, r.cuda.fast_p, false));
      chart.series.push_back(curve("CUDA-PTX Fast^Inst_p", k_cuda_color, r.cuda.fast_p, true));
    }
    chart.series.push_back(curve("Triton Fast_p", k_triton_color, r.triton.fast_p, false));
    chart.series.push_back(curve("Triton Fast^Inst_p", k_triton_color, r.triton.fast_p, true));
    h += fmt::format("<h3 id=\"{}\">{} · {} · {}</h3>", xml_escape("lang-" + r.arch + "-" + r.definition + "-" + r.model),
                     xml_escape(r.definition), xml_escape(r.arch), xml_escape(r.model));
    h += "<div class=\"charts\">" + render_line_chart(chart) + "<div><table class=\"t1\"><thead><tr><th></th><th>runs</th>"
         "<th>turns</th><th>best speedup</th><th>best target speedup</th>";
    for (double p : probes)
      h += fmt::format("<th>Fast<sub>{0:g}</sub></th><th>Fast<sup>Inst</sup><sub>{0:g}</sub></th>", p);
    h += "</tr></thead><tbody>" + side_row("CUDA–PTX", r.cuda, probes) + side_row("Triton", r.triton, probes) +
         "</tbody></table></div></div>";
  }
  return h + "</section>";
}

}  // namespace ptxbench::metrics::report_detail
