#include "metrics/html_report.h"

#include <fmt/format.h>

#include "metrics/report_parts.h"
#include "metrics/svg_chart.h"

namespace ptxbench::metrics {
namespace {

// No external request is possible: the policy allows only inline style and script.
constexpr const char* k_head = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<script>
// Console errors, uncaught exceptions and policy violations are written into #report-errors, so a
// headless browser's DOM dump shows them (the browser test checks that it stays empty).
(function () {
  var pending = [];
  function note(kind, text) {
    var box = document.getElementById('report-errors');
    if (!box) { pending.push(kind + ': ' + text); return; }
    var p = document.createElement('p'); p.textContent = kind + ': ' + text; box.appendChild(p);
  }
  window.addEventListener('error', function (e) { note('error', e.message || String(e)); });
  window.addEventListener('unhandledrejection', function (e) { note('rejection', String(e.reason)); });
  document.addEventListener('securitypolicyviolation', function (e) { note('csp', e.blockedURI + ' ' + e.violatedDirective); });
  var original = console.error;
  console.error = function () { note('console.error', Array.prototype.join.call(arguments, ' ')); original.apply(console, arguments); };
  window.__reportFlush = function () { pending.forEach(function (t) { note('early', t); }); pending = []; };
})();
</script>
<style>
body { font-family: system-ui, sans-serif; margin: 16px 24px; color: #222; max-width: 1900px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; border-bottom: 1px solid #ccc; margin-top: 28px; }
h3 { font-size: 14px; margin: 16px 0 4px; } .note { color: #555; font-size: 12px; margin: 4px 0; }
nav a { margin-right: 12px; font-size: 13px; }
table.t1 { border-collapse: collapse; font-size: 12px; margin-bottom: 6px; }
table.t1 th, table.t1 td { border: 1px solid #ddd; padding: 3px 6px; text-align: center; white-space: nowrap; }
table.t1 tbody th { text-align: left; } table.t1 .plain { color: #666; }
table.sources { border-collapse: collapse; font-size: 12px; } table.sources td { padding: 1px 8px 1px 0; }
.wide { overflow-x: auto; }
.charts { display: flex; flex-wrap: wrap; gap: 8px 16px; }
svg.chart { background: #fff; border: 1px solid #eee; }
.cell { display: inline-block; width: 18px; height: 18px; line-height: 18px; margin: 1px; font-size: 10px;
  text-align: center; color: #111; text-decoration: none; border: 1px solid rgba(0,0,0,.15); vertical-align: middle; }
.cell.tc { border: 2px solid #1b3d12; width: 16px; height: 16px; line-height: 16px; font-weight: bold; }
.cell.infra { border: 1px dashed #333; opacity: .7; }
.legend { font-size: 12px; } table.strips { font-size: 11px; border-collapse: collapse; }
table.strips th { text-align: left; padding-right: 8px; font-weight: normal; } table.strips td { padding-right: 8px; }
details.group { margin: 3px 0; font-size: 13px; } details.turn { margin: 2px 0 2px 16px; font-size: 12px; }
details.turn:target > summary { background: #ffef9a; }
pre { background: #f6f6f6; padding: 6px; overflow: auto; max-height: 420px; font-size: 11px; white-space: pre-wrap; }
#report-errors:empty { display: none; } #report-errors { color: #b00; border: 1px solid #b00; padding: 4px; }
.banner { border: 1px solid; border-left-width: 6px; padding: 4px 12px; margin: 10px 0; font-size: 13px; max-width: 1100px; }
.banner p { margin: 6px 0; } .banner ul { margin: 4px 0 6px; padding-left: 20px; font-size: 12px; }
.banner.warn { background: #fff4e5; border-color: #c77700; color: #4a2c00; }
td.unfinished { color: #c77700; font-weight: bold; }
.banner.info { background: #e8f1fb; border-color: #2f6db5; color: #12304f; }
</style>
)";

constexpr const char* k_tail = R"(<script>
// Opening a turn from a strip: show its details (and the group around it).
function openTarget() {
  var id = decodeURIComponent(location.hash.slice(1)); if (!id) return;
  var el = document.getElementById(id);
  for (var p = el; p; p = p.parentElement) if (p.tagName === 'DETAILS') p.open = true;
  if (el) el.scrollIntoView();
}
window.addEventListener('hashchange', openTarget);
openTarget();
window.__reportFlush();
document.body.setAttribute('data-report-ready', '1');
</script>
</body></html>
)";

std::string sources_html(const loaded_inputs& in) {
  std::string h = "<table class=\"sources\">";
  for (const auto& s : in.sources) {
    std::string extra;
    for (const auto& item : s.items())
      if (item.key() != "kind" && item.key() != "path") extra += fmt::format("{}={} ", item.key(), item.value().dump());
    h += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td class=\"note\">{}</td></tr>",
                     xml_escape(s.value("kind", "")), xml_escape(s.value("path", "")), xml_escape(extra));
  }
  h += "</table>";
  for (const auto& n : in.notes) h += "<p class=\"note\">note: " + xml_escape(n) + "</p>";
  return h;
}

}  // namespace

std::string render_html_report(const loaded_inputs& in, const report_options& opt) {
  auto groups = group_turns(in.records);
  auto counts = count_records(in.records);
  std::string h = k_head;
  h += fmt::format("<title>{}</title></head><body>\n<div id=\"report-errors\"></div>\n<h1>{}</h1>", xml_escape(opt.title),
                   xml_escape(opt.title));
  h += report_detail::banners(in);
  h += fmt::format("<p class=\"note\">{} turns in {} runs ({} infrastructure-error turns excluded). Generated by {}. "
                   "Definitions: docs/metrics.md.</p>",
                   counts.turns, groups.size(), counts.infra_errors, xml_escape(opt.generated_by));
  h += sources_html(in);
  h += "<nav><a href=\"#table1\">Table 1</a><a href=\"#curves\">Fast<sub>p</sub> and best speedup</a><a href=\"#languages\">"
       "CUDA–PTX vs Triton</a><a href=\"#labels\">Turn labels</a><a href=\"#strips\">Trajectories</a></nav>\n";
  h += report_detail::table1_section(groups, opt) + "\n";
  h += report_detail::ceiling_section(in.records, opt);
  h += report_detail::curves_section(groups, opt) + "\n";
  h += report_detail::language_section(groups, opt) + "\n";
  h += report_detail::arms_section(in.records, opt) + "\n";  // empty without supervision arms
  h += report_detail::labels_section(groups) + "\n";
  h += report_detail::strips_section(groups, in.runs, opt) + "\n";
  return h + k_tail;
}

}  // namespace ptxbench::metrics
