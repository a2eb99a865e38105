// PTXBench kernel ABI, version 2: what a candidate kernel file includes to be callable by the harness.
//
// A candidate implements its task's Definition in destination-passing style: one host function that
// takes every input and then every output, in definition order, as tensor views, plus the CUDA
// stream the harness wants the work on, and returns nothing. PTXBENCH_EXPORT turns it into a C entry
// point that checks the argument count and dtypes and reports failures as a machine-readable kind
// plus a message, never by crashing.
//
//   #include <ptxbench/abi.h>
//
//   __global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
//                               int M, int N, int K) { ... }
//
//   void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C,
//            cudaStream_t stream) {
//     int M = A.size(0), K = A.size(1), N = B.size(0);
//     gemm_kernel<<<grid, block, 0, stream>>>(A.data<__nv_bfloat16>(), B.data<__nv_bfloat16>(),
//                                            C.data<__nv_bfloat16>(), M, N, K);
//   }
//   PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
//
// Contract (docs/kernel-abi.md has the full text):
//  - Every tensor is a device pointer on the current device, contiguous (row-major) unless its
//    strides say otherwise, 256-byte aligned. Scalars (definition shape null) arrive as tensor views
//    with ndim() == 0 whose scalar<T>() holds the value on the host.
//  - Launch work on `stream` (any stream you create is allowed, but all work must be finished or
//    ordered before run() returns control to the harness's synchronisation; the harness times every
//    kernel the call launched, on any stream).
//  - Write every element of every output; outputs start filled with NaN. Never write inputs.
//  - A failed argument-count check is INCORRECT_SHAPE, a failed dtype check INCORRECT_DTYPE; throw
//    ptxbench::shape_error for a shape you cannot handle (INCORRECT_SHAPE); any other exception is a
//    RUNTIME_ERROR with its message.
//  - Vendor libraries (cuBLAS, cuBLASLt, cuDNN) and dynamic loading are not allowed.
#ifndef PTXBENCH_ABI_H
#define PTXBENCH_ABI_H

#include <stdint.h>

#include <cuda_runtime.h>

#define PTXBENCH_ABI_VERSION 2
#define PTXBENCH_MAX_DIMS 8
#define PTXBENCH_MAX_ARGS 32
#define PTXBENCH_SIGNATURE_MAGIC 0x50544253u /* "PTBS" */

#ifdef __cplusplus
extern "C" {
#endif

/// Element types, in the order of the FlashInfer-Trace dtype list.
typedef enum ptxbench_dtype {
  PTXBENCH_FLOAT32 = 0,
  PTXBENCH_FLOAT16 = 1,
  PTXBENCH_BFLOAT16 = 2,
  PTXBENCH_FLOAT8_E4M3FN = 3,
  PTXBENCH_FLOAT8_E5M2 = 4,
  PTXBENCH_FLOAT4_E2M1 = 5,
  PTXBENCH_INT64 = 6,
  PTXBENCH_INT32 = 7,
  PTXBENCH_INT16 = 8,
  PTXBENCH_INT8 = 9,
  PTXBENCH_BOOL = 10
} ptxbench_dtype;

/// One argument as the harness passes it. Plain C so the harness and the candidate need not share a
/// compiler or standard library.
typedef struct ptxbench_tensor {
  void* data;                          ///< device pointer; host pointer to the value for scalars
  int32_t dtype;                       ///< a ptxbench_dtype
  int32_t ndim;                        ///< 0 for a scalar
  int64_t sizes[PTXBENCH_MAX_DIMS];    ///< elements per dimension
  int64_t strides[PTXBENCH_MAX_DIMS];  ///< in elements
  int32_t device;                      ///< CUDA device ordinal
  int32_t is_output;                   ///< 1 for outputs
} ptxbench_tensor;

/// Why a call failed, as the harness reads it (version 2). The harness decides the status from the
/// kind, never from the message.
typedef enum ptxbench_error_kind {
  PTXBENCH_OK = 0,
  PTXBENCH_ERROR_ARGUMENT_COUNT = 1,  ///< wrong number of tensors: INCORRECT_SHAPE
  PTXBENCH_ERROR_DTYPE = 2,           ///< an argument's element type differs from the export: INCORRECT_DTYPE
  PTXBENCH_ERROR_SHAPE = 3,           ///< the kernel refused a shape (ptxbench::shape_error): INCORRECT_SHAPE
  PTXBENCH_ERROR_EXCEPTION = 4        ///< anything else the call threw: RUNTIME_ERROR
} ptxbench_error_kind;

/// Signature of the version-2 entry point: returns a ptxbench_error_kind; on failure *message points
/// to a message that stays valid until the next call on the same thread (NULL on success).
typedef int32_t (*ptxbench_entry_fn)(const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream,
                                     const char** message);

/// Signature of the version-1 entry point (still loaded): returns NULL on success, else a message.
/// Its failures carry no kind; the harness reports them as RUNTIME_ERROR.
typedef const char* (*ptxbench_entry_v1_fn)(const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream);

/// What PTXBENCH_EXPORT records about the entry in the built object (symbol
/// ptxbench_signature_<fn>), so the build stage can check it against the task before anything runs.
typedef struct ptxbench_signature {
  uint32_t magic;                     ///< PTXBENCH_SIGNATURE_MAGIC
  int32_t abi_version;                ///< PTXBENCH_ABI_VERSION
  int32_t count;                      ///< number of tensor arguments
  int32_t dtypes[PTXBENCH_MAX_ARGS];  ///< ptxbench_dtype of each; -1: not declared (checked by the kernel)
} ptxbench_signature;

#ifdef __cplusplus
}  // extern "C"

#include <cstddef>
#include <exception>
#include <string>
#include <utility>

namespace ptxbench {

/// A read-only description of one argument; the data it points to is writable for outputs.
class tensor_view {
 public:
  explicit tensor_view(const ptxbench_tensor& t) : m_t(&t) {}

  void* data_ptr() const { return m_t->data; }
  template <typename T>
  T* data() const { return static_cast<T*>(m_t->data); }
  int ndim() const { return m_t->ndim; }
  int64_t size(int dim) const { return m_t->sizes[dim < 0 ? dim + m_t->ndim : dim]; }
  int64_t stride(int dim) const { return m_t->strides[dim < 0 ? dim + m_t->ndim : dim]; }
  int device() const { return m_t->device; }
  ptxbench_dtype dtype() const { return static_cast<ptxbench_dtype>(m_t->dtype); }
  bool is_output() const { return m_t->is_output != 0; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < m_t->ndim; ++i) n *= m_t->sizes[i];
    return n;
  }
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int i = m_t->ndim - 1; i >= 0; --i) {
      if (m_t->sizes[i] != 1 && m_t->strides[i] != expected) return false;
      expected *= m_t->sizes[i];
    }
    return true;
  }
  /// The value of a scalar argument (ndim() == 0).
  template <typename T>
  T scalar() const { return *static_cast<const T*>(m_t->data); }

 private:
  const ptxbench_tensor* m_t;
};

/// Throw this (or any std::exception) from run() to report a clear error to the harness.
struct abi_error : std::exception {
  explicit abi_error(std::string message) : m_message(std::move(message)) {}
  const char* what() const noexcept override { return m_message.c_str(); }

 private:
  std::string m_message;
};

/// Throw this from run() when a tensor has a shape the kernel does not handle (INCORRECT_SHAPE).
struct shape_error : abi_error {
  using abi_error::abi_error;
};

namespace detail {

inline const char* dtype_name(int32_t d) {
  static const char* names[] = {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1",
                                "int64",   "int32",   "int16",    "int8",          "bool"};
  return d >= 0 && d <= 10 ? names[d] : "unknown";
}

inline std::string& error_buffer() {
  thread_local std::string buffer;
  return buffer;
}

inline int32_t fail(const char** out, int32_t kind, std::string message) {
  error_buffer() = std::move(message);
  if (out) *out = error_buffer().c_str();
  return kind;
}

template <typename... D>
constexpr int32_t count_dtypes(D...) {
  return static_cast<int32_t>(sizeof...(D));
}

template <typename F>
struct tensor_arity;
template <typename... A>
struct tensor_arity<void (*)(A...)> {
  static constexpr std::size_t value = sizeof...(A) - 1;  // the last parameter is the stream
};

template <auto Fn, std::size_t... I>
void call_with_views(const ptxbench_tensor* args, cudaStream_t stream, std::index_sequence<I...>) {
  Fn(tensor_view(args[I])..., stream);
}

template <auto Fn>
int32_t invoke(const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream, const ptxbench_signature& sig,
               const char* name, const char** message) {
  constexpr std::size_t arity = tensor_arity<decltype(Fn)>::value;
  if (message) *message = nullptr;
  if (args == nullptr || nargs != static_cast<int32_t>(arity))
    return fail(message, PTXBENCH_ERROR_ARGUMENT_COUNT,
                std::string(name) + " expects " + std::to_string(arity) + " tensors (inputs then outputs), got " +
                    std::to_string(nargs));
  for (std::size_t i = 0; i < arity; ++i)
    if (sig.dtypes[i] >= 0 && args[i].dtype != sig.dtypes[i])
      return fail(message, PTXBENCH_ERROR_DTYPE,
                  std::string(name) + ": argument " + std::to_string(i) + " is " + dtype_name(args[i].dtype) +
                      " but the kernel was exported for " + dtype_name(sig.dtypes[i]));
  try {
    call_with_views<Fn>(args, stream, std::make_index_sequence<arity>{});
  } catch (const shape_error& e) {
    return fail(message, PTXBENCH_ERROR_SHAPE, std::string(name) + ": " + e.what());
  } catch (const std::exception& e) {
    return fail(message, PTXBENCH_ERROR_EXCEPTION, std::string(name) + " threw: " + e.what());
  } catch (...) {
    return fail(message, PTXBENCH_ERROR_EXCEPTION, std::string(name) + " threw a non-standard exception");
  }
  return PTXBENCH_OK;
}

}  // namespace detail
}  // namespace ptxbench

/// Exports `fn` (a function `void fn(tensor_view..., cudaStream_t)`) as the C entry point
/// `ptxbench_entry_<fn>`, checking the argument count and each argument's dtype against the list
/// (which must name one dtype per tensor parameter: a mismatch does not compile). Also exports
/// `ptxbench_abi_version_<fn>`, so the harness can refuse an incompatible build, and
/// `ptxbench_signature_<fn>`, so the build stage can check the export against the task.
#define PTXBENCH_EXPORT(fn, ...)                                                                            \
  static_assert(::ptxbench::detail::count_dtypes(__VA_ARGS__) ==                                           \
                    static_cast<int32_t>(::ptxbench::detail::tensor_arity<decltype(&fn)>::value),           \
                "PTXBENCH_EXPORT(" #fn ", ...) must list one dtype per tensor parameter of " #fn);          \
  static_assert(::ptxbench::detail::count_dtypes(__VA_ARGS__) <= PTXBENCH_MAX_ARGS,                        \
                "PTXBENCH_EXPORT(" #fn ", ...): at most PTXBENCH_MAX_ARGS tensors");                      \
  extern "C" __attribute__((visibility("default"), used)) const ptxbench_signature ptxbench_signature_##fn = \
      {PTXBENCH_SIGNATURE_MAGIC, PTXBENCH_ABI_VERSION, ::ptxbench::detail::count_dtypes(__VA_ARGS__),     \
       {__VA_ARGS__}};                                                                                      \
  extern "C" __attribute__((visibility("default"))) int32_t ptxbench_abi_version_##fn() {                  \
    return PTXBENCH_ABI_VERSION;                                                                            \
  }                                                                                                         \
  extern "C" __attribute__((visibility("default"))) int32_t ptxbench_entry_##fn(                           \
      const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream, const char** message) {              \
    return ::ptxbench::detail::invoke<&fn>(args, nargs, stream, ptxbench_signature_##fn, #fn, message);    \
  }

#endif  // __cplusplus
#endif  // PTXBENCH_ABI_H
