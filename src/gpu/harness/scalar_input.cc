#include "gpu/harness/scalar_input.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <limits>

namespace ptxbench::gpu {
namespace {

template <typename T>
std::vector<unsigned char> bytes_of(T value) {
  std::vector<unsigned char> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

}  // namespace

result<std::vector<unsigned char>> scalar_bytes(const tensor_spec& t, const ordered_json& value) {
  switch (t.type) {
    case dtype::float32:
      if (value.is_number()) return bytes_of(value.get<float>());
      break;
    case dtype::int32:
      if (value.is_number_integer() && value.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
          value.get<int64_t>() <= std::numeric_limits<int32_t>::max())
        return bytes_of(static_cast<int32_t>(value.get<int64_t>()));
      break;
    case dtype::int64:
      if (value.is_number_integer()) return bytes_of(value.get<int64_t>());
      break;
    case dtype::boolean:
      if (value.is_boolean()) return bytes_of(static_cast<unsigned char>(value.get<bool>() ? 1 : 0));
      break;
    default:
      return make_error(fmt::format("input {}: scalar inputs of dtype {} are not supported (float32, int32, int64, bool)",
                                    t.name, dtype_name(t.type)));
  }
  return make_error(fmt::format("input {}: the workload's value {} does not fit a {} scalar", t.name, value.dump(),
                                dtype_name(t.type)));
}

}  // namespace ptxbench::gpu
