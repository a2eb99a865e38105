#include "gpu/common/ipc_tensor.h"

#include <cstring>

namespace ptxbench::gpu {

std::string handle_hex(const cudaIpcMemHandle_t& h) {
  static const char* digits = "0123456789abcdef";
  const auto* p = reinterpret_cast<const unsigned char*>(&h);
  std::string out;
  for (std::size_t i = 0; i < sizeof h; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

result<cudaIpcMemHandle_t> handle_from_hex(const std::string& hex) {
  cudaIpcMemHandle_t h{};
  if (hex.size() != 2 * sizeof h) return make_error("bad IPC handle length");
  auto* p = reinterpret_cast<unsigned char*>(&h);
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < sizeof h; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return make_error("bad IPC handle text");
    p[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return h;
}

ordered_json to_json(const ipc_tensor& t) {
  return {{"name", t.name},     {"handle", handle_hex(t.handle)},       {"offset", t.offset},
          {"bytes", t.bytes},   {"dtype", std::string(dtype_name(t.type))}, {"shape", t.shape},
          {"output", t.is_output}};
}

result<ipc_tensor> ipc_tensor_from_json(const ordered_json& j) {
  try {
    ipc_tensor t;
    t.name = j.at("name").get<std::string>();
    auto h = handle_from_hex(j.at("handle").get<std::string>());
    if (!h) return h.err();
    t.handle = *h;
    t.offset = j.at("offset").get<uint64_t>();
    t.bytes = j.at("bytes").get<uint64_t>();
    auto d = parse_dtype(j.at("dtype").get<std::string>());
    if (!d) return make_error("unknown dtype in tensor message");
    t.type = *d;
    t.shape = j.at("shape").get<std::vector<int64_t>>();
    t.is_output = j.at("output").get<bool>();
    return t;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed tensor message: ") + e.what());
  }
}

}  // namespace ptxbench::gpu
