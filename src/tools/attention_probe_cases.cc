#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <type_traits>

#include "tools/attention_probe.h"
#include "baselines/attention_reference.h"
#include "baselines/cudnn_backend.h"
#include "baselines/cudnn_sdpa.h"
#include "baselines/cudnn_sdpa_executable.h"
#include "baselines/seeded_fill.h"

namespace ptxbench::gpu::probe {
namespace {

using cudnn::sdpa_direction;
using cudnn::sdpa_graph_kind;
constexpr double k_tolerance = 1e-2;

template <typename T>
class dev {
 public:
  explicit dev(int64_t count) { PTXB_CUDA_CALL(cudaMalloc(&m_ptr, static_cast<std::size_t>(count) * sizeof(T))); }
  ~dev() { cudaFree(m_ptr); }
  dev(const dev&) = delete;
  dev& operator=(const dev&) = delete;
  [[nodiscard]] T* get() const { return m_ptr; }

 private:
  T* m_ptr = nullptr;
};

// Every tensor of one shape, filled once (Q, K, V, dO seeded normal); outputs are scratch.
struct tensors {
  explicit tensors(shape s)
      : dims(s), n(s.b * s.h * s.s * s.d), rows(s.b * s.h * s.s), q(n), k(n), v(n), o(n), d_o(n), dq(n), dk(n),
        dv(n), o_out(n), lse(rows), lse_out(rows) {}
  shape dims;
  int64_t n, rows;
  dev<__nv_bfloat16> q, k, v, o, d_o, dq, dk, dv, o_out;
  dev<float> lse, lse_out;

  [[nodiscard]] float scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(dims.d))); }
  [[nodiscard]] std::vector<void*> forward_io() const { return {q.get(), k.get(), v.get(), o_out.get(), lse_out.get()}; }
  [[nodiscard]] std::vector<void*> backward_io() const {
    return {q.get(), k.get(), v.get(), o.get(), d_o.get(), lse.get(), dq.get(), dk.get(), dv.get()};
  }
};

void ensure(status s) {
  if (!s) throw std::runtime_error(s.err().message);
}

float bf16_to_float(__nv_bfloat16 x) {
  uint16_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float out = 0.0F;
  std::memcpy(&out, &wide, sizeof out);
  return out;
}

template <typename T>
std::vector<float> to_host(const T* device, int64_t offset, int64_t count) {
  std::vector<T> raw(static_cast<std::size_t>(count));
  PTXB_CUDA_CALL(cudaMemcpy(raw.data(), device + offset, raw.size() * sizeof(T), cudaMemcpyDeviceToHost));
  if constexpr (std::is_same_v<T, float>) {
    return raw;
  } else {
    std::vector<float> out;
    for (T x : raw) out.push_back(bf16_to_float(x));
    return out;
  }
}

void compare(const std::vector<float>& got, const std::vector<float>& want, numerics& out) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(static_cast<double>(got[i]) - want[i]);
    out.max_abs_error = std::max(out.max_abs_error, std::isnan(diff) ? INFINITY : diff);
    if (!(diff <= k_tolerance + k_tolerance * std::abs(static_cast<double>(want[i])))) ++out.mismatches;
    ++out.checked;
  }
}

// (first head, head count) ranges to check: all heads of a small shape, the first and last otherwise.
std::vector<std::pair<int64_t, int64_t>> head_ranges(const tensors& t, bool all) {
  const int64_t heads = t.dims.b * t.dims.h;
  if (all || heads == 1) return {{0, heads}};
  return {{0, 1}, {heads - 1, 1}};
}

numerics check_forward(const tensors& t, bool causal, bool all_heads, cudaStream_t stream) {
  numerics out;
  out.scope = all_heads ? "all heads" : "first and last head";
  const int64_t sd = t.dims.s * t.dims.d;
  for (auto [first, count] : head_ranges(t, all_heads)) {
    dev<float> ref_o(count * sd), ref_lse(count * t.dims.s);
    const attention_dims dims{count, t.dims.s, t.dims.d, causal, t.scale()};
    ensure(reference_attention_forward(t.q.get() + first * sd, t.k.get() + first * sd, t.v.get() + first * sd, dims,
                                       ref_o.get(), ref_lse.get(), stream));
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
    compare(to_host(t.o_out.get(), first * sd, count * sd), to_host(ref_o.get(), 0, count * sd), out);
    compare(to_host(t.lse_out.get(), first * t.dims.s, count * t.dims.s), to_host(ref_lse.get(), 0, count * t.dims.s),
            out);
  }
  return out;
}

numerics check_backward(const tensors& t, bool causal, bool all_heads, cudaStream_t stream) {
  numerics out;
  out.scope = all_heads ? "all heads" : "first and last head";
  const int64_t sd = t.dims.s * t.dims.d;
  for (auto [first, count] : head_ranges(t, all_heads)) {
    dev<float> ref_dq(count * sd), ref_dk(count * sd), ref_dv(count * sd);
    const attention_dims dims{count, t.dims.s, t.dims.d, causal, t.scale()};
    const int64_t at = first * sd;
    ensure(reference_attention_backward(t.q.get() + at, t.k.get() + at, t.v.get() + at, t.o.get() + at,
                                        t.d_o.get() + at, t.lse.get() + first * t.dims.s, dims, ref_dq.get(),
                                        ref_dk.get(), ref_dv.get(), stream));
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
    compare(to_host(t.dq.get(), at, count * sd), to_host(ref_dq.get(), 0, count * sd), out);
    compare(to_host(t.dk.get(), at, count * sd), to_host(ref_dk.get(), 0, count * sd), out);
    compare(to_host(t.dv.get(), at, count * sd), to_host(ref_dv.get(), 0, count * sd), out);
  }
  return out;
}

// A backward's O and L: the fp32 reference forward on small shapes, the cuDNN forward on large ones
// (as the harness derives them), the reference if cuDNN's forward fails.
std::string derive_backward_inputs(tensors& t, bool causal, bool small, cudaStream_t stream) {
  const std::vector<int64_t> bhsd{t.dims.b, t.dims.h, t.dims.s, t.dims.d}, bhs{t.dims.b, t.dims.h, t.dims.s};
  std::string note;
  if (!small) {
    status s = attention_forward_for_inputs({t.q.get(), dtype::bfloat16, bhsd}, {t.k.get(), dtype::bfloat16, bhsd},
                                            {t.v.get(), dtype::bfloat16, bhsd}, causal,
                                            {t.o.get(), dtype::bfloat16, bhsd}, {t.lse.get(), dtype::float32, bhs},
                                            stream);
    if (s) return "O and L from the cuDNN forward (attention_forward_for_inputs)";
    note = "cuDNN forward failed (" + s.err().message + "); ";
  }
  dev<float> o_f32(t.n);
  const attention_dims dims{t.dims.b * t.dims.h, t.dims.s, t.dims.d, causal, t.scale()};
  ensure(reference_attention_forward(t.q.get(), t.k.get(), t.v.get(), dims, o_f32.get(), t.lse.get(), stream));
  ensure(convert_f32_to_bf16(o_f32.get(), t.o.get(), t.n, stream));
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  return note + "O and L from the fp32 reference forward";
}

double median_ms(const std::function<void()>& launch, cudaStream_t stream, int warmup, int iterations) {
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<cudaEvent_t> events(static_cast<std::size_t>(2 * iterations));
  for (cudaEvent_t& e : events) PTXB_CUDA_CALL(cudaEventCreate(&e));
  for (int i = 0; i < iterations; ++i) {
    PTXB_CUDA_CALL(cudaEventRecord(events[2 * i], stream));
    launch();
    PTXB_CUDA_CALL(cudaEventRecord(events[2 * i + 1], stream));
  }
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    float ms = 0.0F;
    PTXB_CUDA_CALL(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    times.push_back(ms);
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string workload_name(bool backward, bool causal) {
  return std::string(backward ? "mha_bwd" : "mha_fwd") + (causal ? "_causal" : "");
}

record run_variant(sdpa_graph_kind kind, bool causal, tensors& t, bool small, const settings& s,
                   cudaStream_t stream) {
  const bool forward = cudnn::is_forward(kind);
  record r{cudnn::graph_kind_name(kind), workload_name(!forward, causal), t.dims, causal,
           kind == sdpa_graph_kind::composite_fwd || kind == sdpa_graph_kind::composite_bwd};
  try {
    if (!forward) r.inputs_note = derive_backward_inputs(t, causal, small, stream);
    cudnn::sdpa_config config;
    config.kinds = {kind};
    const cudnn::sdpa_problem problem{t.dims.b, t.dims.h, t.dims.s, t.dims.d, causal, t.scale()};
    const std::vector<void*> io = forward ? t.forward_io() : t.backward_io();
    auto exe = cudnn::build_sdpa_executable(forward ? sdpa_direction::forward : sdpa_direction::backward, problem,
                                            config, io, stream);
    if (!exe) {
      r.error = exe.err().message;
      return r;
    }
    r.built = true;
    r.description = (*exe)->description();
    for (const auto& a : (*exe)->attempts()) r.plans.insert(r.plans.end(), a.plans.begin(), a.plans.end());
    (*exe)->run(io, stream);
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
    r.check = forward ? check_forward(t, causal, small, stream) : check_backward(t, causal, small, stream);
    r.median_ms = median_ms([&] { (*exe)->run(io, stream); }, stream, s.warmup, s.iterations);
  } catch (const std::exception& e) {
    r.error = e.what();
    cudaGetLastError();
  }
  return r;
}

record run_baseline(bool backward, bool causal, tensors& t, const settings& s, cudaStream_t stream) {
  record r{"baseline", workload_name(backward, causal), t.dims, causal, true};
  try {
    if (backward) r.inputs_note = derive_backward_inputs(t, causal, false, stream);
    baseline_request request;
    request.kind = backward ? "cudnn_sdpa_bwd" : "cudnn_sdpa_fwd";
    request.axes = {{"B", t.dims.b}, {"H", t.dims.h}, {"S", t.dims.s}, {"D", t.dims.d}};
    request.options = ordered_json{{"causal", causal}};
    cudaGetDevice(&request.device);
    const std::vector<int64_t> bhsd{t.dims.b, t.dims.h, t.dims.s, t.dims.d}, bhs{t.dims.b, t.dims.h, t.dims.s};
    auto bf16 = [&](const dev<__nv_bfloat16>& d) { return device_tensor{d.get(), dtype::bfloat16, bhsd}; };
    const std::vector<device_tensor> inputs =
        backward ? std::vector<device_tensor>{bf16(t.q), bf16(t.k), bf16(t.v), bf16(t.o), bf16(t.d_o),
                                              {t.lse.get(), dtype::float32, bhs}}
                 : std::vector<device_tensor>{bf16(t.q), bf16(t.k), bf16(t.v)};
    const std::vector<device_tensor> outputs =
        backward ? std::vector<device_tensor>{bf16(t.dq), bf16(t.dk), bf16(t.dv)}
                 : std::vector<device_tensor>{bf16(t.o_out), {t.lse_out.get(), dtype::float32, bhs}};
    auto made = backward ? make_cudnn_sdpa_bwd(request, inputs, outputs, stream)
                         : make_cudnn_sdpa_fwd(request, inputs, outputs, stream);
    if (!made) {
      r.error = made.err().message;
      return r;
    }
    r.built = true;
    r.description = (*made)->description();
    (*made)->run(inputs, outputs, stream);
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
    r.check = backward ? check_backward(t, causal, false, stream) : check_forward(t, causal, false, stream);
    r.median_ms = median_ms([&] { (*made)->run(inputs, outputs, stream); }, stream, s.warmup, s.iterations);
  } catch (const std::exception& e) {
    r.error = e.what();
    cudaGetLastError();
  }
  return r;
}

void fill(tensors& t, uint64_t seed, cudaStream_t stream) {
  ensure(fill_normal_bf16(t.q.get(), t.n, seed + 1, stream));
  ensure(fill_normal_bf16(t.k.get(), t.n, seed + 2, stream));
  ensure(fill_normal_bf16(t.v.get(), t.n, seed + 3, stream));
  ensure(fill_normal_bf16(t.d_o.get(), t.n, seed + 4, stream));
}

void run_variants(tensors& t, bool small, const settings& s, cudaStream_t stream, std::vector<record>& out) {
  const std::pair<sdpa_graph_kind, bool> cases[] = {
      {sdpa_graph_kind::unified_fwd, false},   {sdpa_graph_kind::composite_fwd, false},
      {sdpa_graph_kind::composite_fwd, true},  {sdpa_graph_kind::composite_bwd, false},
      {sdpa_graph_kind::composite_bwd, true},  {sdpa_graph_kind::unified_bwd, false}};
  for (auto [kind, causal] : cases) {
    out.push_back(run_variant(kind, causal, t, small, s, stream));
    fmt::print(stderr, "[probe] {} {} B={} H={} S={} D={}: {}\n", out.back().what, out.back().workload, t.dims.b,
               t.dims.h, t.dims.s, t.dims.d, out.back().built ? "built" : "failed");
  }
}

}  // namespace

std::vector<record> run_probe(const settings& s) {
  std::vector<record> out;
  cudaStream_t stream = nullptr;
  try {
    PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (s.run_small) {
      tensors t(s.small);
      fill(t, s.seed, stream);
      run_variants(t, true, s, stream, out);
    }
    if (s.run_headline_variants || s.run_baselines) {
      tensors t(s.headline);
      fill(t, s.seed, stream);
      if (s.run_headline_variants) run_variants(t, false, s, stream, out);
      if (s.run_baselines) {
        for (auto [backward, causal] : {std::pair{false, false}, {false, true}, {true, false}, {true, true}}) {
          out.push_back(run_baseline(backward, causal, t, s, stream));
          fmt::print(stderr, "[probe] baseline {}: {}\n", out.back().workload, out.back().built ? "built" : "failed");
        }
      }
    }
  } catch (const std::exception& e) {
    record r{"probe", "setup", {}, false, true};
    r.error = e.what();
    out.push_back(r);
  }
  if (stream != nullptr) cudaStreamDestroy(stream);
  return out;
}

}  // namespace ptxbench::gpu::probe
