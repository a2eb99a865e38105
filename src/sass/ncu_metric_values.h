#pragma once
// Plain (not per-opcode) metric values from Nsight Compute's details page in CSV, the same text
// parse_ncu_csv reads (`ncu -i REPORT --csv --page details --print-metric-instances details`): one
// row per (launch ID, metric) with "Metric Unit" and "Metric Value". Used for the TMA byte counters
// of work coverage (eval/coverage.h). With --csv ncu prints base units (bytes, not Kbyte).

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxbench::sass {

struct ncu_metric_value {
  std::string id;      ///< ncu's launch ID
  std::string kernel;  ///< demangled kernel name
  std::string metric;
  std::string unit;    ///< as printed ("byte")
  double value = 0;
};

/// The values of the named metrics, one per launch and metric, in file order. Other metrics are
/// skipped. Errors: no details header, a row with the wrong number of fields, a value that is not a
/// number (thousands separators are fine), a byte metric in a scaled unit (Kbyte, ...).
result<std::vector<ncu_metric_value>> read_ncu_metric_values(std::string_view text,
                                                            const std::vector<std::string>& metrics);

}  // namespace ptxbench::sass
