#include "gpu/common/ipc_tensor.h"

#include <cstring>

namespace ptxbench::gpu {

std::string bytes_hex(const unsigned char* data, std::size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

result<std::vector<unsigned char>> bytes_from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) return make_error("hex text of odd length");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::vector<unsigned char> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return make_error("not a hex digit");
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return out;
}

std::string handle_hex(const cudaIpcMemHandle_t& h) {
  return bytes_hex(reinterpret_cast<const unsigned char*>(&h), sizeof h);
}

result<cudaIpcMemHandle_t> handle_from_hex(const std::string& hex) {
  cudaIpcMemHandle_t h{};
  if (hex.size() != 2 * sizeof h) return make_error("bad IPC handle length");
  auto bytes = bytes_from_hex(hex);
  if (!bytes) return make_error("bad IPC handle text");
  std::memcpy(&h, bytes->data(), sizeof h);
  return h;
}

ordered_json to_json(const ipc_tensor& t) {
  ordered_json j = {{"name", t.name},     {"handle", handle_hex(t.handle)},       {"offset", t.offset},
                    {"bytes", t.bytes},   {"dtype", std::string(dtype_name(t.type))}, {"shape", t.shape},
                    {"output", t.is_output}};
  if (!t.value.empty()) j["value"] = bytes_hex(t.value.data(), t.value.size());
  return j;
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
    if (j.contains("value")) {
      auto value = bytes_from_hex(j.at("value").get<std::string>());
      if (!value) return make_error("tensor " + t.name + ": scalar value: " + value.err().message);
      if (value->empty() || value->size() > 8 || value->size() != t.bytes || !t.shape.empty() || t.is_output)
        return make_error("tensor " + t.name + ": a value is sent only for a scalar input, 1 to 8 bytes, its size");
      t.value = std::move(*value);
    }
    return t;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed tensor message: ") + e.what());
  }
}

}  // namespace ptxbench::gpu
