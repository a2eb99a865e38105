#include "gpu/harness/guarded_buffer.h"

#include <fmt/format.h>

#include "core/align.h"
#include "gpu/common/cuda_check.h"
#include "gpu/harness/device_ops.h"

namespace ptxbench::gpu {

guarded_buffer::guarded_buffer(std::string name, dtype type, std::vector<int64_t> shape, bool is_output)
    : m_name(std::move(name)), m_type(type), m_shape(std::move(shape)), m_is_output(is_output) {
  m_bytes = static_cast<std::size_t>(numel()) * static_cast<std::size_t>(dtype_bits(type)) / 8;
  m_padded = align_up<std::size_t>(m_bytes, 256);
  PTXB_CUDA_CALL(cudaMalloc(&m_base, m_padded + 2 * k_guard_bytes));
  PTXB_CUDA_CALL(cudaIpcGetMemHandle(&m_handle, m_base));
}

guarded_buffer::~guarded_buffer() { PTXB_CUDA_CALL_NOEXCEPT(cudaFree(m_base)); }

int64_t guarded_buffer::numel() const {
  int64_t n = 1;
  for (auto s : m_shape) n *= s;
  return n;
}

void guarded_buffer::arm_guards(cudaStream_t s) {
  PTXB_CUDA_CALL(cudaMemsetAsync(m_base, k_guard_byte, k_guard_bytes, s));
  // The tail guard starts right after the tensor's last byte (the 256-byte padding is guard too).
  char* tail = static_cast<char*>(data()) + m_bytes;
  PTXB_CUDA_CALL(cudaMemsetAsync(tail, k_guard_byte, m_padded - m_bytes + k_guard_bytes, s));
}

guarded_buffer::guard_slots guarded_buffer::check_guards(device_checks& checks) const {
  const char* tail = static_cast<const char*>(data()) + m_bytes;
  return {checks.check_bytes(m_base, k_guard_bytes, k_guard_byte),
          checks.check_bytes(tail, m_padded - m_bytes + k_guard_bytes, k_guard_byte)};
}

std::string guarded_buffer::guard_damage(const device_checks& checks, guard_slots slots) const {
  auto head = checks.byte_result(slots.head);
  auto tail_check = checks.byte_result(slots.tail);
  std::string out;
  if (tail_check.mismatches)
    out += fmt::format("{} byte(s) written past the end of {} (first at +{} bytes after its last element)",
                       tail_check.mismatches, m_name, tail_check.first_offset);
  if (head.mismatches)
    out += fmt::format("{}{} byte(s) written before the start of {} (first at -{} bytes)", out.empty() ? "" : "; ",
                       head.mismatches, m_name, k_guard_bytes - head.first_offset);
  return out;
}

void guarded_buffer::poison(cudaStream_t s) { PTXB_CUDA_CALL(cudaMemsetAsync(data(), k_nan_byte, m_bytes, s)); }

ipc_tensor guarded_buffer::describe() const {
  ipc_tensor t;
  t.name = m_name;
  t.handle = m_handle;
  t.offset = k_guard_bytes;
  t.bytes = m_bytes;
  t.type = m_type;
  t.shape = m_shape;
  t.is_output = m_is_output;
  return t;
}

}  // namespace ptxbench::gpu
