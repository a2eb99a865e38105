#pragma once
// How the harness describes one buffer to the candidate runner: a CUDA IPC handle of the whole
// allocation (guard space included), the offset of the tensor inside it, its size, dtype and shape.
// Only the current call's buffers are ever described, so the runner can reach nothing else. A scalar
// input also carries its value: the runner hands it to the candidate by host pointer (kernel ABI) and
// must not read it from the device buffer, which the harness may fill only after "prepared"
// (docs/trusted-timing.md: a call's inputs are written between "prepared" and "go").

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/dtype.h"

namespace ptxbench::gpu {

struct ipc_tensor {
  std::string name;
  cudaIpcMemHandle_t handle{};
  uint64_t offset = 0;  ///< bytes from the allocation start to the tensor
  uint64_t bytes = 0;
  dtype type = dtype::float32;
  std::vector<int64_t> shape;
  bool is_output = false;
  std::vector<unsigned char> value;  ///< a scalar input's bytes (at most 8, equal to `bytes`); empty otherwise
};

ordered_json to_json(const ipc_tensor& t);
result<ipc_tensor> ipc_tensor_from_json(const ordered_json& j);

/// Lower-case hex text of bytes and back (an odd length or a non-hex digit is an error).
std::string bytes_hex(const unsigned char* data, std::size_t size);
result<std::vector<unsigned char>> bytes_from_hex(const std::string& hex);

/// Hex text of an IPC handle and back.
std::string handle_hex(const cudaIpcMemHandle_t& h);
result<cudaIpcMemHandle_t> handle_from_hex(const std::string& hex);

}  // namespace ptxbench::gpu
