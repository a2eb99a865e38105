// PTXBench TVM-FFI compatibility: ShapeView, a read-only view of a tensor's sizes or strides.
#ifndef TVM_FFI_CONTAINER_SHAPE_H_
#define TVM_FFI_CONTAINER_SHAPE_H_

#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>
#include <ostream>

namespace tvm {
namespace ffi {

class ShapeView {
 public:
  ShapeView() = default;
  ShapeView(const int64_t* data, size_t size) : m_data(data), m_size(size) {}

  const int64_t* data() const { return m_data; }
  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  const int64_t* begin() const { return m_data; }
  const int64_t* end() const { return m_data + m_size; }
  int64_t operator[](size_t i) const { return m_data[i]; }
  int64_t at(size_t i) const {
    if (i >= m_size)
      throw Error("IndexError", "index " + std::to_string(i) + " out of range for a shape of " +
                                    std::to_string(m_size) + " dimensions");
    return m_data[i];
  }
  int64_t front() const { return at(0); }
  int64_t back() const { return at(m_size - 1); }
  /// The product of the entries (1 for an empty shape): the element count of a tensor of this shape.
  int64_t Product() const {
    int64_t p = 1;
    for (size_t i = 0; i < m_size; ++i) p *= m_data[i];
    return p;
  }

 private:
  const int64_t* m_data = nullptr;
  size_t m_size = 0;
};

inline std::ostream& operator<<(std::ostream& os, const ShapeView& s) {
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << "]";
}

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_SHAPE_H_
