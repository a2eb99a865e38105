#include "baselines/cudnn_sdpa.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "baselines/cudnn_sdpa_executable.h"
#include "baselines/cudnn_sdpa_request.h"

namespace ptxbench::gpu {
namespace {

using cudnn::sdpa_direction;
using cudnn::sdpa_executable;
using cudnn::sdpa_problem;

// Everything that determines a plan, and the folder that remembers it (a plan taken from one
// folder's memory is not reused for a request naming another); the stream and the buffers do not.
std::string cache_key(sdpa_direction direction, const sdpa_problem& p, int device,
                      const std::filesystem::path& cache_dir) {
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &p.scale, sizeof scale_bits);
  return fmt::format("{}|B{}|H{}|S{}|D{}|causal{}|scale{:08x}|bf16|dev{}|cudnn{}|memo {}",
                     direction == sdpa_direction::forward ? "fwd" : "bwd", p.b, p.h, p.s, p.d, p.causal ? 1 : 0,
                     scale_bits, device, cudnn::runtime_version().code, cache_dir.string());
}

// Process-wide memo of built executables (see the header for why it is shared).
class executable_cache {
 public:
  result<std::shared_ptr<sdpa_executable>> get_or_build(sdpa_direction direction, const sdpa_problem& problem,
                                                        const std::vector<void*>& io_pointers, cudaStream_t stream,
                                                        const std::filesystem::path& cache_dir) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
      cudaGetLastError();
      return make_error("cuDNN attention baseline: no usable CUDA device");
    }
    const std::string key = cache_key(direction, problem, device, cache_dir);
    std::lock_guard<std::mutex> lock(m_mutex);
    if (auto it = m_entries.find(key); it != m_entries.end()) return it->second;
    auto built = cudnn::build_sdpa_executable(direction, problem, cudnn::sdpa_config{}, io_pointers, stream, cache_dir);
    if (!built) return built.err();
    m_entries.emplace(key, *built);
    return built;
  }

 private:
  std::mutex m_mutex;
  std::map<std::string, std::shared_ptr<sdpa_executable>> m_entries;
};

executable_cache& shared_cache() {
  // Never destroyed: tearing down cuDNN handles and device memory from a static destructor races
  // the CUDA runtime's own teardown at process exit.
  static auto* cache = new executable_cache();
  return *cache;
}

class cudnn_sdpa_baseline final : public baseline {
 public:
  cudnn_sdpa_baseline(std::string kind, sdpa_direction direction, sdpa_problem problem,
                      std::shared_ptr<sdpa_executable> exe)
      : m_kind(std::move(kind)), m_direction(direction), m_problem(problem), m_exe(std::move(exe)) {}

  [[nodiscard]] std::string description() const override { return m_kind + ": " + m_exe->description(); }

  void run(const std::vector<device_tensor>& inputs, const std::vector<device_tensor>& outputs,
           cudaStream_t stream) override {
    result<std::vector<void*>> pointers = checked_pointers(m_kind, m_direction, m_problem, inputs, outputs);
    if (!pointers) throw std::runtime_error(pointers.err().message);
    m_exe->run(*pointers, stream);
  }

 private:
  std::string m_kind;
  sdpa_direction m_direction;
  sdpa_problem m_problem;
  std::shared_ptr<sdpa_executable> m_exe;
};

result<std::unique_ptr<baseline>> make_sdpa(const char* kind, sdpa_direction direction,
                                            const baseline_request& request,
                                            const std::vector<device_tensor>& sample_inputs,
                                            const std::vector<device_tensor>& sample_outputs, cudaStream_t stream) {
  if (request.kind != kind) {
    return make_error(fmt::format("{} asked to build a '{}' baseline", kind, request.kind));
  }
  result<sdpa_problem> problem = sdpa_problem_from_request(request);
  if (!problem) return problem.err();
  result<std::vector<void*>> pointers = checked_pointers(kind, direction, *problem, sample_inputs, sample_outputs);
  if (!pointers) return pointers.err();
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device != request.device) {
    cudaGetLastError();
    return make_error(fmt::format("{}: baseline requested for device {} but the current device is {}", kind,
                                  request.device, device));
  }
  auto exe = shared_cache().get_or_build(direction, *problem, *pointers, stream, request.cache_dir);
  if (!exe) return exe.err().with_context(kind);
  return std::unique_ptr<baseline>(std::make_unique<cudnn_sdpa_baseline>(kind, direction, *problem, *exe));
}

}  // namespace

result<std::unique_ptr<baseline>> make_cudnn_sdpa_fwd(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream) {
  return make_sdpa("cudnn_sdpa_fwd", sdpa_direction::forward, request, sample_inputs, sample_outputs, stream);
}

result<std::unique_ptr<baseline>> make_cudnn_sdpa_bwd(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream) {
  return make_sdpa("cudnn_sdpa_bwd", sdpa_direction::backward, request, sample_inputs, sample_outputs, stream);
}

status attention_forward_for_inputs(const device_tensor& q, const device_tensor& k, const device_tensor& v,
                                    bool causal, const device_tensor& o, const device_tensor& lse,
                                    cudaStream_t stream, const std::filesystem::path& cache_dir) {
  const char* kind = "attention_forward_for_inputs";
  if (q.shape.size() != 4) return make_error(fmt::format("{}: Q must be [B, H, S, D]", kind));
  sdpa_problem problem{q.shape[0], q.shape[1], q.shape[2], q.shape[3], causal,
                       static_cast<float>(1.0 / std::sqrt(static_cast<double>(q.shape[3])))};
  result<std::vector<void*>> pointers =
      checked_pointers(kind, sdpa_direction::forward, problem, {q, k, v}, {o, lse});
  if (!pointers) return pointers.err();
  auto exe = shared_cache().get_or_build(sdpa_direction::forward, problem, *pointers, stream, cache_dir);
  if (!exe) return exe.err().with_context(kind);
  try {
    (*exe)->run(*pointers, stream);
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: {}", kind, e.what()));
  }
  return ok();
}

}  // namespace ptxbench::gpu
