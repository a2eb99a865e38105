#include "baselines/cudnn_gqa.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "baselines/attention_reference.h"
#include "core/align.h"
#include "core/tuned_choice.h"
#include "baselines/cudnn_backend.h"
#include "baselines/cudnn_plan.h"
#include "baselines/cudnn_remembered_plan.h"
#include "baselines/gqa_aux.h"
#include "baselines/gqa_reference.h"
#include "baselines/graph_replay.h"

namespace ptxbench::gpu {
namespace {

using cudnn::gqa_layout;
using cudnn::gqa_problem;
using cudnn::page_table_form;

constexpr const char* k_kind = "cudnn_sdpa_gqa";
// The GQA tasks' atol and rtol: each cuDNN plan must match the independent reference within them on
// the sample inputs before it may be chosen.
constexpr float k_self_check_tolerance = 1e-2F;
constexpr int64_t k_align = 256;

// Where each input sits in definition order.
struct positions {
  int q = 0, k = 1, v = 2, qo = -1, kv_indptr = -1, kv_indices = -1, scale = -1;
};

positions positions_for(gqa_layout layout) {
  switch (layout) {
    case gqa_layout::paged_decode: return {0, 1, 2, -1, 3, 4, 5};
    case gqa_layout::paged_prefill: return {0, 1, 2, 3, 4, 5, 6};
    case gqa_layout::ragged_prefill: return {0, 1, 2, 3, 4, -1, 5};
  }
  return {};
}

result<int64_t> gqa_axis(const baseline_request& request, const char* name) {
  auto it = request.axes.find(name);
  if (it == request.axes.end())
    return make_error(fmt::format("{}: axis '{}' missing (the GQA definitions name it)", k_kind, name));
  if (it->second <= 0) return make_error(fmt::format("{}: axis '{}' = {} must be positive", k_kind, name, it->second));
  return it->second;
}

struct expectation {
  const char* name;
  dtype type;
  std::vector<int64_t> shape;
};

std::vector<expectation> expected_inputs(const gqa_request& r) {
  const bool paged = r.layout != gqa_layout::ragged_prefill;
  std::vector<expectation> out{{"q", dtype::bfloat16, {r.total_q, r.h_q, r.d}}};
  if (paged) {
    out.push_back({"k_cache", dtype::bfloat16, {r.num_pages, r.page_size, r.h_kv, r.d}});
    out.push_back({"v_cache", dtype::bfloat16, {r.num_pages, r.page_size, r.h_kv, r.d}});
  } else {
    out.push_back({"k", dtype::bfloat16, {r.total_kv, r.h_kv, r.d}});
    out.push_back({"v", dtype::bfloat16, {r.total_kv, r.h_kv, r.d}});
  }
  if (r.layout != gqa_layout::paged_decode) out.push_back({"qo_indptr", dtype::int32, {r.len_indptr}});
  out.push_back({"kv_indptr", dtype::int32, {r.len_indptr}});
  if (paged) out.push_back({"kv_indices", dtype::int32, {r.num_kv_indices}});
  out.push_back({"sm_scale", dtype::float32, {}});
  return out;
}

std::vector<expectation> expected_outputs(const gqa_request& r) {
  return {{"output", dtype::bfloat16, {r.total_q, r.h_q, r.d}}, {"lse", dtype::float32, {r.total_q, r.h_q}}};
}

status check_list(const char* role, const std::vector<device_tensor>& got, const std::vector<expectation>& want) {
  if (got.size() != want.size())
    return make_error(fmt::format("{}: expected {} {}s, got {}", k_kind, want.size(), role, got.size()));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const device_tensor& t = got[i];
    if (t.type != want[i].type || t.shape != want[i].shape)
      return make_error(fmt::format("{}: {} {} ({}): expected {} [{}], got {} [{}]", k_kind, role, i, want[i].name,
                                    dtype_name(want[i].type), fmt::join(want[i].shape, ", "), dtype_name(t.type),
                                    fmt::join(t.shape, ", ")));
    if (t.data == nullptr) return make_error(fmt::format("{}: {} {} ({}): null data pointer", k_kind, role, i, want[i].name));
  }
  return ok();
}

// The index arrays and sm_scale of the sample inputs, copied to the host and checked.
struct host_layout {
  std::vector<int32_t> qo_indptr, kv_indptr;
  float scale = 0.0F;
};

status check_offsets(const std::vector<int32_t>& v, const char* name, int64_t total) {
  if (v.front() != 0) return make_error(fmt::format("{}: sample {}[0] = {}, expected 0", k_kind, name, v.front()));
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] <= v[i - 1])
      return make_error(fmt::format("{}: sample {} does not increase at {} ({} after {})", k_kind, name, i, v[i], v[i - 1]));
  if (v.back() != total)
    return make_error(fmt::format("{}: sample {} ends at {}, expected {}", k_kind, name, v.back(), total));
  return ok();
}

result<host_layout> read_layout(const gqa_request& r, const std::vector<device_tensor>& inputs, cudaStream_t stream) {
  const positions pos = positions_for(r.layout);
  host_layout out;
  auto copy = [&](void* dst, const void* src, std::size_t bytes) -> status {
    if (cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost); e != cudaSuccess) {
      cudaGetLastError();
      return make_error(fmt::format("{}: reading the sample index inputs: {}", k_kind, cudaGetErrorString(e)));
    }
    return ok();
  };
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) {
    cudaGetLastError();
    return make_error(fmt::format("{}: synchronising before reading the sample inputs: {}", k_kind, cudaGetErrorString(e)));
  }
  out.kv_indptr.resize(static_cast<std::size_t>(r.len_indptr));
  if (status s = copy(out.kv_indptr.data(), inputs[pos.kv_indptr].data, out.kv_indptr.size() * 4); !s) return s.err();
  if (pos.qo >= 0) {
    out.qo_indptr.resize(static_cast<std::size_t>(r.len_indptr));
    if (status s = copy(out.qo_indptr.data(), inputs[pos.qo].data, out.qo_indptr.size() * 4); !s) return s.err();
  } else {
    for (int32_t b = 0; b < r.len_indptr; ++b) out.qo_indptr.push_back(b);
  }
  if (status s = copy(&out.scale, inputs[pos.scale].data, sizeof(float)); !s) return s.err();
  const bool paged = r.layout != gqa_layout::ragged_prefill;
  if (status s = check_offsets(out.qo_indptr, "qo_indptr", r.total_q); !s) return s.err();
  if (status s = check_offsets(out.kv_indptr, "kv_indptr", paged ? r.num_kv_indices : r.total_kv); !s) return s.err();
  if (!(out.scale > 0.0F) || !std::isfinite(out.scale))
    return make_error(fmt::format("{}: sm_scale = {} must be positive and finite", k_kind, out.scale));
  if (r.causal) {
    for (std::size_t b = 0; b + 1 < out.qo_indptr.size(); ++b) {
      const int64_t nq = out.qo_indptr[b + 1] - out.qo_indptr[b];
      const int64_t nk = (out.kv_indptr[b + 1] - out.kv_indptr[b]) * (paged ? r.page_size : 1);
      if (nk < nq)
        return make_error(fmt::format("{}: sample sequence {} has {} queries but {} keys (bottom-right causal needs "
                                      "keys >= queries)",
                                      k_kind, b, nq, nk));
    }
  }
  return out;
}

gqa_problem problem_for(const gqa_request& r, const host_layout& l) {
  gqa_problem p;
  p.layout = r.layout;
  p.batch = r.len_indptr - 1;
  p.h_q = r.h_q;
  p.h_kv = r.h_kv;
  p.d = r.d;
  p.total_q = r.total_q;
  p.total_kv = r.total_kv;
  p.num_pages = r.num_pages;
  p.page_size = r.page_size;
  p.num_kv_indices = r.num_kv_indices;
  p.causal = r.causal;
  p.scale = l.scale;
  const int64_t unit = p.paged() ? r.page_size : 1;
  for (int64_t b = 0; b < p.batch; ++b) {
    p.max_q = std::max<int64_t>(p.max_q, l.qo_indptr[b + 1] - l.qo_indptr[b]);
    p.max_kv = std::max<int64_t>(p.max_kv, (l.kv_indptr[b + 1] - l.kv_indptr[b]) * unit);
  }
  return p;
}

// What this baseline and the loaded cuDNN support beyond the graph's own version checks.
status check_support(const gqa_problem& p, cudnn::version runtime, int sm_major) {
  if (runtime.code < 90000)
    return make_error(fmt::format("the cuDNN GQA baseline needs cuDNN >= 9.0 (loaded {})", runtime.str()));
  if (runtime.code == 91000 || runtime.code == 91001)
    return make_error(fmt::format("cuDNN {} has known SDPA forward bugs (cudnn-frontend refuses it)", runtime.str()));
  if (sm_major < 8) return make_error(fmt::format("cuDNN fused attention needs sm_80 or newer; this GPU is sm_{}x", sm_major));
  if (p.ragged_q() || !p.paged()) {
    if (sm_major < 9 && runtime.code < 91801)
      return make_error(fmt::format("ragged (THD) layouts need a Hopper GPU before cuDNN 9.18.1 (sm_{}x, cuDNN {})",
                                    sm_major, runtime.str()));
  }
  if (p.d % 8 != 0 || p.d > 256)
    return make_error(fmt::format("cuDNN fused attention needs D a multiple of 8 and at most 256; got D={}", p.d));
  if (p.h_q % p.h_kv != 0)
    return make_error(fmt::format("grouped-query attention needs h_q ({}) a multiple of h_kv ({})", p.h_q, p.h_kv));
  return ok();
}

class device_memory {
 public:
  device_memory() = default;
  explicit device_memory(int64_t bytes) {
    if (bytes > 0) PTXB_CUDA_CALL(cudaMalloc(&m_ptr, static_cast<std::size_t>(bytes)));
    m_bytes = bytes;
  }
  ~device_memory() {
    if (m_ptr) cudaFree(m_ptr);
  }
  device_memory(device_memory&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)), m_bytes(o.m_bytes) {}
  device_memory& operator=(device_memory&& o) noexcept {
    if (this != &o) {
      if (m_ptr) cudaFree(m_ptr);
      m_ptr = std::exchange(o.m_ptr, nullptr);
      m_bytes = o.m_bytes;
    }
    return *this;
  }
  [[nodiscard]] char* get() const { return static_cast<char*>(m_ptr); }
  [[nodiscard]] int64_t bytes() const { return m_bytes; }

 private:
  void* m_ptr = nullptr;
  int64_t m_bytes = 0;
};

// The baseline's own device buffers: sequence lengths, element offsets, the padded page table, the
// padded stats (prefill), laid out in one allocation.
struct aux_buffers {
  device_memory memory;
  int32_t* seq_q = nullptr;
  int32_t* seq_kv = nullptr;
  void* q_offsets = nullptr;
  void* kv_offsets = nullptr;
  int32_t* page_table = nullptr;
  float* stats = nullptr;

  explicit aux_buffers(const gqa_problem& p) {
    const int64_t b = p.batch;
    int64_t offset = 0;
    auto take = [&](int64_t bytes) {
      const int64_t at = offset;
      offset = align_up(offset + bytes, k_align);
      return at;
    };
    const int64_t at_seq_q = take(b * 4), at_seq_kv = take(b * 4), at_q_off = take((b + 1) * 8),
                  at_kv_off = take((b + 1) * 8);
    const int64_t at_table = p.paged() ? take(b * p.table_size() * 4) : -1;
    const int64_t at_stats = p.ragged_q() ? take(b * p.h_q * p.max_q * 4) : -1;
    memory = device_memory(offset);
    char* base = memory.get();
    seq_q = reinterpret_cast<int32_t*>(base + at_seq_q);
    seq_kv = reinterpret_cast<int32_t*>(base + at_seq_kv);
    q_offsets = base + at_q_off;
    kv_offsets = base + at_kv_off;
    if (at_table >= 0) page_table = reinterpret_cast<int32_t*>(base + at_table);
    if (at_stats >= 0) stats = reinterpret_cast<float*>(base + at_stats);
  }
};

// One call's tensors as raw pointers.
struct call_io {
  std::vector<void*> inputs, outputs;
};

class gqa_executable {
 private:
  // The independent fp32 reference's output and LSE on the sample inputs.
  struct reference_outputs {
    device_memory o, lse;
  };

 public:
  gqa_executable(gqa_request request, gqa_problem problem)
      : m_request(std::move(request)), m_problem(problem), m_pos(positions_for(m_request.layout)), m_aux(problem) {}

  [[nodiscard]] const gqa_problem& problem() const { return m_problem; }
  [[nodiscard]] const std::string& description() const { return m_description; }

  // Builds every variant that applies, times its plans on the sample buffers and keeps the fastest
  // that matches the independent reference. With a cache folder the choice is remembered per host
  // (core/tuned_choice.h says why) and a later build rebuilds that plan, checked against the
  // reference on its own sample again, instead of tuning.
  status build(const call_io& sample, cudaStream_t stream, const std::filesystem::path& cache_dir) {
    const cudnn::version runtime = cudnn::runtime_version();
    std::vector<page_table_form> forms{page_table_form::padded};
    if (m_problem.paged()) forms = {page_table_form::packed, page_table_form::padded};
    reference_outputs reference;
    try {
      reference = compute_reference(sample, stream);
      m_handle = std::make_unique<cudnn::handle>();
      m_handle->set_stream(stream);
    } catch (const std::exception& e) {
      return make_error(fmt::format("cuDNN {}: {}", runtime.str(), e.what()));
    }
    float best_ms = std::numeric_limits<float>::infinity();
    int timed = 0;
    std::string tried;  // every form's plans and times, from this tuning or the remembered one
    auto tune = [&]() -> result<ordered_json> {
      std::vector<std::string> attempts;
      best_ms = std::numeric_limits<float>::infinity();
      timed = 0;
      int best_index = -1;
      m_graph.reset();
      m_plan = cudnn::plan_candidate{};
      try {
        for (page_table_form form : forms) {
          const std::string name = form_name(form);
          std::unique_ptr<cudnn::gqa_graph> graph;
          cudnn::plan_search search;
          try {
            graph = cudnn::build_gqa_graph(m_problem, form, m_handle->get(), runtime);
            search = cudnn::find_plans(graph->op_graph, k_plans_per_form);
          } catch (const std::exception& e) {
            attempts.push_back(fmt::format("{}: {}", name, e.what()));
            continue;
          }
          if (search.plans.empty()) {
            attempts.push_back(fmt::format("{}: no engine config finalized ({})", name,
                                           search.rejected.empty() ? "no configs" : search.rejected.front()));
            continue;
          }
          if (status s = prepare(*graph, sample, stream); !s) return s.err();
          int winner = -1;
          float winner_ms = best_ms;
          std::string tried_here;
          for (std::size_t i = 0; i < search.plans.size(); ++i) {
            try {
              ensure_workspace(search.plans[i].workspace_bytes);
              cudnn::descriptor pack = make_pack(*graph, sample);
              const float ms = cudnn::median_execution_ms(m_handle->get(), search.plans[i].plan, pack, stream, 5);
              ++timed;
              const int64_t wrong = mismatches(search.plans[i], pack, sample, reference, stream);
              if (wrong > 0) {
                tried_here += fmt::format("{}engine {} {:.4f} ms but {} output elements differ from the independent "
                                          "reference",
                                          tried_here.empty() ? "" : ", ", search.plans[i].engine_id, ms, wrong);
                continue;
              }
              tried_here += fmt::format("{}engine {} {:.4f} ms", tried_here.empty() ? "" : ", ",
                                        search.plans[i].engine_id, ms);
              if (ms < winner_ms) {
                winner_ms = ms;
                winner = static_cast<int>(i);
              }
            } catch (const std::exception& e) {
              cudaStreamSynchronize(stream);
              cudaGetLastError();
              tried_here += fmt::format("{}engine {} failed: {}", tried_here.empty() ? "" : ", ",
                                        search.plans[i].engine_id, e.what());
            }
          }
          attempts.push_back(fmt::format("{}: {}", name, tried_here));
          if (winner >= 0) {
            best_ms = winner_ms;
            best_index = winner;
            m_graph = std::move(graph);
            m_plan = std::move(search.plans[static_cast<std::size_t>(winner)]);
          }
        }
      } catch (const std::exception& e) {
        return make_error(fmt::format("cuDNN {}: {}", runtime.str(), e.what()));
      }
      if (!m_graph) return make_error(fmt::format("cuDNN {}: no working plan: {}", runtime.str(), fmt::join(attempts, "; ")));
      tried = fmt::format("{}", fmt::join(attempts, "; "));
      ordered_json remembered{{"form", form_name(m_graph->table)}};
      remembered.update(cudnn::remembered_plan_identity(m_plan, best_index));
      remembered.update(ordered_json{{"tuned_ms", best_ms}, {"plans_timed", timed}, {"tried", tried}});
      return remembered;
    };
    auto use = [&](const ordered_json& choice) -> status {
      status loaded = load_choice(choice, forms, sample, reference, stream, runtime);
      if (loaded) {
        best_ms = choice.value("tuned_ms", std::numeric_limits<float>::quiet_NaN());
        timed = choice.value("plans_timed", 0);
        tried = choice.value("tried", "");
      }
      return loaded;
    };
    auto chosen = remember_tuned_choice(cache_dir, tuned_choice_key(), use, tune);
    if (!chosen) return chosen.err();
    check_replay(sample, reference, stream);
    const std::string how =
        chosen->from_cache
            ? fmt::format("autotuned earlier, from the cache: fastest of {} timed plan(s), {:.3f} ms on the sample "
                          "buffers then, each plan checked against the independent fp32 reference there (atol = rtol = "
                          "{:g}) (tried: {}); the remembered plan checked against it again on this sample",
                          timed, best_ms, k_self_check_tolerance, tried)
            : fmt::format("autotuned now: fastest of {} timed plan(s), {:.3f} ms on the sample buffers, each plan "
                          "checked against the independent fp32 reference there (atol = rtol = {:g}) (tried: {}){}",
                          timed, best_ms, k_self_check_tolerance, tried,
                          chosen->stale ? " (" + chosen->why_tuned + ")" : "");
    m_description = fmt::format(
        "{}: cuDNN {} (headers {}) composite GQA graph, {} layout{}, padding mask{}, {}; {}; each call also runs a "
        "prepare kernel (sequence lengths{}){}; calls run as {}",
        k_kind, runtime.str(), cudnn::compiled_version().str(), gqa_layout_name(m_problem.layout),
        m_problem.paged() ? fmt::format(", {} page table", page_table_form_name(m_graph->table)) : "",
        m_problem.causal ? ", bottom-right causal mask" : "", m_plan.label(), how,
        m_problem.paged() && m_graph->table == page_table_form::padded ? ", offsets, page table"
        : m_problem.ragged_q()                                          ? ", offsets"
                                                                        : "",
        m_problem.ragged_q() ? " and an LSE scatter kernel" : "", m_replay.mode());
    return ok();
  }

  void run(const call_io& io, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_handle->set_stream(stream);
    m_replay.run(replay_key(io), [&](cudaStream_t s) { enqueue_call(io, s); }, stream);
  }

 private:
  static constexpr int k_plans_per_form = 4;

  std::string form_name(page_table_form form) const {
    return m_problem.paged() ? page_table_form_name(form) : "ragged";
  }

  // Everything that determines the graph and its plans: the problem as the graph sees it (layout,
  // batch, heads, D, longest sequences, totals, pages, causal, the scale's bits), bf16, the GPU's
  // name and compute capability, the loaded cuDNN and the headers, the plans tried per form.
  std::string tuned_choice_key() const {
    const gqa_problem& p = m_problem;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
    uint32_t scale_bits = 0;
    std::memcpy(&scale_bits, &p.scale, sizeof scale_bits);
    return fmt::format("{}-{}-cudnn{}-headers{}-{}-b{}-hq{}-hkv{}-d{}-maxq{}-maxkv{}-q{}-kv{}-pages{}x{}-idx{}-{}"
                       "-scale{:08x}-bf16-plans{}",
                       k_kind, cudnn::remembered_plan_device(device), cudnn::runtime_version().code,
                       cudnn::compiled_version().code, gqa_layout_name(p.layout), p.batch, p.h_q, p.h_kv, p.d, p.max_q,
                       p.max_kv, p.total_q, p.total_kv, p.num_pages, p.page_size, p.num_kv_indices,
                       p.causal ? "causal" : "noncausal", scale_bits, k_plans_per_form);
  }

  // Rebuilds a remembered choice: that form's graph only, find_plans' list up to its index, the plan
  // there if it is still the same (engine, heuristic mode, label), and it must match the independent
  // reference on this sample as every tuned plan must. Anything else is an error saying what
  // changed, and the caller tunes again.
  status load_choice(const ordered_json& choice, const std::vector<page_table_form>& forms, const call_io& sample,
                     const reference_outputs& reference, cudaStream_t stream, cudnn::version runtime) {
    const std::string name = choice.at("form").get<std::string>();
    std::optional<page_table_form> form;
    for (page_table_form f : forms)
      if (form_name(f) == name) form = f;
    if (!form) return make_error(fmt::format("the {} form is not one this layout tries", name));
    std::unique_ptr<cudnn::gqa_graph> graph = cudnn::build_gqa_graph(m_problem, *form, m_handle->get(), runtime);
    auto found = cudnn::find_remembered_plan(graph->op_graph, choice, name, k_plans_per_form);
    if (!found) return found.err();
    cudnn::plan_candidate& plan = *found;
    try {
      if (status s = prepare(*graph, sample, stream); !s) return s.err();
      ensure_workspace(plan.workspace_bytes);
      cudnn::descriptor pack = make_pack(*graph, sample);
      const int64_t wrong = mismatches(plan, pack, sample, reference, stream);
      if (wrong > 0)
        return make_error(fmt::format("{} of the {} graph: {} output elements differ from the independent reference",
                                      plan.label(false), name, wrong));
    } catch (const std::exception& e) {
      cudaStreamSynchronize(stream);
      cudaGetLastError();
      return make_error(fmt::format("{} of the {} graph does not run: {}", plan.label(false), name, e.what()));
    }
    m_graph = std::move(graph);
    m_plan = std::move(plan);
    return ok();
  }

  // One call's launches: the prepare kernel, cuDNN's execute, the LSE scatter. Only enqueued when
  // a call is captured or runs eagerly; a replayed graph needs no variant pack.
  void enqueue_call(const call_io& io, cudaStream_t stream) {
    if (status s = prepare(*m_graph, io, stream); !s) throw std::runtime_error(s.err().message);
    cudnn::execute(m_handle->get(), m_plan.plan, pack_for(io));
    if (m_problem.ragged_q()) {
      status s = launch_gqa_scatter_lse(m_aux.stats, static_cast<const int32_t*>(io.inputs[m_pos.qo]), m_aux.seq_q,
                                        m_problem.batch, m_problem.h_q, m_problem.max_q,
                                        static_cast<float*>(io.outputs[1]), stream);
      if (!s) throw std::runtime_error(s.err().message);
    }
  }

  static std::vector<void*> replay_key(const call_io& io) {
    std::vector<void*> key = io.inputs;
    key.insert(key.end(), io.outputs.begin(), io.outputs.end());
    return key;
  }

  // The replayed graph must compute what the plan computed when it was chosen: it runs on the
  // sample with the outputs overwritten first (a graph that wrote nothing cannot pass) and must match
  // the independent fp32 reference within the tolerance every plan met. (A bit-for-bit comparison
  // with an eager call refused the graph on an H100, for a reason not yet established; the
  // tolerance check is the standard the plan itself was held to.) Failing it leaves calls eager.
  void check_replay(const call_io& sample, const reference_outputs& reference, cudaStream_t stream) {
    const std::size_t rows = static_cast<std::size_t>(m_problem.total_q * m_problem.h_q);
    const std::size_t bytes[2] = {rows * static_cast<std::size_t>(m_problem.d) * 2, rows * 4};
    try {
      for (int i = 0; i < 2; ++i) PTXB_CUDA_CALL(cudaMemsetAsync(sample.outputs[i], 0xA5, bytes[i], stream));
      m_replay.run(replay_key(sample), [&](cudaStream_t s) { enqueue_call(sample, s); }, stream);
      const int64_t wrong = count_mismatches(sample, reference, stream);
      if (m_replay.enabled() && wrong > 0)
        m_replay.disable(fmt::format("the replayed graph's outputs differed from the independent reference in {} "
                                     "elements on the sample", wrong));
    } catch (const std::exception& e) {
      cudaStreamSynchronize(stream);
      cudaGetLastError();
      m_replay.disable(fmt::format("checking the replay failed: {}", e.what()));
    }
  }


  status prepare(const cudnn::gqa_graph& graph, const call_io& io, cudaStream_t stream) {
    gqa_prepare_args a;
    a.batch = m_problem.batch;
    a.qo_indptr = m_pos.qo >= 0 ? static_cast<const int32_t*>(io.inputs[m_pos.qo]) : nullptr;
    a.kv_indptr = static_cast<const int32_t*>(io.inputs[m_pos.kv_indptr]);
    a.page_size = m_problem.paged() ? m_problem.page_size : 1;
    a.seq_q = m_aux.seq_q;
    a.seq_kv = m_aux.seq_kv;
    a.offsets_int64 = graph.offsets_int64;
    a.q_row_elems = m_problem.h_q * m_problem.d;
    a.kv_row_elems = m_problem.h_kv * m_problem.d;
    if (m_problem.ragged_q()) a.q_offsets = m_aux.q_offsets;
    if (!m_problem.paged()) a.kv_offsets = m_aux.kv_offsets;
    if (m_problem.paged() && graph.table == page_table_form::padded) {
      a.kv_indices = static_cast<const int32_t*>(io.inputs[m_pos.kv_indices]);
      a.page_table = m_aux.page_table;
      a.table_size = m_problem.table_size();
    }
    a.max_q = m_problem.max_q;
    a.max_kv = m_problem.max_kv;
    a.scale = static_cast<const float*>(io.inputs[m_pos.scale]);
    a.expected_scale = m_problem.scale;
    return launch_gqa_prepare(a, stream);
  }

  reference_outputs compute_reference(const call_io& io, cudaStream_t stream) const {
    reference_outputs r{device_memory(m_problem.total_q * m_problem.h_q * m_problem.d * 4),
                        device_memory(m_problem.total_q * m_problem.h_q * 4)};
    gqa_dims dims;
    dims.total_q = m_problem.total_q;
    dims.sequences = m_problem.batch;
    dims.h_q = m_problem.h_q;
    dims.h_kv = m_problem.h_kv;
    dims.d = m_problem.d;
    dims.paged = m_problem.paged();
    dims.page_size = m_problem.paged() ? m_problem.page_size : 1;
    dims.causal = m_problem.causal;
    dims.scale_device = static_cast<const float*>(io.inputs[m_pos.scale]);
    status s = reference_gqa_forward(
        static_cast<const __nv_bfloat16*>(io.inputs[m_pos.q]), static_cast<const __nv_bfloat16*>(io.inputs[m_pos.k]),
        static_cast<const __nv_bfloat16*>(io.inputs[m_pos.v]),
        m_pos.qo >= 0 ? static_cast<const int32_t*>(io.inputs[m_pos.qo]) : nullptr,
        static_cast<const int32_t*>(io.inputs[m_pos.kv_indptr]),
        m_pos.kv_indices >= 0 ? static_cast<const int32_t*>(io.inputs[m_pos.kv_indices]) : nullptr, dims,
        reinterpret_cast<float*>(r.o.get()), reinterpret_cast<float*>(r.lse.get()), stream);
    if (!s) throw std::runtime_error("the independent reference for the self-check: " + s.err().message);
    return r;
  }

  // Runs `plan` once on the sample and counts output and LSE elements outside the tasks' tolerance
  // of the independent reference: a plan that computes something else is never chosen.
  int64_t mismatches(const cudnn::plan_candidate& plan, const cudnn::descriptor& pack, const call_io& io,
                     const reference_outputs& reference, cudaStream_t stream) {
    cudnn::execute(m_handle->get(), plan.plan, pack);
    if (m_problem.ragged_q()) {
      status s = launch_gqa_scatter_lse(m_aux.stats, static_cast<const int32_t*>(io.inputs[m_pos.qo]), m_aux.seq_q,
                                        m_problem.batch, m_problem.h_q, m_problem.max_q,
                                        static_cast<float*>(io.outputs[1]), stream);
      if (!s) throw std::runtime_error(s.err().message);
    }
    return count_mismatches(io, reference, stream);
  }

  // Output and LSE elements of `io` outside the tasks' tolerance of the independent reference.
  int64_t count_mismatches(const call_io& io, const reference_outputs& reference, cudaStream_t stream) {
    device_memory counter(sizeof(unsigned long long));
    auto* count = reinterpret_cast<unsigned long long*>(counter.get());
    PTXB_CUDA_CALL(cudaMemsetAsync(count, 0, sizeof(unsigned long long), stream));
    const int64_t rows = m_problem.total_q * m_problem.h_q;
    status s = launch_count_mismatches(io.outputs[0], true, reinterpret_cast<const float*>(reference.o.get()),
                                       rows * m_problem.d, k_self_check_tolerance, k_self_check_tolerance, count, stream);
    if (s) s = launch_count_mismatches(io.outputs[1], false, reinterpret_cast<const float*>(reference.lse.get()), rows,
                                       k_self_check_tolerance, k_self_check_tolerance, count, stream);
    if (!s) throw std::runtime_error(s.err().message);
    unsigned long long host = 0;
    PTXB_CUDA_CALL(cudaMemcpyAsync(&host, count, sizeof host, cudaMemcpyDeviceToHost, stream));
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
    return static_cast<int64_t>(host);
  }

  void ensure_workspace(int64_t bytes) {
    if (bytes <= m_workspace.bytes()) return;
    m_workspace = device_memory(bytes);
    m_packs.clear();  // they point into the old workspace
  }

  // The variant pack of io's buffers, made once per buffer set (the harness rotates a few).
  const cudnn::descriptor& pack_for(const call_io& io) {
    auto key = replay_key(io);
    auto it = m_packs.find(key);
    if (it == m_packs.end()) it = m_packs.emplace(std::move(key), make_pack(*m_graph, io)).first;
    return it->second;
  }

  cudnn::descriptor make_pack(const cudnn::gqa_graph& graph, const call_io& io) {
    namespace uid = cudnn::gqa_uid;
    const bool packed = graph.table == page_table_form::packed;
    const std::map<int64_t, void*> bound{
        {uid::q, io.inputs[m_pos.q]},
        {uid::k, io.inputs[m_pos.k]},
        {uid::v, io.inputs[m_pos.v]},
        {uid::o, io.outputs[0]},
        {uid::stats, m_problem.ragged_q() ? static_cast<void*>(m_aux.stats) : io.outputs[1]},
        {uid::seq_q, m_aux.seq_q},
        {uid::seq_kv, m_aux.seq_kv},
        {uid::q_offset, m_aux.q_offsets},
        {uid::o_offset, m_aux.q_offsets},
        {uid::k_offset, m_aux.kv_offsets},
        {uid::v_offset, m_aux.kv_offsets},
        {uid::page_table_k, packed ? io.inputs[m_pos.kv_indices] : m_aux.page_table},
        {uid::page_table_v, packed ? io.inputs[m_pos.kv_indices] : m_aux.page_table},
        {uid::table_offset_k, io.inputs[m_pos.kv_indptr]},
        {uid::table_offset_v, io.inputs[m_pos.kv_indptr]},
    };
    std::vector<int64_t> uids;
    std::vector<void*> pointers;
    for (int64_t u : graph.uids) {
      uids.push_back(u);
      pointers.push_back(bound.at(u));
    }
    for (const auto& [u, value] : graph.by_value) {
      uids.push_back(u);
      pointers.push_back(const_cast<float*>(&value));  // cuDNN reads by-value scalars from host memory
    }
    return cudnn::make_variant_pack(uids, pointers, m_workspace.get());
  }

  gqa_request m_request;
  gqa_problem m_problem;
  positions m_pos;
  aux_buffers m_aux;
  device_memory m_workspace;
  std::mutex m_mutex;
  std::unique_ptr<cudnn::handle> m_handle;
  std::unique_ptr<cudnn::gqa_graph> m_graph;
  cudnn::plan_candidate m_plan;
  std::map<std::vector<void*>, cudnn::descriptor> m_packs;  // by replay_key
  graph_replay m_replay;  // declared after the handle and buffers its graphs use: destroyed first
  std::string m_description;
};

call_io pointers_of(const std::vector<device_tensor>& inputs, const std::vector<device_tensor>& outputs) {
  call_io io;
  for (const auto& t : inputs) io.inputs.push_back(t.data);
  for (const auto& t : outputs) io.outputs.push_back(t.data);
  return io;
}

class cudnn_gqa_baseline final : public baseline {
 public:
  cudnn_gqa_baseline(gqa_request request, std::unique_ptr<gqa_executable> exe)
      : m_request(std::move(request)), m_exe(std::move(exe)) {}
  [[nodiscard]] std::string description() const override { return m_exe->description(); }
  void run(const std::vector<device_tensor>& inputs, const std::vector<device_tensor>& outputs,
           cudaStream_t stream) override {
    if (status s = check_gqa_tensors(m_request, inputs, outputs); !s) throw std::runtime_error(s.err().message);
    m_exe->run(pointers_of(inputs, outputs), stream);
  }

 private:
  gqa_request m_request;
  std::unique_ptr<gqa_executable> m_exe;
};

class gqa_reference_baseline final : public baseline {
 public:
  gqa_reference_baseline(gqa_request request, std::string why)
      : m_request(std::move(request)), m_pos(positions_for(m_request.layout)), m_why(std::move(why)),
        m_o32(m_request.total_q * m_request.h_q * m_request.d * 4) {}
  [[nodiscard]] std::string description() const override {
    return fmt::format("{}: independent fp32 GPU reference (one thread per query row and head; not a vendor "
                       "baseline, so speedups against it say nothing about cuDNN): {}",
                       k_kind, m_why);
  }
  void run(const std::vector<device_tensor>& inputs, const std::vector<device_tensor>& outputs,
           cudaStream_t stream) override {
    if (status s = check_gqa_tensors(m_request, inputs, outputs); !s) throw std::runtime_error(s.err().message);
    gqa_dims dims;
    dims.total_q = m_request.total_q;
    dims.sequences = m_request.len_indptr - 1;
    dims.h_q = m_request.h_q;
    dims.h_kv = m_request.h_kv;
    dims.d = m_request.d;
    dims.paged = m_request.layout != gqa_layout::ragged_prefill;
    dims.page_size = dims.paged ? m_request.page_size : 1;
    dims.causal = m_request.causal;
    dims.scale_device = static_cast<const float*>(inputs[m_pos.scale].data);
    auto* o32 = reinterpret_cast<float*>(m_o32.get());
    status s = reference_gqa_forward(
        static_cast<const __nv_bfloat16*>(inputs[m_pos.q].data), static_cast<const __nv_bfloat16*>(inputs[m_pos.k].data),
        static_cast<const __nv_bfloat16*>(inputs[m_pos.v].data),
        m_pos.qo >= 0 ? static_cast<const int32_t*>(inputs[m_pos.qo].data) : nullptr,
        static_cast<const int32_t*>(inputs[m_pos.kv_indptr].data),
        m_pos.kv_indices >= 0 ? static_cast<const int32_t*>(inputs[m_pos.kv_indices].data) : nullptr, dims, o32,
        static_cast<float*>(outputs[1].data), stream);
    const int64_t count = m_request.total_q * m_request.h_q * m_request.d;
    if (s) s = convert_f32_to_bf16(o32, static_cast<__nv_bfloat16*>(outputs[0].data), count, stream);
    if (!s) throw std::runtime_error(s.err().message);
  }

 private:
  gqa_request m_request;
  positions m_pos;
  std::string m_why;
  device_memory m_o32;
};

// Common front part of every make_*: request, tensors, device.
result<gqa_request> checked_request(const baseline_request& request, const std::vector<device_tensor>& inputs,
                                    const std::vector<device_tensor>& outputs) {
  auto r = gqa_request_from(request);
  if (!r) return r.err();
  if (status s = check_gqa_tensors(*r, inputs, outputs); !s) return s.err();
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device != request.device) {
    cudaGetLastError();
    return make_error(fmt::format("{}: baseline requested for device {} but the current device is {}", k_kind,
                                  request.device, device));
  }
  return r;
}

}  // namespace

result<gqa_request> gqa_request_from(const baseline_request& request) {
  if (request.kind != k_kind) return make_error(fmt::format("{} asked to build a '{}' baseline", k_kind, request.kind));
  const std::string where = std::string(k_kind) + ": baseline_options";
  const ordered_json& o = request.options;
  if (!o.is_object()) return make_error(where + ": expected an object with 'layout' and 'causal'");
  for (const auto& [key, value] : o.items())
    if (key != "layout" && key != "causal")
      return make_error(fmt::format("{}: unknown field '{}' (expected layout, causal)", where, key));
  if (!o.contains("causal") || !o["causal"].is_boolean())
    return make_error(where + ".causal: missing or not a boolean (true means bottom-right aligned)");
  if (!o.contains("layout") || !o["layout"].is_string())
    return make_error(where + ".layout: missing or not a string (paged_decode, paged_prefill, ragged_prefill)");
  gqa_request r;
  const std::string layout = o["layout"].get<std::string>();
  if (layout == "paged_decode") r.layout = gqa_layout::paged_decode;
  else if (layout == "paged_prefill") r.layout = gqa_layout::paged_prefill;
  else if (layout == "ragged_prefill") r.layout = gqa_layout::ragged_prefill;
  else return make_error(fmt::format("{}.layout: '{}' (expected paged_decode, paged_prefill, ragged_prefill)", where, layout));
  r.causal = o["causal"].get<bool>();
  if (r.layout == gqa_layout::paged_decode && r.causal)
    return make_error(where + ": a decode step has one query per sequence; causal must be false");
  struct field {
    const char* name;
    int64_t* into;
  };
  std::vector<field> fields{{"num_qo_heads", &r.h_q}, {"num_kv_heads", &r.h_kv}, {"head_dim", &r.d},
                            {"len_indptr", &r.len_indptr}};
  fields.push_back({r.layout == gqa_layout::paged_decode ? "batch_size" : "total_q", &r.total_q});
  if (r.layout == gqa_layout::ragged_prefill) {
    fields.push_back({"total_kv", &r.total_kv});
  } else {
    fields.insert(fields.end(), {{"num_pages", &r.num_pages}, {"page_size", &r.page_size},
                                 {"num_kv_indices", &r.num_kv_indices}});
  }
  for (const field& f : fields) {
    auto value = gqa_axis(request, f.name);
    if (!value) return value.err();
    *f.into = *value;
  }
  if (r.len_indptr < 2) return make_error(fmt::format("{}: len_indptr = {} needs at least one sequence", k_kind, r.len_indptr));
  for (const auto& e : expected_inputs(r)) r.input_names.push_back(e.name);
  return r;
}

status check_gqa_tensors(const gqa_request& r, const std::vector<device_tensor>& inputs,
                         const std::vector<device_tensor>& outputs) {
  if (status s = check_list("input", inputs, expected_inputs(r)); !s) return s;
  return check_list("output", outputs, expected_outputs(r));
}

result<std::unique_ptr<baseline>> make_cudnn_gqa_only(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream) {
  auto r = checked_request(request, sample_inputs, sample_outputs);
  if (!r) return r.err();
  auto layout = read_layout(*r, sample_inputs, stream);
  if (!layout) return layout.err();
  const gqa_problem problem = problem_for(*r, *layout);
  int sm_major = 0;
  if (cudaDeviceGetAttribute(&sm_major, cudaDevAttrComputeCapabilityMajor, request.device) != cudaSuccess) {
    cudaGetLastError();
    return make_error(fmt::format("{}: no usable CUDA device", k_kind));
  }
  if (status s = check_support(problem, cudnn::runtime_version(), sm_major); !s)
    return s.err().with_context(fmt::format("{} with cuDNN {}", k_kind, cudnn::runtime_version().str()));
  try {
    auto exe = std::make_unique<gqa_executable>(*r, problem);
    if (status s = exe->build(pointers_of(sample_inputs, sample_outputs), stream, request.cache_dir); !s)
      return s.err().with_context(k_kind);
    return std::unique_ptr<baseline>(std::make_unique<cudnn_gqa_baseline>(*r, std::move(exe)));
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: {}", k_kind, e.what()));
  }
}

result<std::unique_ptr<baseline>> make_gqa_reference_baseline(const baseline_request& request,
                                                              const std::vector<device_tensor>& sample_inputs,
                                                              const std::vector<device_tensor>& sample_outputs,
                                                              const std::string& why) {
  auto r = checked_request(request, sample_inputs, sample_outputs);
  if (!r) return r.err();
  try {
    return std::unique_ptr<baseline>(std::make_unique<gqa_reference_baseline>(*r, why));
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: the independent reference: {}", k_kind, e.what()));
  }
}

result<std::unique_ptr<baseline>> make_cudnn_sdpa_gqa(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream) {
  // Problems with the request, the tensors, the sample layout or the device are errors; only a cuDNN
  // that cannot serve the problem falls back to the independent reference.
  auto r = checked_request(request, sample_inputs, sample_outputs);
  if (!r) return r.err();
  auto layout = read_layout(*r, sample_inputs, stream);
  if (!layout) return layout.err();
  auto made = make_cudnn_gqa_only(request, sample_inputs, sample_outputs, stream);
  if (made) return made;
  cudaGetLastError();
  return make_gqa_reference_baseline(request, sample_inputs, sample_outputs,
                                     "the cuDNN baseline is unavailable here: " + made.err().message);
}

}  // namespace ptxbench::gpu
