#include "sass/ncu_metric_values.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/text.h"

namespace ptxbench::sass {
namespace {

std::optional<double> read_number(std::string_view s) {
  std::string digits;
  for (char c : trim(s))
    if (c != ',') digits += c;
  if (digits.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

}  // namespace

result<std::vector<ncu_metric_value>> read_ncu_metric_values(std::string_view text,
                                                            const std::vector<std::string>& metrics) {
  std::vector<ncu_metric_value> out;
  std::vector<std::string> header;
  std::map<std::string, std::size_t> col;
  int line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    if (!starts_with(line, "\"")) continue;  // ncu's ==PROF== lines and the program's output
    auto fields = split_csv_line(line);
    if (!fields) return make_error(fmt::format("ncu CSV line {}: unterminated quote", line_no));
    if (header.empty() || *fields == header) {
      if (line.find("\"Metric Value\"") == std::string_view::npos) continue;
      header = *fields;
      for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
      for (const char* need : {"ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"})
        if (!col.count(need)) return make_error(fmt::format("ncu CSV line {}: header has no \"{}\" column", line_no, need));
      continue;
    }
    if (fields->size() != header.size())
      return make_error(fmt::format("ncu CSV line {}: {} fields, header has {}", line_no, fields->size(), header.size()));
    const auto& f = *fields;
    const std::string& metric = f[col["Metric Name"]];
    if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) continue;
    ncu_metric_value v;
    v.id = f[col["ID"]];
    v.kernel = f[col["Kernel Name"]];
    v.metric = metric;
    v.unit = f[col["Metric Unit"]];
    auto number = read_number(f[col["Metric Value"]]);
    if (!number || *number < 0)
      return make_error(fmt::format("ncu CSV line {}: {} of {} is '{}', not a number", line_no, metric, v.kernel,
                                    f[col["Metric Value"]]));
    if (v.unit != "" && v.unit != "byte" && v.unit.find("byte") != std::string::npos)
      return make_error(fmt::format("ncu CSV line {}: {} is in {}, expected bytes (run ncu with --print-units base)",
                                    line_no, metric, v.unit));
    v.value = *number;
    out.push_back(std::move(v));
  }
  if (header.empty()) return make_error("not Nsight Compute details CSV: no header with \"Metric Value\"");
  return out;
}

}  // namespace ptxbench::sass
