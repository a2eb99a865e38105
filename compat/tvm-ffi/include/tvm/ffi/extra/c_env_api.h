// PTXBench TVM-FFI compatibility: the environment's CUDA stream.
//
// Under TVM-FFI the caller (PyTorch) registers its current stream and a kernel asks for it with
// TVMFFIEnvGetStream(device_type, device_id). Here the entry point that TVM_FFI_DLL_EXPORT_TYPED_FUNC
// generates registers the stream the PTXBench harness passes, for the duration of the call, on the
// calling thread; so `TVMFFIEnvGetStream(x.device().device_type, x.device().device_id)` returns the
// harness's stream. Like the real function it returns NULL (the default stream) for any other
// device, and outside a call.
#ifndef TVM_FFI_EXTRA_C_ENV_API_H_
#define TVM_FFI_EXTRA_C_ENV_API_H_

#include <tvm/ffi/c_api.h>

typedef void* TVMFFIStreamHandle;

namespace tvm {
namespace ffi {
namespace ptxbench_bridge {

/// The stream registered for the call in progress on this thread.
struct env_stream {
  bool active = false;
  int32_t device_id = -1;  ///< -1: the call has no tensor argument, so any CUDA device matches
  TVMFFIStreamHandle stream = nullptr;
};

/// One per thread and shared by every translation unit of the candidate (an inline variable), so a
/// Solution with several .cu files sees one stream.
inline thread_local env_stream current_env_stream;

/// Registers a stream for the lifetime of the scope and restores the previous registration after,
/// also when the kernel throws.
class env_stream_scope {
 public:
  env_stream_scope(int32_t device_id, TVMFFIStreamHandle stream) : m_saved(current_env_stream) {
    current_env_stream = env_stream{true, device_id, stream};
  }
  ~env_stream_scope() { current_env_stream = m_saved; }
  env_stream_scope(const env_stream_scope&) = delete;
  env_stream_scope& operator=(const env_stream_scope&) = delete;

 private:
  env_stream m_saved;
};

}  // namespace ptxbench_bridge
}  // namespace ffi
}  // namespace tvm

/// The stream to launch work on for (device_type, device_id): the harness's stream during a call
/// for its CUDA device, NULL otherwise.
extern "C" inline TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id) {
  const auto& s = ::tvm::ffi::ptxbench_bridge::current_env_stream;
  if (!s.active || device_type != kDLCUDA) return nullptr;
  if (s.device_id >= 0 && device_id != s.device_id) return nullptr;
  return s.stream;
}

#endif  // TVM_FFI_EXTRA_C_ENV_API_H_
