// PTXBench TVM-FFI compatibility: comparing and printing DLDataType, as TVM-FFI's dtype header allows
// (`TVM_FFI_ICHECK(x.dtype() == DLDataType{kDLFloat, 32, 1})`, `TVM_FFI_ICHECK_EQ(x.dtype(), f32)`).
#ifndef TVM_FFI_DTYPE_H_
#define TVM_FFI_DTYPE_H_

#include <tvm/ffi/c_api.h>

#include <ostream>
#include <string>

namespace tvm {
namespace ffi {

/// "float32", "bfloat16", "int64", "bool", "float8_e4m3fn", "float32x4" (lanes > 1), ...
inline std::string DLDataTypeToString(DLDataType dtype) {
  std::string base;
  bool with_bits = true;
  switch (dtype.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLOpaqueHandle: base = "handle"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case kDLBool: base = "bool"; with_bits = false; break;
    case kDLFloat8_e3m4: base = "float8_e3m4"; with_bits = false; break;
    case kDLFloat8_e4m3: base = "float8_e4m3"; with_bits = false; break;
    case kDLFloat8_e4m3b11fnuz: base = "float8_e4m3b11fnuz"; with_bits = false; break;
    case kDLFloat8_e4m3fn: base = "float8_e4m3fn"; with_bits = false; break;
    case kDLFloat8_e4m3fnuz: base = "float8_e4m3fnuz"; with_bits = false; break;
    case kDLFloat8_e5m2: base = "float8_e5m2"; with_bits = false; break;
    case kDLFloat8_e5m2fnuz: base = "float8_e5m2fnuz"; with_bits = false; break;
    case kDLFloat8_e8m0fnu: base = "float8_e8m0fnu"; with_bits = false; break;
    case kDLFloat6_e2m3fn: base = "float6_e2m3fn"; with_bits = false; break;
    case kDLFloat6_e3m2fn: base = "float6_e3m2fn"; with_bits = false; break;
    case kDLFloat4_e2m1fn: base = "float4_e2m1fn"; with_bits = false; break;
    default: return "unknown(code=" + std::to_string(dtype.code) + ",bits=" + std::to_string(dtype.bits) + ")";
  }
  if (with_bits) base += std::to_string(dtype.bits);
  if (dtype.lanes != 1) base += "x" + std::to_string(dtype.lanes);
  return base;
}

}  // namespace ffi
}  // namespace tvm

// In the global namespace, beside DLDataType, so argument-dependent lookup finds them everywhere.
inline bool operator==(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(const DLDataType& a, const DLDataType& b) { return !(a == b); }
inline std::ostream& operator<<(std::ostream& os, DLDataType dtype) {
  return os << ::tvm::ffi::DLDataTypeToString(dtype);
}

#endif  // TVM_FFI_DTYPE_H_
