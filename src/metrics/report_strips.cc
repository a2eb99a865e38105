// The report's per-trajectory turn strips: one colored cell per turn, linking to the turn's kernel and
// feedback (run directories only; upstream's export has no texts).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "metrics/report_parts.h"
#include "metrics/run_completeness.h"
#include "metrics/svg_chart.h"

namespace ptxbench::metrics::report_detail {
namespace {

std::string clipped(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return xml_escape(text);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
  return xml_escape(text.substr(0, cut)) +
         fmt::format("\n… [{} more bytes not shown; see the trajectory file]", text.size() - cut);
}

std::string cell_title(const turn_record& r) {
  std::string t = fmt::format("turn {}: {}", r.turn + 1, outcome_title(r.label));
  if (r.correct() && r.speedup) t += fmt::format(", speedup {:.3f}x", *r.speedup);
  if (r.target_correct) t += ", target-instruction correct";
  else if (!r.target_verdict.empty()) t += ", target: " + r.target_verdict;
  if (!r.counted()) t += " (not counted)";
  return t;
}

std::string cell_class(const turn_record& r) {
  std::string c = "cell";
  if (r.target_correct) c += " tc";
  if (!r.counted()) c += " infra";
  return c;
}

std::string turn_details(const std::string& id, const std::string& traj, const turn_record& r, const turn_text& t,
                         const report_options& opt) {
  return fmt::format(
      "<details class=\"turn\" id=\"{}\"><summary>{} · turn {} · {}{}</summary><h4>Kernel (last code block of the "
      "reply)</h4><pre>{}</pre><h4>Feedback</h4><pre>{}</pre></details>",
      id, xml_escape(traj), r.turn + 1, outcome_title(r.label), t.summary.empty() ? "" : " · " + xml_escape(t.summary),
      clipped(t.kernel, opt.max_text_bytes), clipped(t.feedback, opt.max_text_bytes));
}

}  // namespace

std::string strips_section(const std::vector<turn_group>& groups, const std::vector<run_data>& runs,
                           const report_options& opt) {
  std::map<std::pair<std::string, std::string>, const trajectory*> texts;  // (exp_dir, id) -> trajectory
  for (const auto& run : runs)
    for (const auto& t : run.trajectories) texts[{run.dir, t.id}] = &t;
  std::string h = "<section id=\"strips\"><h2>Trajectories</h2><p class=\"note\">One cell per turn, colored by label; "
                  "a thick dark border marks a target-instruction-correct turn, a dashed one an infrastructure error "
                  "(not counted). Click a cell to open that turn's kernel and feedback (run directories only).</p>"
                  "<p class=\"legend\">";
  for (auto l : k_all_outcomes)
    h += fmt::format("<span class=\"cell\" style=\"background:{}\"></span> {} &nbsp; ", label_color(l), outcome_title(l));
  h += "</p>";
  std::size_t next_id = 0;
  for (const auto& g : groups) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<const turn_record*>> by_traj;
    for (const auto& r : g.turns) {
      if (!by_traj.count(r.trajectory)) order.push_back(r.trajectory);
      by_traj[r.trajectory].push_back(&r);
    }
    auto rates = compute_turn_rates(g.turns, 1 << 30);
    // The first run opens by itself when it is small, so its strip is visible without a click.
    const bool open = &g == &groups.front() && order.size() <= 48;
    h += fmt::format("<details class=\"group\"{}><summary>{} · {} · {} · {} — {} trajectories, {} of {} turns correct, {} "
                     "target-instruction correct</summary><table class=\"strips\">",
                     open ? " open" : "", xml_escape(g.key.model), xml_escape(g.key.arch), xml_escape(g.key.definition),
                     xml_escape(short_dir(g.key.exp_dir)), order.size(), rates.correct_turns, rates.n_turns,
                     rates.target_correct_turns);
    std::string details;
    for (const auto& id : order) {
      const auto& recs = by_traj[id];
      auto found = texts.find({g.key.exp_dir, id});
      const trajectory* tr = found == texts.end() ? nullptr : found->second;
      h += fmt::format("<tr><th>{}</th><td>{}</td><td>", xml_escape(id), xml_escape(recs.front()->variant));
      for (std::size_t k = 0; k < recs.size(); ++k) {
        const turn_record& r = *recs[k];
        bool linked = tr && k < tr->texts.size();
        std::string anchor = fmt::format("turn-{}", next_id++);
        h += fmt::format("<{0} class=\"{1}\" style=\"background:{2}\" title=\"{3}\"{4}>{5}</{0}>", linked ? "a" : "span",
                         cell_class(r), label_color(r.label), xml_escape(cell_title(r)),
                         linked ? " href=\"#" + anchor + "\"" : "", r.turn + 1);
        if (linked) details += turn_details(anchor, id, r, tr->texts[k], opt);
      }
      // An unfinished trajectory says so beside its strip, in the warning color.
      auto unfinished = tr ? unfinished_warning(*tr) : std::nullopt;
      if (unfinished)
        h += fmt::format("</td><td class=\"note unfinished\" title=\"{}\">{} · unfinished</td></tr>",
                         xml_escape(unfinished->message), xml_escape(tr->exit_status.empty() ? "no exit status" : tr->exit_status));
      else
        h += fmt::format("</td><td class=\"note\">{}</td></tr>", tr ? xml_escape(tr->exit_status) : "");
    }
    h += "</table>" + details + "</details>";
  }
  return h + "</section>";
}

}  // namespace ptxbench::metrics::report_detail
