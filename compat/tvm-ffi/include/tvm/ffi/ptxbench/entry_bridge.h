// PTXBench TVM-FFI compatibility: how TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn) becomes PTXBench's
// kernel entry point.
//
// The macro defines exactly the symbols PTXBENCH_EXPORT(name, ...) defines (include/ptxbench/abi.h):
// `ptxbench_abi_version_<name>`, `ptxbench_entry_<name>` and `ptxbench_signature_<name>`. The entry hands the harness's arguments
// to PTXBench's own call machinery (ptxbench::detail::invoke, the function PTXBENCH_EXPORT expands to),
// so the count check, the exception handling and the error text are PTXBENCH_EXPORT's. In between
// sits an adapter that, for the call's duration:
//  - turns each ptxbench::tensor_view into what the upstream function's parameter asks for: a
//    tvm::ffi::TensorView (a DLTensor on {kDLCUDA, device}) or, for a scalar input (ndim 0), a plain
//    float / double / integer / bool read from the host value;
//  - registers the harness's stream so TVMFFIEnvGetStream(kDLCUDA, device) returns it.
//
// Upstream's export carries no dtype list, so the expected argument count comes from the function's
// parameter list and tensor dtypes are the kernel's own business (upstream kernels do not check them
// either, or check them with TVM_FFI_ICHECK). Scalar parameters are checked: a float parameter takes a
// float32 or integer scalar, an integer or bool parameter an integer or bool scalar.
//
// What this relies on from include/ptxbench/abi.h (kernel ABI 2), and so what to revisit when it
// changes: ptxbench_tensor, ptxbench_entry_fn (the entry's type; checked in function.h),
// ptxbench_signature (the record the build stage reads: the tensor count, every dtype -1 = "not
// declared", so the build checks the count against the task and leaves dtypes to the kernel),
// PTXBENCH_ABI_VERSION (checked below), ptxbench::tensor_view's public accessors (data_ptr, ndim,
// size, stride, device, dtype, scalar<T>), ptxbench::abi_error, and
// ptxbench::detail::invoke<Fn>(args, nargs, stream, signature, name, message), which calls
// Fn(tensor_view..., stream) after checking the count (and the declared dtypes) and returns the
// ABI's error kind.
#ifndef TVM_FFI_PTXBENCH_ENTRY_BRIDGE_H_
#define TVM_FFI_PTXBENCH_ENTRY_BRIDGE_H_

#include <ptxbench/abi.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

static_assert(PTXBENCH_ABI_VERSION == 2,
              "PTXBench's TVM-FFI compatibility bridge (compat/tvm-ffi/include/tvm/ffi/ptxbench/entry_bridge.h) "
              "was written for kernel ABI 2; update it for the new ABI");

namespace tvm {
namespace ffi {
namespace ptxbench_bridge {

/// DLPack's description of a PTXBench element type.
inline DLDataType dl_dtype(ptxbench_dtype d, std::size_t index) {
  switch (d) {
    case PTXBENCH_FLOAT32: return DLDataType{kDLFloat, 32, 1};
    case PTXBENCH_FLOAT16: return DLDataType{kDLFloat, 16, 1};
    case PTXBENCH_BFLOAT16: return DLDataType{kDLBfloat, 16, 1};
    case PTXBENCH_FLOAT8_E4M3FN: return DLDataType{kDLFloat8_e4m3fn, 8, 1};
    case PTXBENCH_FLOAT8_E5M2: return DLDataType{kDLFloat8_e5m2, 8, 1};
    case PTXBENCH_FLOAT4_E2M1: return DLDataType{kDLFloat4_e2m1fn, 4, 1};
    case PTXBENCH_INT64: return DLDataType{kDLInt, 64, 1};
    case PTXBENCH_INT32: return DLDataType{kDLInt, 32, 1};
    case PTXBENCH_INT16: return DLDataType{kDLInt, 16, 1};
    case PTXBENCH_INT8: return DLDataType{kDLInt, 8, 1};
    case PTXBENCH_BOOL: return DLDataType{kDLBool, 8, 1};
  }
  throw ::ptxbench::abi_error("argument " + std::to_string(index) + " has an unknown dtype code " +
                              std::to_string(static_cast<int>(d)));
}

/// One tensor argument as a DLTensor, with the shape and stride storage the DLTensor points into;
/// it lives on the adapter's stack for the duration of the call.
struct dl_argument {
  int64_t shape[PTXBENCH_MAX_DIMS];
  int64_t strides[PTXBENCH_MAX_DIMS];
  DLTensor tensor;

  const DLTensor* describe(const ::ptxbench::tensor_view& v, std::size_t index) {
    if (v.ndim() < 0 || v.ndim() > PTXBENCH_MAX_DIMS)
      throw ::ptxbench::abi_error("argument " + std::to_string(index) + " has " + std::to_string(v.ndim()) +
                                  " dimensions");
    for (int i = 0; i < v.ndim(); ++i) {
      shape[i] = v.size(i);
      strides[i] = v.stride(i);
    }
    tensor.data = v.data_ptr();
    tensor.device = DLDevice{kDLCUDA, v.device()};
    tensor.ndim = v.ndim();
    tensor.dtype = dl_dtype(v.dtype(), index);
    tensor.shape = shape;
    tensor.strides = strides;
    tensor.byte_offset = 0;
    return &tensor;
  }
};

template <typename P>
inline constexpr bool is_tensor_param = std::is_same_v<std::decay_t<P>, TensorView>;
template <typename P>
inline constexpr bool is_scalar_param = std::is_arithmetic_v<std::decay_t<P>>;
// A TensorView& parameter cannot bind to the view the adapter makes; const& and by value can.
template <typename P>
inline constexpr bool is_supported_param =
    (is_tensor_param<P> || is_scalar_param<P>) &&
    (!std::is_lvalue_reference_v<P> || std::is_const_v<std::remove_reference_t<P>>);

template <typename T>
const char* scalar_type_label() {
  if constexpr (std::is_same_v<T, bool>) return "a bool";
  else if constexpr (std::is_floating_point_v<T>) return "a floating-point";
  else return "an integer";
}

inline bool is_integer_dtype(ptxbench_dtype d) {
  return d == PTXBENCH_INT64 || d == PTXBENCH_INT32 || d == PTXBENCH_INT16 || d == PTXBENCH_INT8;
}

inline int64_t integer_scalar(const ::ptxbench::tensor_view& v) {
  switch (v.dtype()) {
    case PTXBENCH_INT64: return v.scalar<int64_t>();
    case PTXBENCH_INT32: return v.scalar<int32_t>();
    case PTXBENCH_INT16: return v.scalar<int16_t>();
    case PTXBENCH_INT8: return v.scalar<int8_t>();
    default: return v.scalar<uint8_t>() != 0;  // PTXBENCH_BOOL: one byte
  }
}

/// A scalar input (definition shape null: ndim 0, the value on the host) as the plain value an
/// upstream function takes for it, where TVM-FFI would convert the Python number the same way.
template <typename T>
T scalar_argument(const ::ptxbench::tensor_view& v, std::size_t index) {
  const std::string where = "argument " + std::to_string(index);
  if (v.ndim() != 0)
    throw ::ptxbench::abi_error(where + ": the function takes " + scalar_type_label<T>() + " value but the task passes a " +
                                std::to_string(v.ndim()) + "-d " + ::ptxbench::detail::dtype_name(v.dtype()) +
                                " tensor here; declare it tvm::ffi::TensorView");
  const ptxbench_dtype d = v.dtype();
  if constexpr (std::is_floating_point_v<T>) {
    if (d == PTXBENCH_FLOAT32) return static_cast<T>(v.scalar<float>());
    if (is_integer_dtype(d)) return static_cast<T>(integer_scalar(v));
  } else {
    if (is_integer_dtype(d) || d == PTXBENCH_BOOL) return static_cast<T>(integer_scalar(v));
  }
  throw ::ptxbench::abi_error(where + ": the function takes " + scalar_type_label<T>() + " value but the task passes a " +
                              ::ptxbench::detail::dtype_name(d) + " scalar");
}

template <typename P>
std::decay_t<P> argument(const ::ptxbench::tensor_view& v, dl_argument& slot, std::size_t index) {
  if constexpr (is_tensor_param<P>) return TensorView(slot.describe(v, index));
  else return scalar_argument<std::decay_t<P>>(v, index);
}

template <typename P>
using view_for = ::ptxbench::tensor_view;

template <auto Fn, typename R, typename... P>
struct adapter_impl {
  static_assert(std::is_void_v<R>,
                "TVM_FFI_DLL_EXPORT_TYPED_FUNC: PTXBench calls kernels in destination-passing style, so the "
                "exported function must return void and write its outputs");
  static_assert((is_supported_param<P> && ...),
                "TVM_FFI_DLL_EXPORT_TYPED_FUNC: every parameter must be a tvm::ffi::TensorView (by value or "
                "const&) or a plain number/bool for a scalar input; PTXBench's TVM-FFI compatibility "
                "supports no other parameter types");
  static constexpr std::size_t arity = sizeof...(P);

  /// What PTXBench's machinery calls: one tensor_view per parameter, then the stream.
  static void call(view_for<P>... views, cudaStream_t stream) {
    const ::ptxbench::tensor_view* list[] = {&views..., nullptr};
    env_stream_scope scope(arity > 0 ? list[0]->device() : -1, stream);
    call_with(list, std::index_sequence_for<P...>{});
  }

 private:
  template <std::size_t... I>
  static void call_with(const ::ptxbench::tensor_view* const* list, std::index_sequence<I...>) {
    dl_argument slots[arity > 0 ? arity : 1];
    (void)list;
    (void)slots;
    Fn(argument<P>(*list[I], slots[I], I)...);
  }
};

template <auto Fn, typename Sig = decltype(Fn)>
struct adapter {
  static_assert(sizeof(Sig) == 0, "TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn): fn must name a function");
};
template <auto Fn, typename R, typename... P>
struct adapter<Fn, R (*)(P...)> : adapter_impl<Fn, R, P...> {};
template <auto Fn, typename R, typename... P>
struct adapter<Fn, R (*)(P...) noexcept> : adapter_impl<Fn, R, P...> {};

/// The signature record of an upstream export: as many tensors as the function has parameters, no
/// declared dtypes (upstream's export carries none; dtypes are the kernel's to check, as under
/// TVM-FFI).
template <auto Fn>
constexpr ptxbench_signature signature() {
  using A = adapter<Fn>;
  static_assert(A::arity <= PTXBENCH_MAX_ARGS, "TVM_FFI_DLL_EXPORT_TYPED_FUNC: at most PTXBENCH_MAX_ARGS parameters");
  ptxbench_signature s{PTXBENCH_SIGNATURE_MAGIC, PTXBENCH_ABI_VERSION, static_cast<int32_t>(A::arity), {}};
  for (auto& d : s.dtypes) d = -1;
  return s;
}

/// The body of ptxbench_entry_<name>.
template <auto Fn>
int32_t entry(const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream, const ptxbench_signature& sig,
              const char* name, const char** message) {
  return ::ptxbench::detail::invoke<&adapter<Fn>::call>(args, nargs, stream, sig, name, message);
}

}  // namespace ptxbench_bridge
}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_PTXBENCH_ENTRY_BRIDGE_H_
