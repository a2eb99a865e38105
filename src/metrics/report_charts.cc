// Report sections built from aggregates: the Table-1 view, the Fast_p / best-speedup curves and the
// turn-label bars.
#include <algorithm>
#include <array>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "metrics/report_parts.h"
#include "metrics/svg_chart.h"
#include "metrics/table1.h"

namespace ptxbench::metrics::report_detail {
namespace {

constexpr double k_no_value = std::numeric_limits<double>::quiet_NaN();

int max_turns(const std::vector<turn_group>& groups) {
  int n = 0;
  for (const auto& g : groups)
    for (const auto& r : g.turns) n = std::max(n, r.turn + 1);
  return std::min(n, 64);
}

chart_series fast_series(const std::string& name, const std::string& color, const std::vector<fast_p_point>& pts,
                         bool inst) {
  chart_series s{name, color, {}, {}, {}, {}, false, false};
  for (const auto& p : pts) {
    s.x.push_back(p.p);
    s.y.push_back(inst ? p.inst : p.fast);
    s.band_low.push_back(inst ? p.inst_min : p.fast_min);
    s.band_high.push_back(inst ? p.inst_max : p.fast_max);
  }
  return s;
}

std::string block_heading(const task_block& b) {
  return fmt::format("<h3 id=\"{}\">{} · {}</h3>", xml_escape("task-" + b.arch + "-" + b.definition),
                     xml_escape(b.definition), xml_escape(b.arch));
}

}  // namespace

std::string short_dir(const std::string& exp_dir) {
  std::string d = exp_dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  auto slash = d.find_last_of('/');
  return slash == std::string::npos ? d : d.substr(slash + 1);
}

int counted_turn_limit(const report_options& opt) {
  return opt.fast_p_turn_limit > 0 ? opt.fast_p_turn_limit : largest_turn_limit(opt.turn_limits);
}

std::vector<task_block> task_blocks(const std::vector<turn_group>& groups) {
  std::vector<task_block> blocks;
  for (const auto& g : groups) {
    auto it = std::find_if(blocks.begin(), blocks.end(), [&](const task_block& b) {
      return b.arch == g.key.arch && b.definition == g.key.definition;
    });
    if (it == blocks.end()) it = blocks.insert(blocks.end(), {g.key.arch, g.key.definition, {}});
    it->groups.push_back(&g);
  }
  return blocks;
}

run_colors::run_colors(const std::vector<turn_group>& groups) {
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> seen;
  for (const auto& g : groups) {
    m_model_index.try_emplace(g.key.model, m_model_index.size());
    m_run_ordinal[g.key] = seen[{g.key.model, g.key.arch, g.key.definition}]++;
  }
}

std::string run_colors::color(const group_key& key) const {
  auto m = m_model_index.find(key.model);
  auto r = m_run_ordinal.find(key);
  std::size_t model = m == m_model_index.end() ? 0 : m->second;
  std::size_t ordinal = r == m_run_ordinal.end() ? 0 : r->second;
  return std::string(palette_color(model + 7 * ordinal));
}

std::string run_name(const task_block& block, const turn_group& group) {
  auto same_model = std::count_if(block.groups.begin(), block.groups.end(),
                                  [&](const turn_group* g) {
                                    return g->key.model == group.key.model && g->key.language == group.key.language;
                                  });
  const std::string who = group.key.language == "triton" ? group.key.model + " · Triton" : group.key.model;
  return same_model > 1 ? who + " · " + short_dir(group.key.exp_dir) : who;
}

std::string_view label_color(eval_outcome label) {
  // In the order of eval_outcome: passed, built, rejected, compile_error, runtime_error,
  // incorrect_shape, incorrect_dtype, incorrect_numerical, timeout, no_code, infra_error, other_error.
  static constexpr std::array<std::string_view, k_all_outcomes.size()> k_colors = {
      "#59a14f", "#4e79a7", "#ff9da7", "#e15759", "#f28e2b", "#d4a6c8", "#c9a227", "#edc948",
      "#b07aa1", "#9c755f", "#bab0ac", "#76b7b2"};
  return k_colors[static_cast<std::size_t>(label)];
}

std::string table1_section(const std::vector<turn_group>& groups, const report_options& opt) {
  std::vector<turn_rate_row> rows;
  for (const auto& g : groups)
    for (int t : opt.turn_limits) rows.push_back({g.key, t, compute_turn_rates(g.turns, t, opt.min_coverage)});
  std::string limits;
  for (int t : opt.turn_limits) limits += (limits.empty() ? "" : " / ") + fmt::format("≤{}", t);
  std::string h = fmt::format(
      "<section id=\"table1\"><h2>Turn correctness (Table 1 view)</h2><p class=\"note\">Each cell: "
      "target-instruction turn correctness rate (%) at {} turns; plain turn correctness rate in parentheses "
      "below. Infra-error turns are not counted.</p>",
      limits);
  if (opt.min_coverage)
    h += fmt::format("<p class=\"note\">Third line, in brackets: target-instruction turn correctness counting only "
                     "turns whose executed target family did at least {:g}% of the task's work (work coverage, "
                     "beyond the paper).</p>",
                     *opt.min_coverage * 100);
  for (const auto& b : build_table1(rows, opt.turn_limits, opt.min_coverage)) {
    h += fmt::format("<h3>{}</h3><div class=\"wide\"><table class=\"t1\"><thead><tr><th>Model</th>", xml_escape(b.arch));
    for (const auto& d : b.definitions) h += "<th>" + xml_escape(d) + "</th>";
    h += "</tr></thead><tbody>";
    for (const auto& row : b.rows) {
      h += "<tr><th>" + xml_escape(row.label) + "</th>";
      for (const auto& c : row.cells)
        h += c.present ? fmt::format("<td title=\"{}\"><b>{}</b><br><span class=\"plain\">{}</span>{}</td>",
                                     xml_escape(c.exp_dir), xml_escape(c.target_line), xml_escape(c.plain_line),
                                     c.coverage_line.empty()
                                         ? std::string()
                                         : "<br><span class=\"plain\">" + xml_escape(c.coverage_line) + "</span>")
                       : std::string("<td></td>");
      h += "</tr>";
    }
    h += "</tbody></table></div>";
    for (const auto& n : b.notes) h += "<p class=\"note\">" + xml_escape(n) + "</p>";
  }
  return h + "</section>";
}

std::string curves_section(const std::vector<turn_group>& groups, const report_options& opt) {
  const int limit = counted_turn_limit(opt);
  const int turns = max_turns(groups);
  run_colors colors(groups);
  std::string h = fmt::format(
      "<section id=\"curves\"><h2>Fast<sub>p</sub> and best speedup per task</h2><p class=\"note\">Fast<sub>p</sub>: "
      "fraction of the evaluated turns (first {} turns of every trajectory) that are correct with speedup &gt; p; "
      "Fast<sup>Inst</sup><sub>p</sub> also requires the target instruction family verified as executed. Lines: mean "
      "over prompt variants; shading: min–max over variants. Best speedup: highest speedup over correct "
      "(target-correct) turns within the first T turns; the dashed line is the reference's speed (1.0×), and × on "
      "the axis marks a turn limit with no correct turn that has a speedup yet.</p>",
      limit);
  for (const auto& b : task_blocks(groups)) {
    const std::string where = " (" + b.definition + ", " + b.arch + ")";
    line_chart fast{"", "speedup threshold p", "fraction of turns", {}};
    fast.title_runs = {{"Fast"}, {"p", text_run::shift::sub}, {where}};
    line_chart inst{"", "speedup threshold p", "fraction of turns", {}};
    inst.title_runs = {{"Fast"}, {"Inst", text_run::shift::super}, {"p", text_run::shift::sub}, {where}};
    line_chart best{"Best speedup by turn limit", "turn limit T", "best speedup (×)", {}};
    line_chart best_t{"Best target-instruction speedup", "turn limit T", "best speedup (×)", {}};
    for (auto* c : {&fast, &inst}) {
      c->x_min = opt.p_values.empty() ? 0 : opt.p_values.front();
      c->y_max = 1;
      c->x_refs = {{1.0, "p = 1"}};
    }
    // No correct turn within the first T turns is no speedup at all, not a speedup of 0.
    best.gap_label = "no correct turn with a speedup yet";
    best_t.gap_label = "no target-correct turn with a speedup yet";
    for (auto* c : {&best, &best_t}) c->y_refs = {{1.0, "1.0× = reference"}};
    for (int t = 1; t <= turns && turns <= 16; ++t) { best.x_ticks.push_back(t); best_t.x_ticks.push_back(t); }
    for (const turn_group* g : b.groups) {
      const std::string name = run_name(b, *g), color = colors.color(g->key);
      auto pts = compute_fast_p(g->turns, limit, opt.p_values);
      fast.series.push_back(fast_series(name, color, pts, false));
      inst.series.push_back(fast_series(name, color, pts, true));
      chart_series s{name, color, {}, {}, {}, {}, false, true}, st = s;
      for (int t = 1; t <= turns; ++t) {
        auto v = compute_best_speedups(g->turns, t);
        s.x.push_back(t);
        s.y.push_back(v.best > 0 ? v.best : k_no_value);
        st.x.push_back(t);
        st.y.push_back(v.best_target > 0 ? v.best_target : k_no_value);
      }
      best.series.push_back(std::move(s));
      best_t.series.push_back(std::move(st));
    }
    h += block_heading(b) + "<div class=\"charts\">" + render_line_chart(fast) + render_line_chart(inst) +
         render_line_chart(best) + render_line_chart(best_t) + "</div>";
  }
  return h + "</section>";
}

std::string labels_section(const std::vector<turn_group>& groups) {
  std::string h = "<section id=\"labels\"><h2>Turn labels by turn index</h2><p class=\"note\">Labels come from the "
                  "structured results (ours: extra.ptxbench.label; upstream: its exported class). Infrastructure "
                  "errors are shown but never counted as turns.</p><div class=\"charts\">";
  std::vector<std::pair<std::string, std::string>> keys;  // (model, arch) in first-appearance order
  for (const auto& g : groups)
    if (std::find(keys.begin(), keys.end(), std::pair{g.key.model, g.key.arch}) == keys.end())
      keys.emplace_back(g.key.model, g.key.arch);
  for (const auto& [model, arch] : keys) {
    int turns = 0;
    std::map<eval_outcome, std::vector<double>> counts;
    for (const auto& g : groups) {
      if (g.key.model != model || g.key.arch != arch) continue;
      for (const auto& r : g.turns) {
        if (r.turn >= 64) continue;
        turns = std::max(turns, r.turn + 1);
        auto& v = counts[r.label];
        if (v.size() <= static_cast<std::size_t>(r.turn)) v.resize(r.turn + 1, 0);
        v[r.turn] += 1;
      }
    }
    stacked_bar_chart c{model + " · " + arch + " (all tasks)", "turn (1 = first reply)", "turns", {}, {}};
    for (int t = 0; t < turns; ++t) c.categories.push_back(std::to_string(t + 1));
    for (auto l : k_all_outcomes)
      if (counts.count(l)) c.layers.push_back({std::string(outcome_title(l)), std::string(label_color(l)), counts[l]});
    h += render_stacked_bars(c);
  }
  return h + "</div></section>";
}

}  // namespace ptxbench::metrics::report_detail
