// PTXBench TVM-FFI compatibility: tvm::ffi::TensorView, the non-owning tensor argument of an upstream
// kernel. It wraps a DLTensor; under PTXBench that DLTensor describes a harness buffer on
// {kDLCUDA, device}, with byte_offset 0 and row-major strides (docs/kernel-abi.md).
//
// Provided: data_ptr, device, dtype, ndim/dim, size(i)/stride(i) (negative i counts from the end; out
// of range throws IndexError), shape/sizes/strides (ShapeView), numel, byte_offset,
// IsContiguous/is_contiguous. Not provided: the owning tvm::ffi::Tensor, as_strided, allocation.
#ifndef TVM_FFI_CONTAINER_TENSOR_H_
#define TVM_FFI_CONTAINER_TENSOR_H_

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <string>

namespace tvm {
namespace ffi {

/// True when the strides are those of a row-major tensor of its shape; size-1 dimensions may have
/// any stride.
inline bool IsContiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

class TensorView {
 public:
  /// Views a DLTensor; the DLTensor's shape and strides arrays must outlive the view.
  TensorView(const DLTensor* tensor) {  // NOLINT(google-explicit-constructor): implicit, as in TVM-FFI
    if (tensor == nullptr) throw Error("ValueError", "TensorView of a null DLTensor");
    m_tensor = *tensor;
  }
  TensorView(const TensorView&) = default;
  TensorView& operator=(const TensorView&) = default;

  void* data_ptr() const { return m_tensor.data; }
  DLDevice device() const { return m_tensor.device; }
  DLDataType dtype() const { return m_tensor.dtype; }
  int32_t ndim() const { return m_tensor.ndim; }
  int32_t dim() const { return m_tensor.ndim; }
  ShapeView shape() const { return ShapeView(m_tensor.shape, static_cast<size_t>(m_tensor.ndim)); }
  ShapeView sizes() const { return shape(); }
  ShapeView strides() const { return ShapeView(m_tensor.strides, static_cast<size_t>(m_tensor.ndim)); }
  int64_t numel() const { return shape().Product(); }
  int64_t size(int64_t dim) const { return m_tensor.shape[checked_dim(dim)]; }
  int64_t stride(int64_t dim) const { return m_tensor.strides[checked_dim(dim)]; }
  uint64_t byte_offset() const { return m_tensor.byte_offset; }
  bool IsContiguous() const { return ::tvm::ffi::IsContiguous(m_tensor); }
  bool is_contiguous() const { return IsContiguous(); }

 private:
  int64_t checked_dim(int64_t dim) const {
    int64_t d = dim < 0 ? dim + m_tensor.ndim : dim;
    if (d < 0 || d >= m_tensor.ndim)
      throw Error("IndexError", "index " + std::to_string(dim) + " out of bounds for a tensor with " +
                                    std::to_string(m_tensor.ndim) + " dimensions");
    return d;
  }

  DLTensor m_tensor;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_TENSOR_H_
