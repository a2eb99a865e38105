#pragma once
// Tensor element types of the FlashInfer-Trace schema, with their byte sizes.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ptxbench {

enum class dtype {
  float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, float4_e2m1,
  int64, int32, int16, int8, boolean,
};

/// The schema spelling ("bfloat16", "bool", ...).
std::string_view dtype_name(dtype t);
/// Parses the schema spelling; nullopt for anything else.
std::optional<dtype> parse_dtype(std::string_view name);
/// Bits per element (4 for float4_e2m1).
int dtype_bits(dtype t);
/// Comma-separated list of all valid spellings, for error messages.
std::string dtype_choices();

}  // namespace ptxbench
