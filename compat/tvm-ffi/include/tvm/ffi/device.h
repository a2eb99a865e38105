// PTXBench TVM-FFI compatibility: DLDevice helpers. Under PTXBench every tensor is on
// {kDLCUDA, <the harness's device>}.
#ifndef TVM_FFI_DEVICE_H_
#define TVM_FFI_DEVICE_H_

#include <tvm/ffi/c_api.h>

#include <ostream>

inline bool operator==(const DLDevice& a, const DLDevice& b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
inline bool operator!=(const DLDevice& a, const DLDevice& b) { return !(a == b); }
inline std::ostream& operator<<(std::ostream& os, const DLDevice& d) {
  const char* name = d.device_type == kDLCUDA ? "cuda" : d.device_type == kDLCPU ? "cpu" : "device";
  return os << name << ":" << d.device_id;
}

#endif  // TVM_FFI_DEVICE_H_
