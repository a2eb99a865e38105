// A C API over PTXBench's vendor baselines, so a benchmark script can run our baseline and another
// implementation (PyTorch) side by side in one process, on the same tensors, alternating calls.
// Used by bench/eval/baseline_vs_torch.py; not part of the evaluation pipeline.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "baselines/baseline.h"
#ifdef PTXBENCH_HAVE_CUDNN_SDPA
#include "baselines/cudnn_gqa.h"
#endif
#include "suite/sequence_layout.h"
#include "suite/task.h"

using namespace ptxbench;

namespace {

struct handle {
  std::unique_ptr<gpu::baseline> impl;
  std::vector<gpu::device_tensor> inputs, outputs;  // shapes and dtypes; data pointers per call
  std::string description;
};

void set_error(char* err, int len, const std::string& message) {
  if (err && len > 0) {
    std::strncpy(err, message.c_str(), static_cast<std::size_t>(len - 1));
    err[len - 1] = '\0';
  }
}

std::vector<gpu::device_tensor> views(const std::vector<tensor_spec>& specs, const std::map<std::string, int64_t>& axes,
                                      void** data) {
  std::vector<gpu::device_tensor> out;
  for (std::size_t i = 0; i < specs.size(); ++i) out.push_back({data[i], specs[i].type, concrete_shape(specs[i], axes)});
  return out;
}

}  // namespace

extern "C" {

/// Creates the task's baseline on the current device and tunes it on the given buffers (inputs then
/// outputs in definition order, contiguous). Returns NULL and fills err on failure.
__attribute__((visibility("default"))) void* ptxb_baseline_create(const char* suite_root, const char* task_name,
                                                                   void** inputs, void** outputs, void* stream,
                                                                   const char* cache_dir, char* err, int err_len) {
  try {
    auto s = load_suite(suite_root);
    if (!s) return set_error(err, err_len, s.err().message), nullptr;
    const task* t = s->find_task(task_name);
    if (!t) return set_error(err, err_len, fmt::format("unknown task '{}'", task_name)), nullptr;
    auto axes = resolve_axes(t->wl, t->def);
    auto h = std::make_unique<handle>();
    h->inputs = views(t->def.inputs, axes, inputs);
    h->outputs = views(t->def.outputs, axes, outputs);
    int device = 0;
    cudaGetDevice(&device);
    gpu::baseline_request req{t->baseline, axes, t->baseline_options, device, cache_dir ? cache_dir : ""};
    auto b = gpu::make_baseline(req, h->inputs, h->outputs, static_cast<cudaStream_t>(stream));
    if (!b) return set_error(err, err_len, b.err().message), nullptr;
    h->impl = std::move(*b);
    h->description = h->impl->description();
    return h.release();
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return nullptr;
  }
}

/// Like ptxb_baseline_create, but the GQA tasks' independent fp32 GPU reference (gqa_reference.h, the
/// baseline's fallback) instead of cuDNN, so a script can compare cuDNN, this reference and a third
/// implementation on the same tensors. Only for tasks whose baseline is cudnn_sdpa_gqa; NULL and err
/// filled otherwise.
__attribute__((visibility("default"))) void* ptxb_reference_create(const char* suite_root, const char* task_name,
                                                                    void** inputs, void** outputs, char* err,
                                                                    int err_len) {
#ifdef PTXBENCH_HAVE_CUDNN_SDPA
  try {
    auto s = load_suite(suite_root);
    if (!s) return set_error(err, err_len, s.err().message), nullptr;
    const task* t = s->find_task(task_name);
    if (!t) return set_error(err, err_len, fmt::format("unknown task '{}'", task_name)), nullptr;
    if (t->baseline != "cudnn_sdpa_gqa")
      return set_error(err, err_len, fmt::format("task {}: its baseline is {}, not cudnn_sdpa_gqa; no independent "
                                                 "reference is served for it", task_name, t->baseline)),
             nullptr;
    auto axes = resolve_axes(t->wl, t->def);
    auto h = std::make_unique<handle>();
    h->inputs = views(t->def.inputs, axes, inputs);
    h->outputs = views(t->def.outputs, axes, outputs);
    int device = 0;
    cudaGetDevice(&device);
    gpu::baseline_request req{t->baseline, axes, t->baseline_options, device, ""};
    auto b = gpu::make_gqa_reference_baseline(req, h->inputs, h->outputs, "requested for a cross-check");
    if (!b) return set_error(err, err_len, b.err().message), nullptr;
    h->impl = std::move(*b);
    h->description = h->impl->description();
    return h.release();
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return nullptr;
  }
#else
  (void)suite_root, (void)task_name, (void)inputs, (void)outputs;
  set_error(err, err_len, "this build has no cuDNN baselines (libcudnn or cudnn_backend.h was not found)");
  return nullptr;
#endif
}

/// Enqueues one call on `stream` with new data pointers. Returns 0, or -1 with err filled.
__attribute__((visibility("default"))) int ptxb_baseline_run(void* hp, void** inputs, void** outputs, void* stream,
                                                             char* err, int err_len) {
  auto* h = static_cast<handle*>(hp);
  try {
    for (std::size_t i = 0; i < h->inputs.size(); ++i) h->inputs[i].data = inputs[i];
    for (std::size_t i = 0; i < h->outputs.size(); ++i) h->outputs[i].data = outputs[i];
    h->impl->run(h->inputs, h->outputs, static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return -1;
  }
}

__attribute__((visibility("default"))) const char* ptxb_baseline_describe(void* hp) {
  return static_cast<handle*>(hp)->description.c_str();
}

__attribute__((visibility("default"))) void ptxb_baseline_destroy(void* hp) { delete static_cast<handle*>(hp); }

/// Fills `out` (host memory, `bytes` long) with the value of one of a task's inputs that the harness
/// does not draw at random: an index input (int32: qo_indptr, kv_indptr, kv_indices; the sequence
/// layout of suite/sequence_layout.h, kv_indices drawn from `seed`) or a scalar (its workload value as
/// a float32). Returns 0, or -1 with err filled (unknown task or input, a random input, a size
/// mismatch).
__attribute__((visibility("default"))) int ptxb_task_input(const char* suite_root, const char* task_name,
                                                           const char* input_name, uint64_t seed, void* out,
                                                           int64_t bytes, char* err, int err_len) {
  try {
    auto s = load_suite(suite_root);
    if (!s) return set_error(err, err_len, s.err().message), -1;
    const task* t = s->find_task(task_name);
    if (!t) return set_error(err, err_len, fmt::format("unknown task '{}'", task_name)), -1;
    const tensor_spec* spec = t->def.find_input(input_name);
    if (!spec) return set_error(err, err_len, fmt::format("task {} has no input '{}'", task_name, input_name)), -1;
    const input_spec source = t->wl.input(input_name);
    if (source.kind == input_kind::scalar) {
      if (spec->type != dtype::float32 || bytes != 4)
        return set_error(err, err_len, fmt::format("input {}: only float32 scalars (4 bytes) are served", input_name)), -1;
      const float value = source.scalar_value.get<float>();
      std::memcpy(out, &value, sizeof value);
      return 0;
    }
    if (source.kind != input_kind::derived || !is_index_generator(source.generator))
      return set_error(err, err_len, fmt::format("input {} is not an index or scalar input", input_name)), -1;
    auto layout = sequence_layout_for(t->def, t->wl);
    if (!layout || !*layout) return set_error(err, err_len, layout ? "no index layout" : layout.err().message), -1;
    auto values = index_input_values(**layout, source.generator, seed);
    if (!values) return set_error(err, err_len, values.err().message), -1;
    if (static_cast<int64_t>(values->size() * sizeof(int32_t)) != bytes)
      return set_error(err, err_len, fmt::format("input {}: {} int32 values, buffer of {} bytes", input_name,
                                                 values->size(), bytes)), -1;
    std::memcpy(out, values->data(), static_cast<std::size_t>(bytes));
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, e.what());
    return -1;
  }
}

}  // extern "C"
