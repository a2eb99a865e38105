#include "gpu/harness/input_generator.h"

#include <fmt/format.h>

#include "gpu/common/cuda_check.h"
#include "gpu/harness/device_ops.h"
#include "gpu/harness/scalar_input.h"

namespace ptxbench::gpu {
namespace {

// Distinct streams of random numbers per input: the generator is keyed by (trial seed, input).
uint64_t input_seed(uint64_t seed, std::size_t index) { return seed * 0x9E3779B97F4A7C15ull + index * 0xBF58476D1CE4E5B9ull + 1; }

std::vector<device_tensor> views(const std::vector<guarded_buffer*>& bufs, const std::vector<std::size_t>& pick) {
  std::vector<device_tensor> out;
  for (auto i : pick) out.push_back({bufs[i]->data(), bufs[i]->type(), bufs[i]->shape()});
  return out;
}

}  // namespace

result<std::unique_ptr<input_generator>> input_generator::create(const definition& def, const workload& wl,
                                                                 const std::map<std::string, int64_t>& axes,
                                                                 const ordered_json& baseline_options,
                                                                 const std::vector<guarded_buffer*>& sample, int device,
                                                                 const std::filesystem::path& cache_dir,
                                                                 cudaStream_t stream) {
  auto gen = std::unique_ptr<input_generator>(new input_generator());
  auto layout = sequence_layout_for(def, wl);
  if (!layout) return layout.err().with_context("index inputs");
  gen->m_layout = std::move(*layout);
  bool needs_forward = false;
  for (const auto& t : def.inputs) {
    auto spec = wl.input(t.name);
    std::vector<unsigned char> scalar;
    if (spec.kind == input_kind::safetensors)
      return make_error(fmt::format("input {}: safetensors inputs are not supported by the harness yet", t.name));
    if (spec.kind == input_kind::scalar) {
      auto bytes = scalar_bytes(t, spec.scalar_value);
      if (!bytes) return bytes.err();
      scalar = std::move(*bytes);
    }
    if (spec.kind == input_kind::derived && !is_index_generator(spec.generator)) {
      if (spec.generator.rfind("attention_forward.", 0) != 0)
        return make_error(fmt::format("input {}: unknown generator '{}'", t.name, spec.generator));
      needs_forward = true;
    }
    gen->m_kinds.push_back(spec.kind);
    gen->m_generators.push_back(spec.generator);
    gen->m_scalars.push_back(std::move(scalar));
  }
  if (needs_forward) {
    // The forward's inputs are Q, K, V (the first three) and its outputs the derived O and LSE.
    std::vector<std::size_t> fwd_in = {0, 1, 2}, fwd_out;
    for (std::size_t i = 0; i < gen->m_generators.size(); ++i)
      if (gen->m_generators[i] == "attention_forward.O") fwd_out.push_back(i);
    for (std::size_t i = 0; i < gen->m_generators.size(); ++i)
      if (gen->m_generators[i] == "attention_forward.LSE") fwd_out.push_back(i);
    if (fwd_out.size() != 2) return make_error("attention_forward needs exactly one .O and one .LSE input");
    baseline_request req{"cudnn_sdpa_fwd", axes, baseline_options, device, cache_dir};
    for (std::size_t i : fwd_in) fill_random(sample[i]->data(), sample[i]->type(), sample[i]->numel(), i + 1, stream);
    auto fwd = make_baseline(req, views(sample, fwd_in), views(sample, fwd_out), stream);
    if (!fwd) return fwd.err().with_context("derived inputs O and LSE (attention forward)");
    gen->m_forward = std::move(*fwd);
  }
  return gen;
}

void input_generator::generate(const std::vector<guarded_buffer*>& inputs, uint64_t seed, cudaStream_t stream) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    guarded_buffer& b = *inputs[i];
    if (m_kinds[i] == input_kind::random) {
      fill_random(b.data(), b.type(), b.numel(), input_seed(seed, i), stream);
    } else if (m_kinds[i] == input_kind::scalar) {
      // From pageable memory the copy has read the source when the call returns (CUDA's rule).
      PTXB_CUDA_CALL(cudaMemcpyAsync(b.data(), m_scalars[i].data(), m_scalars[i].size(), cudaMemcpyHostToDevice, stream));
    } else if (m_kinds[i] == input_kind::derived && is_index_generator(m_generators[i])) {
      auto values = index_input_values(*m_layout, m_generators[i], input_seed(seed, i));
      if (!values) throw std::runtime_error("input " + b.name() + ": " + values.err().message);
      if (values->size() * sizeof(int32_t) != b.bytes())
        throw std::runtime_error(fmt::format("input {}: the layout gives {} values for a buffer of {} bytes", b.name(),
                                             values->size(), b.bytes()));
      PTXB_CUDA_CALL(cudaMemcpyAsync(b.data(), values->data(), b.bytes(), cudaMemcpyHostToDevice, stream));
    }
  }
  if (m_forward) {
    std::vector<std::size_t> fwd_in = {0, 1, 2}, fwd_out;
    for (std::size_t i = 0; i < m_generators.size(); ++i)
      if (m_generators[i] == "attention_forward.O") fwd_out.push_back(i);
    for (std::size_t i = 0; i < m_generators.size(); ++i)
      if (m_generators[i] == "attention_forward.LSE") fwd_out.push_back(i);
    m_forward->run(views(inputs, fwd_in), views(inputs, fwd_out), stream);
  }
}

std::string input_generator::derived_description() const {
  std::string out = m_forward ? "O and L from " + m_forward->description() + " on the same Q, K, V" : "";
  if (m_layout) {
    const sequence_layout& l = *m_layout;
    out += fmt::format("{}{} sequences ({} layout, longest {} queries / {} keys) fixed by the workload{}", out.empty() ? "" : "; ",
                       l.sequences(), l.paged ? "paged" : "ragged", l.max_q_len(), l.max_kv_len(),
                       l.paged ? (l.pinned_kv_indices ? "; kv_indices pinned by the workload"
                                                      : fmt::format("; kv_indices: {} distinct pages of {} drawn per trial",
                                                                    l.num_kv_indices, l.num_pages))
                               : "");
  }
  return out;
}

}  // namespace ptxbench::gpu
