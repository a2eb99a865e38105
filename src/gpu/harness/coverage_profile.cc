#include "gpu/harness/coverage_profile.h"

#include <initializer_list>

#include <fmt/format.h>

#include "core/process.h"
#include "core/text.h"

namespace ptxbench::gpu {

std::string coverage_profile_metrics() {
  std::string m = "inst_executed,thread_inst_executed_true";
  for (const auto& name : measure::tma_byte_metrics()) m += "," + name;
  return m;
}

std::string ncu_metric_complaint(const std::string& output) {
  for (auto line : split_lines(output))
    if (starts_with(line, "==ERROR==") &&
        (line.find("metric") != std::string_view::npos || line.find("Metric") != std::string_view::npos))
      return std::string(trim(line));
  return "";
}

namespace {
// Kernels are named by their mangled symbols in both pages: the candidate's kernels are known by the
// symbols of its built object, and a demangled name is no identity — Nsight Compute spells a template
// argument `<0>` where the C++ demangler spells `<false>`, so an honest templated kernel would not be
// recognised as the candidate's and its GMMA would not count.
std::vector<std::string> import_command(const std::filesystem::path& ncu, const std::filesystem::path& report,
                                        std::initializer_list<const char*> page) {
  std::vector<std::string> argv = {ncu.string(), "-i", report.string() + ".ncu-rep", "--csv", "--print-kernel-base",
                                   "mangled"};
  argv.insert(argv.end(), page.begin(), page.end());
  return argv;
}
}  // namespace

std::vector<std::string> details_page_command(const std::filesystem::path& ncu, const std::filesystem::path& report) {
  // Base units: the TMA byte counters in bytes, never "Mbyte" (which the coverage reader refuses).
  return import_command(ncu, report, {"--page", "details", "--print-metric-instances", "details", "--print-units", "base"});
}

std::vector<std::string> source_page_command(const std::filesystem::path& ncu, const std::filesystem::path& report) {
  return import_command(ncu, report, {"--page", "source", "--print-source", "sass"});
}

coverage_evidence coverage_evidence_from(const process_result& page, const std::string& details_csv,
                                         const std::string& missing) {
  if (!missing.empty()) return measure::evidence_from_ncu(std::nullopt, std::nullopt, missing, missing);
  if (!page.succeeded())
    return measure::evidence_from_ncu_output(
        std::nullopt, fmt::format("ncu --page source: {}: {}", describe_exit(page, 120), page.err.substr(0, 300)),
        details_csv);
  return measure::evidence_from_ncu_output(page.out, "", details_csv);
}

}  // namespace ptxbench::gpu
