#include "sass/ncu_report.h"

#include <optional>

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::sass {

std::string_view ncu_format_name(ncu_format f) {
  return f == ncu_format::per_opcode_details ? "per_opcode_details" : "source_page";
}

bool ncu_kernel::executed(std::string_view family) const {
  auto it = family_pred_on.find(std::string(family));
  return it != family_pred_on.end() && it->second > 0;
}

void detail::finish_kernel(ncu_kernel& k) {
  k.family_pred_on = family_pred_on_counts(k.per_opcode);
  k.family_inst_executed = family_inst_executed_counts(k.per_opcode);
  k.total_inst_executed = 0;
  k.total_thread_pred_on = 0;
  for (const auto& [op, e] : k.per_opcode) {
    k.total_inst_executed += e.inst_executed;
    k.total_thread_pred_on += e.thread_inst_pred_on;
  }
}

std::map<std::string, family_counts> family_pred_on_by_kernel(const ncu_profile& profile) {
  std::map<std::string, family_counts> out;
  for (const auto& k : profile.kernels) {
    auto& sums = out[k.name];
    for (const auto& [fam, n] : k.family_pred_on) sums[fam] += n;
  }
  return out;
}

result<ncu_profile> parse_ncu_csv(std::string_view text) {
  if (trim(text).empty()) return make_error("Nsight Compute output is empty");
  // CSV lines start with a quote; ncu's ==PROF== lines and the program's own output do not (a
  // program printing a line that starts with '"' is caught by the readers' column checks).
  std::vector<std::pair<int, std::string_view>> csv;
  std::vector<std::string> tool_messages;
  std::string first_error;
  int line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    if (starts_with(line, "==ERROR==") || starts_with(line, "==WARNING==")) {
      tool_messages.emplace_back(line);
      if (first_error.empty() && starts_with(line, "==ERROR==")) first_error = std::string(line);
    }
    if (starts_with(line, "\"")) csv.emplace_back(line_no, line);
  }
  std::optional<ncu_format> format;
  for (const auto& [no, line] : csv) {
    if (starts_with(line, "\"Kernel Name\",")) { format = ncu_format::source_page; break; }
    if (line.find("\"Metric Value\"") != std::string_view::npos) { format = ncu_format::per_opcode_details; break; }
  }
  if (!format) {
    std::string hint = first_error.empty() ? "" : " (ncu said: " + first_error + ")";
    return make_error("not Nsight Compute CSV: no '\"Kernel Name\",' block and no header with "
                      "\"Metric Value\"; run ncu with --csv" + hint);
  }
  auto parsed = *format == ncu_format::source_page ? detail::parse_ncu_source_page(csv)
                                                  : detail::parse_ncu_per_opcode(csv);
  if (!parsed) return parsed;
  if (parsed->kernels.empty())
    return make_error("Nsight Compute CSV lists no kernel" + (first_error.empty() ? "" : " (" + first_error + ")"));
  parsed->tool_messages = std::move(tool_messages);
  return parsed;
}

}  // namespace ptxbench::sass
