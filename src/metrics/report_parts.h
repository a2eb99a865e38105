#pragma once
// The sections of the HTML report (internal to src/metrics; html_report.cc assembles them).

#include <map>
#include <string>
#include <vector>

#include "metrics/aggregate.h"
#include "metrics/html_report.h"
#include "metrics/trajectory_reader.h"

namespace ptxbench::metrics::report_detail {

/// How many turns the report's curves and comparisons count: opt.fast_p_turn_limit when set, else
/// the largest turn limit.
int counted_turn_limit(const report_options& opt);

/// Groups of one (arch, definition), in first-appearance order.
struct task_block {
  std::string arch, definition;
  std::vector<const turn_group*> groups;
};
std::vector<task_block> task_blocks(const std::vector<turn_group>& groups);

/// A stable color per model (first-appearance order), shifted for a model's second, third ... run.
class run_colors {
 public:
  explicit run_colors(const std::vector<turn_group>& groups);
  [[nodiscard]] std::string color(const group_key& key) const;

 private:
  std::map<std::string, std::size_t> m_model_index;
  std::map<group_key, std::size_t> m_run_ordinal;  ///< 0 for a model's first run of a task, 1 for the next ...
};

/// The legend name of a run within its task block: the model, plus the run folder's name when the
/// model has several runs there.
std::string run_name(const task_block& block, const turn_group& group);

/// The last path component of an exp_dir ("/x/eval_runs/opus48-gemm" -> "opus48-gemm").
std::string short_dir(const std::string& exp_dir);

/// The CSS color of a turn label (same in bars, strips and legends).
std::string_view label_color(eval_outcome label);

/// Returns the banners for the top of the report: #report-warnings (one item per data warning),
/// #report-cpu-only (runs where nothing ran on a GPU) and #report-fake-evaluator; empty when none applies.
std::string banners(const loaded_inputs& in);

/// Returns the <section> with the Table-1 view (one HTML table per arch).
std::string table1_section(const std::vector<turn_group>& groups, const report_options& opt);
/// Returns the <section> with the pack's reference kernel per task beside the models' best target-correct
/// speedup (metrics/ceiling.h); "" without opt.ceiling.
std::string ceiling_section(const std::vector<turn_record>& records, const report_options& opt);
/// Returns the <section> with, per task, Fast_p and Fast^Inst_p curves and best-speedup-by-T curves.
std::string curves_section(const std::vector<turn_group>& groups, const report_options& opt);
/// Returns the <section> comparing CUDA-PTX and Triton per task and model (the paper's Fig. 3), or a
/// note that the inputs hold no Triton run.
std::string language_section(const std::vector<turn_group>& groups, const report_options& opt);
/// Returns the <section> with the supervision arms side by side (Table 4 view) and Fast_p / Fast^Inst_p
/// per arm; "" when every record ran under the base arm (report_arms.cc).
std::string arms_section(const std::vector<turn_record>& records, const report_options& opt);
/// Returns the <section> with one stacked bar chart of turn labels per turn index per (model, arch).
std::string labels_section(const std::vector<turn_group>& groups);
/// Returns the <section> with a turn strip per trajectory; cells link to the turn's texts when `runs`
/// holds that trajectory.
std::string strips_section(const std::vector<turn_group>& groups, const std::vector<run_data>& runs,
                           const report_options& opt);

}  // namespace ptxbench::metrics::report_detail
