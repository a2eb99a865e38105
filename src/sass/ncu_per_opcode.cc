// The per-opcode format: `ncu --metrics sass__inst_executed_per_opcode,
// sass__thread_inst_executed_true_per_opcode --print-metric-instances details --csv`. One row per
// (launch ID, metric); the value is "total (OPCODE: n; OPCODE: n; ...)" with thousands separators.

#include <map>

#include <fmt/format.h>

#include "sass/ncu_report.h"
#include "core/csv.h"
#include "core/text.h"

namespace ptxbench::sass {
namespace {

constexpr std::string_view k_inst_metric = "sass__inst_executed_per_opcode";
constexpr std::string_view k_thread_metric = "sass__thread_inst_executed_true_per_opcode";
constexpr std::string_view k_per_opcode_command_hint =
    "--metrics sass__inst_executed_per_opcode,sass__thread_inst_executed_true_per_opcode "
    "--print-metric-instances details --csv";

struct instanced_value {
  int64_t total = 0;
  std::vector<std::pair<std::string, int64_t>> instances;
};

result<instanced_value> parse_instanced(std::string_view value) {
  instanced_value v;
  auto open = value.find('(');
  auto close = value.rfind(')');
  auto total = parse_count(value.substr(0, open));
  if (!total) return make_error(fmt::format("cannot read the total in '{}'", value));
  v.total = *total;
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return make_error(fmt::format("'{}' has no per-opcode instances (ncu printed only the total); run ncu with {}",
                                  value, k_per_opcode_command_hint));
  std::string_view body = value.substr(open + 1, close - open - 1);
  int64_t sum = 0;
  while (!trim(body).empty()) {
    auto semi = body.find(';');
    std::string_view item = trim(body.substr(0, semi));
    body = semi == std::string_view::npos ? std::string_view() : body.substr(semi + 1);
    auto colon = item.rfind(':');
    if (colon == std::string_view::npos)
      return make_error("opcode names are missing from the per-opcode values (this is "
                        "--print-metric-instances values output); run ncu with --print-metric-instances details");
    auto n = parse_count(item.substr(colon + 1));
    std::string_view opcode = trim(item.substr(0, colon));
    if (!n || opcode.empty()) return make_error(fmt::format("cannot read the instance '{}'", item));
    v.instances.emplace_back(std::string(opcode), *n);
    sum += *n;
  }
  if (sum != v.total)
    return make_error(fmt::format("the per-opcode values sum to {} but the total is {}", sum, v.total));
  return v;
}

struct launch {
  ncu_kernel kernel;
  bool has_inst = false, has_thread = false;
};

}  // namespace

result<ncu_profile> detail::parse_ncu_per_opcode(const std::vector<std::pair<int, std::string_view>>& csv_lines) {
  std::vector<std::string> header;
  std::map<std::string, std::size_t> col;
  std::vector<launch> launches;
  std::map<std::string, std::size_t> by_id;
  for (const auto& [line_no, line] : csv_lines) {
    auto fields = split_csv_line(line);
    if (!fields) return make_error(fmt::format("ncu CSV line {}: unterminated quote", line_no));
    if (header.empty() || *fields == header) {
      if (line.find("\"Metric Value\"") == std::string_view::npos) continue;  // stray quoted program output
      header = *fields;
      for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
      for (const char* need : {"ID", "Kernel Name", "Metric Name", "Metric Value"})
        if (!col.count(need)) return make_error(fmt::format("ncu CSV line {}: header has no \"{}\" column", line_no, need));
      continue;
    }
    if (fields->size() != header.size())
      return make_error(fmt::format("ncu CSV line {}: {} fields, header has {}", line_no, fields->size(), header.size()));
    const auto& f = *fields;
    const std::string& metric = f[col["Metric Name"]];
    if (metric != k_inst_metric && metric != k_thread_metric) continue;
    const std::string& id = f[col["ID"]];
    if (!by_id.count(id)) {
      by_id[id] = launches.size();
      launch l;
      l.kernel.id = id;
      l.kernel.name = f[col["Kernel Name"]];
      if (col.count("Block Size")) l.kernel.block_size = f[col["Block Size"]];
      if (col.count("Grid Size")) l.kernel.grid_size = f[col["Grid Size"]];
      launches.push_back(std::move(l));
    }
    launch& l = launches[by_id[id]];
    auto value = parse_instanced(f[col["Metric Value"]]);
    if (!value)
      return value.err().with_context(fmt::format("ncu CSV line {} ({}, {})", line_no, l.kernel.name, metric));
    bool is_thread = metric == k_thread_metric;
    (is_thread ? l.has_thread : l.has_inst) = true;
    for (const auto& [opcode, n] : value->instances)
      (is_thread ? l.kernel.per_opcode[opcode].thread_inst_pred_on : l.kernel.per_opcode[opcode].inst_executed) += n;
  }
  ncu_profile profile;
  profile.format = ncu_format::per_opcode_details;
  for (auto& l : launches) {
    if (!l.has_thread || !l.has_inst)
      return make_error(fmt::format("ncu CSV: kernel {} (ID {}) has no {} value; run ncu with {}", l.kernel.name,
                                    l.kernel.id, l.has_thread ? k_inst_metric : k_thread_metric, k_per_opcode_command_hint));
    finish_kernel(l.kernel);
    profile.kernels.push_back(std::move(l.kernel));
  }
  return profile;
}

}  // namespace ptxbench::sass
