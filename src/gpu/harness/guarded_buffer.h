#pragma once
// A device allocation the candidate may see: the tensor sits between two guard regions filled with
// a canary, so a write past either end is detected after the call even where no memory checker
// runs (an overflow into a neighbouring allocation is otherwise invisible: fixture
// memcheck_adjacent_overflow_no_padding.txt). Exported to the runner through CUDA IPC.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "gpu/common/ipc_tensor.h"
#include "gpu/harness/device_checks.h"
#include "suite/dtype.h"

namespace ptxbench::gpu {

class guarded_buffer {
 public:
  /// Guard bytes on each side; large enough for any plausible row-overrun of our tensors' rows.
  static constexpr std::size_t k_guard_bytes = 2u << 20;

  guarded_buffer(std::string name, dtype type, std::vector<int64_t> shape, bool is_output);
  ~guarded_buffer();
  guarded_buffer(const guarded_buffer&) = delete;
  guarded_buffer& operator=(const guarded_buffer&) = delete;

  [[nodiscard]] void* data() const { return static_cast<char*>(m_base) + k_guard_bytes; }
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }
  [[nodiscard]] int64_t numel() const;
  [[nodiscard]] const std::string& name() const { return m_name; }
  [[nodiscard]] dtype type() const { return m_type; }
  [[nodiscard]] const std::vector<int64_t>& shape() const { return m_shape; }
  [[nodiscard]] bool is_output() const { return m_is_output; }

  /// Writes the canary into both guard regions.
  void arm_guards(cudaStream_t stream);
  /// Where a batch holds the checks of this buffer's two guard regions.
  struct guard_slots {
    std::size_t head = 0, tail = 0;
  };
  /// Enqueues the checks of both guard regions into `checks`; guard_damage reads them once collected.
  guard_slots check_guards(device_checks& checks) const;
  /// "" when both guards were intact, else which side and how many bytes changed.
  std::string guard_damage(const device_checks& checks, guard_slots slots) const;
  /// Fills the tensor with the NaN poison.
  void poison(cudaStream_t stream);
  /// The IPC description of this buffer for the runner.
  [[nodiscard]] ipc_tensor describe() const;

 private:
  std::string m_name;
  dtype m_type;
  std::vector<int64_t> m_shape;
  bool m_is_output;
  std::size_t m_bytes = 0, m_padded = 0;
  void* m_base = nullptr;
  cudaIpcMemHandle_t m_handle{};
};

}  // namespace ptxbench::gpu
