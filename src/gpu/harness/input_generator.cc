#include "gpu/harness/input_generator.h"

#include <fmt/format.h>

#include "gpu/harness/device_ops.h"

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
  bool needs_forward = false;
  for (const auto& t : def.inputs) {
    auto spec = wl.input(t.name);
    if (spec.kind == input_kind::scalar || spec.kind == input_kind::safetensors)
      return make_error(fmt::format("input {}: {} inputs are not supported by the harness yet", t.name,
                                    spec.kind == input_kind::scalar ? "scalar" : "safetensors"));
    if (spec.kind == input_kind::derived) {
      if (spec.generator.rfind("attention_forward.", 0) != 0)
        return make_error(fmt::format("input {}: unknown generator '{}'", t.name, spec.generator));
      needs_forward = true;
    }
    gen->m_kinds.push_back(spec.kind);
    gen->m_generators.push_back(spec.generator);
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
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (m_kinds[i] == input_kind::random)
      fill_random(inputs[i]->data(), inputs[i]->type(), inputs[i]->numel(), input_seed(seed, i), stream);
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
  return m_forward ? "O and L from " + m_forward->description() + " on the same Q, K, V" : "";
}

}  // namespace ptxbench::gpu
