#pragma once
// Definition: the operator contract of the FlashInfer-Trace schema (axes, tensors, reference code).
// Field names follow FlashInfer-Bench's flashinfer_bench/data/definition.py (github.com/flashinfer-ai/flashinfer-bench) exactly, so files move between the systems.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/dtype.h"

namespace ptxbench {

struct axis {
  std::string name;
  bool is_const = false;   ///< "const" axes carry a value; "var" axes get one from each workload
  int64_t value = 0;       ///< valid when is_const
  std::string description;
};

struct tensor_spec {
  std::string name;
  std::optional<std::vector<std::string>> shape;  ///< axis names; nullopt = a scalar passed by value
  dtype type = dtype::float32;
  std::string description;
};

struct definition {
  std::string name;
  std::string op_type;
  std::vector<axis> axes;            ///< in file order
  std::vector<tensor_spec> inputs;   ///< call order
  std::vector<tensor_spec> outputs;  ///< call order, after the inputs
  std::string reference;             ///< Python source defining run(...)
  std::vector<std::string> tags;
  std::string description;
  std::vector<std::string> constraints;

  [[nodiscard]] const axis* find_axis(const std::string& axis_name) const;
  [[nodiscard]] const tensor_spec* find_input(const std::string& input_name) const;
};

/// Parses and validates a Definition. Errors name the JSON path under `path`.
result<definition> definition_from_json(const ordered_json& j, const std::string& path = "definition");
/// Serialises in the schema's field order.
ordered_json to_json(const definition& d);

}  // namespace ptxbench
