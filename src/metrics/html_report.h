#pragma once
// `ptxbench report`: one self-contained HTML file (inline CSS, inline SVG charts, a few lines of inline
// script; no external request, enforced by a Content-Security-Policy) with the Table-1 view, Fast_p
// and Fast^Inst_p curves per task, best-speedup-per-turn curves, turn labels per turn index, and a
// turn strip per trajectory whose cells link to that turn's kernel and feedback.

#include <cstddef>
#include <string>
#include <vector>

#include "metrics/aggregate.h"
#include "metrics/ceiling.h"
#include "metrics/inputs.h"

namespace ptxbench::metrics {

struct report_options {
  std::string title = "PTXBench report";
  std::vector<int> turn_limits{1, 4, 8};        ///< Table-1 columns
  std::vector<double> p_values = p_grid(0, 1.5, 0.05);
  int fast_p_turn_limit = 0;                    ///< turns counted by the Fast_p curves; 0: the largest turn limit
  std::size_t max_text_bytes = 24000;           ///< per kernel or feedback shown; the rest is cut with a note
  std::string generated_by;                     ///< e.g. "ptxbench 0.1.0"
  std::optional<double> min_coverage;           ///< adds the coverage-qualified target rate to Table 1
  std::optional<reference_set> ceiling;         ///< the pack's reference kernels: adds the Ceiling section
};

/// Renders the whole report. Never fails: inputs that yield nothing show "no data" in their section.
std::string render_html_report(const loaded_inputs& inputs, const report_options& options);

}  // namespace ptxbench::metrics
