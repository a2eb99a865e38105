#pragma once
// The paper's Table 1 layout: per architecture, one row per model, one column per task; each cell
// holds the target-instruction turn correctness rate at each turn limit (≤1, ≤4, ≤8) on its first
// line and the plain turn correctness rate in parentheses on its second. The layout is built once
// and rendered as markdown (stdout of `ptxbench metrics`) or HTML (the report).

#include <string>
#include <vector>

#include "metrics/aggregate.h"
#include "metrics/data_warnings.h"

namespace ptxbench::metrics {

struct table1_cell {
  bool present = false;      ///< false: the model has no run of this task on this arch
  std::string target_line;   ///< "91.7 / 95.8 / 94.8"
  std::string plain_line;    ///< "(91.7 / 95.8 / 94.8)"
  std::string coverage_line; ///< with a min_coverage: "[cov≥90%: 83.3 / 87.5 / 87.5]"; else empty
  std::string exp_dir;
};

struct table1_row {
  std::string model;
  int run = 0;               ///< 0 for the first run of each task; k for the (k+1)-th when a model has several
  std::string label;         ///< "Claude Opus 4.8" or "Qwen3.6-27B (run 2)"
  std::vector<table1_cell> cells;  ///< parallel to table1_block::definitions
};

struct table1_block {
  std::string arch;
  std::vector<std::string> definitions;
  std::vector<table1_row> rows;
  std::vector<std::string> notes;  ///< which exp_dir each run number is, where a model has several
};

/// Builds the layout from turn-rate rows; archs, tasks and models keep their first-appearance order.
/// With min_coverage each cell also gets the coverage-qualified target rate (rows computed with it).
std::vector<table1_block> build_table1(const std::vector<turn_rate_row>& rows, const std::vector<int>& turn_limits,
                                       std::optional<double> min_coverage = std::nullopt);

/// The turn limits as a column header ("≤1 / ≤4 / ≤8").
std::string limits_text(const std::vector<int>& limits);

/// Formats a rate in percent with one decimal ("94.8"); "–" for an undefined rate.
std::string percent_text(const std::optional<double>& rate);

/// Renders the blocks as markdown tables, two lines per model (target first, plain in parentheses),
/// and a third with the coverage-qualified target rate when the cells have one.
std::string render_table1_markdown(const std::vector<table1_block>& blocks, const std::vector<int>& turn_limits);

/// The contents of table1.md: a heading, then the data warnings and notes as a quoted block above the
/// table (so a table copied into a paper is copied with its caveats), then the rendered table.
std::string render_table1_file(const std::string& table_markdown, const std::vector<data_warning>& warnings,
                               const std::vector<std::string>& notes);

}  // namespace ptxbench::metrics
