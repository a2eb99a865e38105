#pragma once
// Thin C++ layer over the cuDNN backend (graph) C API: an owning descriptor type, typed attribute
// setters, a handle, status-to-text and the library version. Builders use it with exceptions
// (cudnn_error) because a graph is a hundred attribute calls; the public make_* functions turn
// those exceptions into result<T> errors, so nothing outside src/gpu/cudnn_* sees them.

#include <cudnn.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/common/cuda_check.h"  // PTXB_CUDA_CALL for the CUDA runtime calls next to the cuDNN ones

namespace ptxbench::gpu::cudnn {

/// A failed cuDNN call: what was called, the status name and cuDNN's own last-error text.
class cudnn_error : public std::runtime_error {
 public:
  cudnn_error(cudnnStatus_t status, const std::string& message)
      : std::runtime_error(message), m_status(status) {}
  [[nodiscard]] cudnnStatus_t status() const { return m_status; }

 private:
  cudnnStatus_t m_status;
};

/// "CUDNN_STATUS_NOT_SUPPORTED: <cuDNN's last error message, if any>".
std::string status_text(cudnnStatus_t status);

/// Throws cudnn_error naming `what` (and file:line) when status is not success.
void check(cudnnStatus_t status, const char* what, const char* file, int line);

#define PTXB_CUDNN_CALL(call) ::ptxbench::gpu::cudnn::check((call), #call, __FILE__, __LINE__)

/// A cuDNN version as cudnnGetVersion() encodes it (major*10000 + minor*100 + patch for 9.x).
struct version {
  int64_t code = 0;
  [[nodiscard]] int major() const { return static_cast<int>(code / 10000); }
  [[nodiscard]] int minor() const { return static_cast<int>((code / 100) % 100); }
  [[nodiscard]] int patch() const { return static_cast<int>(code % 100); }
  /// "9.19.0".
  [[nodiscard]] std::string str() const;
};

/// The version of the libcudnn actually loaded (cudnnGetVersion()).
version runtime_version();
/// The version of the headers this file was compiled against (CUDNN_VERSION).
version compiled_version();
/// Throws cudnn_error(CUDNN_STATUS_NOT_SUPPORTED) saying that `what` needs `needs` ("cuDNN >= 9.5"),
/// with the loaded and the compiled-against versions: a graph this cuDNN cannot build.
[[noreturn]] void throw_not_available(const std::string& what, const std::string& needs, version runtime);

/// An owning cudnnBackendDescriptor_t (move-only). Setters throw cudnn_error naming the attribute.
class descriptor {
 public:
  descriptor() = default;
  /// Creates a descriptor of `type`; throws cudnn_error when cuDNN does not know the type.
  static descriptor create(cudnnBackendDescriptorType_t type, const char* type_name);
  ~descriptor();
  descriptor(descriptor&& other) noexcept;
  descriptor& operator=(descriptor&& other) noexcept;
  descriptor(const descriptor&) = delete;
  descriptor& operator=(const descriptor&) = delete;

  [[nodiscard]] cudnnBackendDescriptor_t get() const { return m_desc; }
  [[nodiscard]] explicit operator bool() const { return m_desc != nullptr; }

  descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                  const void* values, const char* attr_name);
  descriptor& set_int64(cudnnBackendAttributeName_t name, int64_t value, const char* attr_name);
  descriptor& set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values,
                         const char* attr_name);
  descriptor& set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value, const char* attr_name);
  descriptor& set_bool(cudnnBackendAttributeName_t name, bool value, const char* attr_name);
  descriptor& set_float(cudnnBackendAttributeName_t name, float value, const char* attr_name);
  descriptor& set_desc(cudnnBackendAttributeName_t name, const descriptor& value, const char* attr_name);
  descriptor& set_descs(cudnnBackendAttributeName_t name, const std::vector<cudnnBackendDescriptor_t>& values,
                        const char* attr_name);
  /// Finalizes; throws cudnn_error naming `what` on failure.
  void finalize(const char* what);
  /// Finalizes and returns the status instead of throwing (for "does this engine config work?").
  [[nodiscard]] cudnnStatus_t try_finalize();

 private:
  explicit descriptor(cudnnBackendDescriptor_t desc, const char* type_name) : m_desc(desc), m_type_name(type_name) {}
  cudnnBackendDescriptor_t m_desc = nullptr;
  const char* m_type_name = "";
};

/// An owning cudnnHandle_t, created on the current device.
class handle {
 public:
  /// Creates the handle; throws cudnn_error (e.g. CUDNN_STATUS_NOT_INITIALIZED without a GPU).
  handle();
  ~handle();
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  [[nodiscard]] cudnnHandle_t get() const { return m_handle; }
  /// Binds the stream later calls run on; throws cudnn_error on failure.
  void set_stream(cudaStream_t stream);

 private:
  cudnnHandle_t m_handle = nullptr;
};

}  // namespace ptxbench::gpu::cudnn
