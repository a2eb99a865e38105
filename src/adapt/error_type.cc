#include "adapt/error_type.h"

namespace ptxbench::adapt {

std::optional<error_type> error_type_of(eval_outcome outcome) {
  switch (outcome) {
    case eval_outcome::compile_error: return error_type::compile;
    case eval_outcome::runtime_error: return error_type::runtime;
    case eval_outcome::incorrect_numerical:
    case eval_outcome::incorrect_shape:
    case eval_outcome::incorrect_dtype: return error_type::numerical;
    case eval_outcome::timeout: return error_type::timeout;
    default: return std::nullopt;
  }
}

std::string error_type_name(error_type t) {
  switch (t) {
    case error_type::compile: return "compile";
    case error_type::runtime: return "runtime";
    case error_type::numerical: return "numerical";
    case error_type::timeout: return "timeout";
  }
  return "compile";
}

std::string upstream_error_label(error_type t) {
  switch (t) {
    case error_type::compile: return "Compilation error";
    case error_type::runtime: return "Runtime error";
    case error_type::numerical: return "Numerical error";
    case error_type::timeout: return "Kernel Execution Timeout";
  }
  return "Compilation error";
}

bool upstream_mines(eval_outcome outcome) {
  return error_type_of(outcome).has_value() && outcome != eval_outcome::incorrect_shape &&
         outcome != eval_outcome::incorrect_dtype;
}

std::optional<error_type> parse_error_type(const std::string& name) {
  for (auto t : {error_type::compile, error_type::runtime, error_type::numerical, error_type::timeout})
    if (error_type_name(t) == name) return t;
  return std::nullopt;
}

}  // namespace ptxbench::adapt
