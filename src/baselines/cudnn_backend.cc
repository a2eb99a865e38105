#include "baselines/cudnn_backend.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace ptxbench::gpu::cudnn {

std::string status_text(cudnnStatus_t status) {
  std::string text = cudnnGetErrorString(status);
  if (status == CUDNN_STATUS_SUCCESS) return text;  // the last-error buffer may hold stale warnings
  // cudnnGetLastErrorString exists from cuDNN 9.0; it carries the reason (e.g. which check failed).
  std::array<char, 1024> last{};
  cudnnGetLastErrorString(last.data(), last.size());
  if (last[0] != '\0') {
    text += ": ";
    text += last.data();
  }
  return text;
}

void check(cudnnStatus_t status, const char* what, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw cudnn_error(status, fmt::format("{} failed ({}:{}): {}", what, file, line, status_text(status)));
}

std::string version::str() const { return fmt::format("{}.{}.{}", major(), minor(), patch()); }

version runtime_version() { return version{static_cast<int64_t>(cudnnGetVersion())}; }

version compiled_version() { return version{CUDNN_VERSION}; }

void throw_not_available(const std::string& what, const std::string& needs, version runtime) {
  throw cudnn_error(CUDNN_STATUS_NOT_SUPPORTED, fmt::format("{} needs {} (loaded cuDNN {}, headers {})", what, needs,
                                                            runtime.str(), compiled_version().str()));
}

descriptor descriptor::create(cudnnBackendDescriptorType_t type, const char* type_name) {
  cudnnBackendDescriptor_t desc = nullptr;
  cudnnStatus_t status = cudnnBackendCreateDescriptor(type, &desc);
  if (status != CUDNN_STATUS_SUCCESS) {
    throw cudnn_error(status, fmt::format("creating {} failed: {}", type_name, status_text(status)));
  }
  return descriptor(desc, type_name);
}

descriptor::~descriptor() {
  if (m_desc != nullptr) cudnnBackendDestroyDescriptor(m_desc);
}

descriptor::descriptor(descriptor&& other) noexcept
    : m_desc(std::exchange(other.m_desc, nullptr)), m_type_name(other.m_type_name) {}

descriptor& descriptor::operator=(descriptor&& other) noexcept {
  if (this != &other) {
    if (m_desc != nullptr) cudnnBackendDestroyDescriptor(m_desc);
    m_desc = std::exchange(other.m_desc, nullptr);
    m_type_name = other.m_type_name;
  }
  return *this;
}

descriptor& descriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                            const void* values, const char* attr_name) {
  cudnnStatus_t status = cudnnBackendSetAttribute(m_desc, name, type, count, values);
  if (status != CUDNN_STATUS_SUCCESS) {
    throw cudnn_error(status, fmt::format("{}: setting {} failed: {}", m_type_name, attr_name, status_text(status)));
  }
  return *this;
}

descriptor& descriptor::set_int64(cudnnBackendAttributeName_t name, int64_t value, const char* attr_name) {
  return set(name, CUDNN_TYPE_INT64, 1, &value, attr_name);
}

descriptor& descriptor::set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values,
                                   const char* attr_name) {
  return set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data(), attr_name);
}

descriptor& descriptor::set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value,
                                      const char* attr_name) {
  return set(name, CUDNN_TYPE_DATA_TYPE, 1, &value, attr_name);
}

descriptor& descriptor::set_bool(cudnnBackendAttributeName_t name, bool value, const char* attr_name) {
  return set(name, CUDNN_TYPE_BOOLEAN, 1, &value, attr_name);
}

descriptor& descriptor::set_float(cudnnBackendAttributeName_t name, float value, const char* attr_name) {
  return set(name, CUDNN_TYPE_FLOAT, 1, &value, attr_name);
}

descriptor& descriptor::set_desc(cudnnBackendAttributeName_t name, const descriptor& value, const char* attr_name) {
  cudnnBackendDescriptor_t raw = value.get();
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, attr_name);
}

descriptor& descriptor::set_descs(cudnnBackendAttributeName_t name,
                                  const std::vector<cudnnBackendDescriptor_t>& values, const char* attr_name) {
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(values.size()), values.data(), attr_name);
}

void descriptor::finalize(const char* what) {
  cudnnStatus_t status = cudnnBackendFinalize(m_desc);
  if (status != CUDNN_STATUS_SUCCESS) {
    throw cudnn_error(status, fmt::format("finalizing {} ({}) failed: {}", what, m_type_name, status_text(status)));
  }
}

cudnnStatus_t descriptor::try_finalize() { return cudnnBackendFinalize(m_desc); }

handle::handle() { PTXB_CUDNN_CALL(cudnnCreate(&m_handle)); }

handle::~handle() {
  if (m_handle != nullptr) cudnnDestroy(m_handle);
}

void handle::set_stream(cudaStream_t stream) { PTXB_CUDNN_CALL(cudnnSetStream(m_handle, stream)); }

}  // namespace ptxbench::gpu::cudnn
