// The report's Ceiling section (issue 30): per target and task, the pack's reference kernel — the
// speedup a kernel written from the knowledge pack alone reached, evaluated three times — beside the
// models' best target-correct speedup, so a reader sees how far the models are from what the pack allows.
#include <algorithm>

#include <fmt/format.h>

#include "metrics/ceiling.h"
#include "metrics/report_parts.h"
#include "metrics/svg_chart.h"

namespace ptxbench::metrics::report_detail {

std::string ceiling_section(const std::vector<turn_record>& records, const report_options& opt) {
  if (!opt.ceiling) return "";
  const int limit = counted_turn_limit(opt);
  auto rows = compute_ceiling(records, limit, *opt.ceiling);
  std::string sources;
  for (const auto& s : opt.ceiling->sources) sources += (sources.empty() ? "" : ", ") + ("<code>" + xml_escape(s) + "</code>");
  std::string h = fmt::format(
      "<section id=\"ceiling\"><h2>Ceiling: what the pack allows</h2><p class=\"note\">Per target and task, the "
      "reference kernel written from the knowledge pack alone (<code>examples/reference/</code>; the median of its "
      "passed, target-correct evaluations, from {}) beside the models' best target-correct speedup over turns 0–{}. "
      "Only our runs name a target, so upstream's rows do not appear here.</p>",
      sources, limit - 1);
  h += "<table class=\"t1\"><thead><tr><th>target</th><th>task</th><th>reference kernel</th><th>its speedup</th>"
       "<th>models' best</th><th>best / reference</th></tr></thead><tbody>";
  for (const auto& r : rows) {
    auto c = ceiling_row_cells(r, [](std::string_view t) { return xml_escape(t); });
    h += fmt::format("<tr><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td></tr>", xml_escape(r.target),
                     xml_escape(r.task),
                     c.file.empty() ? "<td class=\"plain\">no reference kernel</td>" : "<td><code>" + c.file + "</code></td>",
                     c.reference_speedup, c.models_best, c.ratio);
  }
  return h + "</tbody></table></section>\n";
}

}  // namespace ptxbench::metrics::report_detail
