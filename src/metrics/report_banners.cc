// The banners at the top of the report: what is wrong with the data (warnings) and what the numbers
// cannot mean (nothing ran on a GPU; a fake evaluator). A reader who looks only at the charts must
// still see them, so they sit above everything else.
#include <fmt/format.h>

#include "metrics/report_parts.h"
#include "metrics/svg_chart.h"

namespace ptxbench::metrics::report_detail {
namespace {

constexpr std::size_t k_max_listed = 40;  // a run with hundreds of unfinished trajectories stays readable

std::string code_list(const std::vector<std::string>& dirs) {
  std::string out;
  for (const auto& d : dirs) out += (out.empty() ? "" : ", ") + ("<code>" + xml_escape(d) + "</code>");
  return out;
}

std::string warnings_banner(const std::vector<data_warning>& warnings) {
  if (warnings.empty()) return "";
  std::string h = fmt::format(
      "<div id=\"report-warnings\" class=\"banner warn\" role=\"alert\"><p><b>{} warning{} about the data behind "
      "these numbers.</b> Every number below is computed from what could be read: unfinished or missing "
      "trajectories count only the turns that exist, and duplicated rows were counted once. "
      "<code>ptxbench metrics --strict</code> and <code>report --strict</code> refuse such data.</p><ul>",
      warnings.size(), warnings.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < warnings.size() && i < k_max_listed; ++i)
    h += fmt::format("<li data-kind=\"{}\">{}</li>", warning_kind_name(warnings[i].kind), xml_escape(warnings[i].message));
  h += "</ul>";
  if (warnings.size() > k_max_listed)
    h += fmt::format("<p>… and {} more (<code>ptxbench metrics</code> lists every one in warnings.csv).</p>",
                     warnings.size() - k_max_listed);
  return h + "</div>\n";
}

std::string cpu_only_banner(const loaded_inputs& in) {
  if (in.cpu_only_runs.empty()) return "";
  bool upstream = false;
  for (const auto& src : in.sources) upstream = upstream || src.value("kind", "") == "upstream";
  const bool all = in.cpu_only_runs.size() == in.runs.size() && !upstream;
  std::string who = all ? "Nothing in this report ran on a GPU."
                        : fmt::format("Nothing in {} ran on a GPU.", code_list(in.cpu_only_runs));
  return fmt::format(
      "<div id=\"report-cpu-only\" class=\"banner info\" role=\"note\"><p><b>{}</b> {} made with "
      "<code>ptxbench run --cpu-only</code>: each kernel was only gated, built and checked statically. A kernel that "
      "compiled is labelled <i>built</i>; whether it is correct, how fast it is and whether the target instructions "
      "execute were not measured.</p><p>So in these runs every correctness rate is 0, the Fast<sub>p</sub> lines lie "
      "flat at 0 and there is no speedup (× marks); the turn labels show how many replies compiled. These numbers say "
      "nothing about the model's kernels beyond that. Run without <code>--cpu-only</code> on a machine with an NVIDIA "
      "GPU to measure them.</p></div>\n",
      who, all ? "The runs were" : "Those runs were");
}

std::string fake_banner(const loaded_inputs& in) {
  if (in.fake_evaluator_runs.empty()) return "";
  return fmt::format(
      "<div id=\"report-fake-evaluator\" class=\"banner info\" role=\"note\"><p><b>{} judged by the test-only fake "
      "evaluator</b> (<code>--evaluator fake</code>): its verdicts are made up from markers in the source and mean "
      "nothing.</p></div>\n",
      code_list(in.fake_evaluator_runs));
}

}  // namespace

std::string banners(const loaded_inputs& in) { return warnings_banner(in.warnings) + cpu_only_banner(in) + fake_banner(in); }

}  // namespace ptxbench::metrics::report_detail
