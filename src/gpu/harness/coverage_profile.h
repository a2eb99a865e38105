#pragma once
// What the dynamic check adds to its Nsight Compute run for work coverage (eval/coverage.h): the
// per-instruction source counters and the TMA byte counters, and reading them back from the report
// into the runtime counts' evidence (runtime_counts::evidence, verdict/verdict.h).

#include <filesystem>
#include <string>

#include <vector>

#include "core/process.h"
#include "measure/coverage.h"

namespace ptxbench::gpu {

/// The extra --metrics: "inst_executed,thread_inst_executed_true" (per-instruction counts for the
/// source page) and the TMA byte counters (measure::tma_byte_metrics()).
std::string coverage_profile_metrics();

/// ncu's complaint about an unknown or unsupported metric in its output (the first ==ERROR== line
/// that mentions a metric), or "" when there is none.
std::string ncu_metric_complaint(const std::string& output);

/// The command that prints the report's details page (`ncu -i REPORT.ncu-rep --csv --page details
/// --print-metric-instances details --print-units base`), kernels named by their mangled symbols.
std::vector<std::string> details_page_command(const std::filesystem::path& ncu, const std::filesystem::path& report);

/// The command that prints the report's source page (`ncu -i REPORT.ncu-rep --csv --page source
/// --print-source sass`), kernels named like the details page; the dynamic check runs it beside the
/// details page's import.
std::vector<std::string> source_page_command(const std::filesystem::path& ncu, const std::filesystem::path& report);

/// The evidence from the source page's import and the details page. `missing` non-empty: the
/// coverage metrics were not collected; the evidence then only says why.
coverage_evidence coverage_evidence_from(const process_result& source_page, const std::string& details_csv,
                                         const std::string& missing);

}  // namespace ptxbench::gpu
