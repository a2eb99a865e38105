#include "suite/dtype.h"

#include <array>
#include <utility>

namespace ptxbench {
namespace {
struct dtype_info {
  dtype type;
  std::string_view name;
  int bits;
};
constexpr std::array<dtype_info, 11> k_dtypes{{
    {dtype::float32, "float32", 32},
    {dtype::float16, "float16", 16},
    {dtype::bfloat16, "bfloat16", 16},
    {dtype::float8_e4m3fn, "float8_e4m3fn", 8},
    {dtype::float8_e5m2, "float8_e5m2", 8},
    {dtype::float4_e2m1, "float4_e2m1", 4},
    {dtype::int64, "int64", 64},
    {dtype::int32, "int32", 32},
    {dtype::int16, "int16", 16},
    {dtype::int8, "int8", 8},
    {dtype::boolean, "bool", 8},
}};
const dtype_info& info(dtype t) { return k_dtypes[static_cast<std::size_t>(t)]; }
}  // namespace

std::string_view dtype_name(dtype t) { return info(t).name; }
int dtype_bits(dtype t) { return info(t).bits; }

std::optional<dtype> parse_dtype(std::string_view name) {
  for (const auto& d : k_dtypes)
    if (d.name == name) return d.type;
  return std::nullopt;
}

std::string dtype_choices() {
  std::string out;
  for (const auto& d : k_dtypes) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

}  // namespace ptxbench
