#pragma once
// Fills a task's inputs for one call from a seed: random inputs from the counter-based generator
// (seed, input index); scalar inputs with the workload's value (held in a one-element device buffer;
// the runner hands the candidate the value on the host, as the kernel ABI promises); index inputs
// (indptr arrays, page indices) from the workload's sequence layout (suite/sequence_layout.h: the
// split is fixed per workload, page indices are drawn per trial); then derived inputs computed by a
// trusted library from the random ones (for attention backward, O and LSE from the cuDNN forward on
// the same Q, K, V). The same seed always gives the same inputs, so any failing trial can be replayed.

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "baselines/baseline.h"
#include "gpu/harness/guarded_buffer.h"
#include "suite/definition.h"
#include "suite/sequence_layout.h"
#include "suite/workload.h"

namespace ptxbench::gpu {

class input_generator {
 public:
  /// Prepares generators for a task's inputs (creating the forward baseline when an input is
  /// derived from it). `sample` is one set of input buffers used to build and tune that baseline.
  static result<std::unique_ptr<input_generator>> create(const definition& def, const workload& wl,
                                                         const std::map<std::string, int64_t>& axes,
                                                         const ordered_json& baseline_options,
                                                         const std::vector<guarded_buffer*>& sample, int device,
                                                         const std::filesystem::path& cache_dir, cudaStream_t stream);

  /// Writes every input of one call into `inputs` (definition order) from `seed`.
  void generate(const std::vector<guarded_buffer*>& inputs, uint64_t seed, cudaStream_t stream);

  /// One line naming how derived inputs are produced ("" when none are).
  [[nodiscard]] std::string derived_description() const;

 private:
  std::vector<input_kind> m_kinds;
  std::vector<std::string> m_generators;
  std::vector<std::vector<unsigned char>> m_scalars;  // per input; empty unless a scalar
  std::optional<sequence_layout> m_layout;            // when the task has index inputs
  std::unique_ptr<baseline> m_forward;                // for attention_forward.* derived inputs
};

}  // namespace ptxbench::gpu
