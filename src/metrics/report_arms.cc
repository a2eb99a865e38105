// The report's section on supervision arms (docs/supervision.md): the Table-4 view and, per task,
// Fast_p and Fast^Inst_p against p with one line per (model, arm); the solution-bearing arm is drawn
// dashed and marked †.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "metrics/arms.h"
#include "metrics/report_parts.h"
#include "metrics/svg_chart.h"
#include "metrics/table1.h"

namespace ptxbench::metrics::report_detail {
namespace {

std::string join(const std::vector<std::optional<double>>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " / ") + percent_text(x);
  return s;
}

}  // namespace

std::string arms_section(const std::vector<turn_record>& records, const report_options& opt) {
  if (!has_supervision_arms(records)) return "";
  auto groups = group_by_arm(records);
  metrics_options mo;
  mo.turn_limits = opt.turn_limits;
  mo.p_values = opt.p_values;
  std::string limits;
  for (int t : opt.turn_limits) limits += (limits.empty() ? "" : " / ") + fmt::format("≤{}", t);
  std::string h = fmt::format(
      "<section id=\"arms\"><h2>Supervision arms (Table 4 view)</h2><p class=\"note\">The same model with no "
      "supervision (base), with an expert-guidance document in the prompt (guidance:&lt;sha256 prefix&gt;), with "
      "retrieved repair notes in the failure feedback (notes), and with notes plus the best fixed kernel "
      "(notes+kernel). Each cell: target-instruction turn correctness rate (%) at {} turns; plain turn correctness "
      "in parentheses. Each arm pools every run directory that ran it.</p>",
      limits);
  // Table: per arch, rows (model, arm), columns definitions.
  std::vector<std::string> archs;
  for (const auto& g : groups)
    if (std::find(archs.begin(), archs.end(), g.key.arch) == archs.end()) archs.push_back(g.key.arch);
  bool any_solution = false;
  for (const auto& arch : archs) {
    std::vector<std::string> defs;
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& g : groups) {
      if (g.key.arch != arch) continue;
      if (std::find(defs.begin(), defs.end(), g.key.definition) == defs.end()) defs.push_back(g.key.definition);
      if (std::find(rows.begin(), rows.end(), std::pair{g.key.model, g.key.arm}) == rows.end())
        rows.emplace_back(g.key.model, g.key.arm);
    }
    h += fmt::format("<h3>{}</h3><div class=\"wide\"><table class=\"t1\"><thead><tr><th>Model</th><th>Arm</th>",
                     xml_escape(arch));
    for (const auto& d : defs) h += "<th>" + xml_escape(d) + "</th>";
    h += "</tr></thead><tbody>";
    for (const auto& [model, arm] : rows) {
      any_solution = any_solution || is_solution_bearing(arm);
      h += "<tr><th>" + xml_escape(model) + "</th><th>" + xml_escape(arm_label(arm)) + "</th>";
      for (const auto& d : defs) {
        auto it = std::find_if(groups.begin(), groups.end(), [&](const arm_group& g) {
          return g.key == arm_key{model, arch, d, arm};
        });
        if (it == groups.end()) { h += "<td></td>"; continue; }
        std::vector<std::optional<double>> target, plain;
        for (int t : opt.turn_limits) {
          auto r = compute_turn_rates(it->turns, t);
          target.push_back(r.target_rate);
          plain.push_back(r.rate);
        }
        std::string runs;
        for (const auto& e : it->exp_dirs) runs += (runs.empty() ? "" : ", ") + e;
        h += fmt::format("<td title=\"{}\"><b>{}</b><br><span class=\"plain\">({})</span></td>", xml_escape(runs),
                         xml_escape(join(target)), xml_escape(join(plain)));
      }
      h += "</tr>";
    }
    h += "</tbody></table></div>";
  }
  if (any_solution)
    h += "<p class=\"note\">† solution-bearing arm: the failure feedback showed the fixed kernel of a similar earlier "
         "failure, so a gain there can come from copying that solution and is not evidence of reasoning.</p>";
  // Curves: per (arch, definition), one line per (model, arm).
  const int limit = counted_turn_limit(opt);
  h += fmt::format("<p class=\"note\">Fast<sub>p</sub> and Fast<sup>Inst</sup><sub>p</sub> per arm over the first {} "
                   "turns of every trajectory (mean over prompt variants).</p>",
                   limit);
  std::vector<std::pair<std::string, std::string>> cells;
  for (const auto& g : groups)
    if (std::find(cells.begin(), cells.end(), std::pair{g.key.arch, g.key.definition}) == cells.end())
      cells.emplace_back(g.key.arch, g.key.definition);
  std::map<std::pair<std::string, std::string>, std::size_t> colors;
  for (const auto& g : groups) colors.try_emplace({g.key.model, g.key.arm}, colors.size());
  for (const auto& [arch, def] : cells) {
    const std::string where = " by arm (" + def + ", " + arch + ")";
    line_chart fast{"", "speedup threshold p", "fraction of turns", {}};
    fast.title_runs = {{"Fast"}, {"p", text_run::shift::sub}, {where}};
    line_chart inst{"", "speedup threshold p", "fraction of turns", {}};
    inst.title_runs = {{"Fast"}, {"Inst", text_run::shift::super}, {"p", text_run::shift::sub}, {where}};
    for (auto* c : {&fast, &inst}) {
      c->x_min = opt.p_values.empty() ? 0 : opt.p_values.front();
      c->y_max = 1;
      c->x_refs = {{1.0, "p = 1"}};
    }
    for (const auto& g : groups) {
      if (g.key.arch != arch || g.key.definition != def) continue;
      std::string name = g.key.model + " · " + arm_label(g.key.arm);
      std::string color(palette_color(colors[{g.key.model, g.key.arm}]));
      chart_series f{name, color, {}, {}, {}, {}, is_solution_bearing(g.key.arm), false}, i = f;
      for (const auto& p : compute_fast_p(g.turns, limit, opt.p_values)) {
        f.x.push_back(p.p);
        f.y.push_back(p.fast);
        i.x.push_back(p.p);
        i.y.push_back(p.inst);
      }
      fast.series.push_back(std::move(f));
      inst.series.push_back(std::move(i));
    }
    h += fmt::format("<h3>{} · {}</h3><div class=\"charts\">", xml_escape(def), xml_escape(arch)) +
         render_line_chart(inst) + render_line_chart(fast) + "</div>";
  }
  return h + "</section>";
}

}  // namespace ptxbench::metrics::report_detail
