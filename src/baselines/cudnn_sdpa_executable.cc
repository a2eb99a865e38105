#include "baselines/cudnn_sdpa_executable.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "core/align.h"
#include "baselines/cudnn_remembered_plan.h"
#include "core/tuned_choice.h"

namespace ptxbench::gpu::cudnn {
namespace {

constexpr int64_t k_scratch_alignment_bytes = 256;

// Offsets of the graph's scratch tensors inside the workspace, after the plan's own workspace.
std::vector<int64_t> scratch_offsets(const sdpa_graph& graph, int64_t plan_workspace_bytes, int64_t& total_bytes) {
  std::vector<int64_t> offsets;
  int64_t offset = align_up(plan_workspace_bytes, k_scratch_alignment_bytes);
  for (const scratch_tensor& s : graph.scratch) {
    offsets.push_back(offset);
    offset = align_up(offset + s.bytes, k_scratch_alignment_bytes);
  }
  total_bytes = offset;
  return offsets;
}

// The variant pack for one graph: the task's buffers, scratch inside the workspace, by-value scalars.
descriptor pack_for_graph(const sdpa_graph& graph, const std::vector<int64_t>& offsets,
                          const std::vector<void*>& io_pointers, void* workspace) {
  std::vector<int64_t> uids = graph.io_uids;
  std::vector<void*> pointers = io_pointers;
  for (std::size_t i = 0; i < graph.scratch.size(); ++i) {
    uids.push_back(graph.scratch[i].uid);
    pointers.push_back(static_cast<char*>(workspace) + offsets[i]);
  }
  for (const auto& [uid, value] : graph.by_value) {
    uids.push_back(uid);
    pointers.push_back(const_cast<float*>(&value));  // cuDNN reads by-value scalars from host memory
  }
  return make_variant_pack(uids, pointers, workspace);
}

void zero_scratch(const sdpa_graph& graph, const std::vector<int64_t>& offsets, void* workspace, cudaStream_t stream) {
  for (std::size_t i = 0; i < graph.scratch.size(); ++i) {
    if (!graph.scratch[i].zero_before_run) continue;
    PTXB_CUDA_CALL(cudaMemsetAsync(static_cast<char*>(workspace) + offsets[i], 0,
                                   static_cast<std::size_t>(graph.scratch[i].bytes), stream));
  }
}

class device_buffer {
 public:
  ~device_buffer() { reset(); }
  void ensure(int64_t bytes) {
    if (bytes <= m_bytes) return;
    reset();
    PTXB_CUDA_CALL(cudaMalloc(&m_ptr, static_cast<std::size_t>(std::max<int64_t>(bytes, 1))));
    m_bytes = bytes;
  }
  void reset() {
    if (m_ptr != nullptr) cudaFree(m_ptr);
    m_ptr = nullptr;
    m_bytes = 0;
  }
  void* release(int64_t& bytes) {
    bytes = m_bytes;
    m_bytes = 0;
    return std::exchange(m_ptr, nullptr);
  }
  [[nodiscard]] void* get() const { return m_ptr; }

 private:
  void* m_ptr = nullptr;
  int64_t m_bytes = 0;
};

struct best_choice {
  std::unique_ptr<sdpa_graph> graph;
  plan_candidate plan;
  int plan_index = -1;  // in find_plans' list for graph->kind
  float ms = std::numeric_limits<float>::infinity();
  int plans_timed = 0;
};

// Builds one variant, times each plan that finalizes and moves it into `best` when it wins.
void try_graph(sdpa_graph_kind kind, const sdpa_problem& problem, const sdpa_config& config, handle& h,
               version runtime, const std::vector<void*>& io_pointers, cudaStream_t stream, device_buffer& workspace,
               best_choice& best, graph_attempt& attempt) {
  std::unique_ptr<sdpa_graph> graph;
  plan_search search;
  try {
    graph = build_sdpa_graph(kind, problem, h.get(), runtime);
    search = find_plans(graph->op_graph, config.max_plans_per_graph);
  } catch (const std::exception& e) {
    attempt.error = e.what();
    return;
  }
  attempt.rejected = search.rejected;
  int winner = -1;
  int timed_here = 0;
  float winner_ms = best.ms;
  for (std::size_t i = 0; i < search.plans.size(); ++i) {
    const plan_candidate& plan = search.plans[i];
    try {
      int64_t total = 0;
      std::vector<int64_t> offsets = scratch_offsets(*graph, plan.workspace_bytes, total);
      workspace.ensure(total);
      zero_scratch(*graph, offsets, workspace.get(), stream);
      descriptor pack = pack_for_graph(*graph, offsets, io_pointers, workspace.get());
      float ms = median_execution_ms(h.get(), plan.plan, pack, stream, config.timing_iterations);
      attempt.plans.push_back(fmt::format("{}: {:.4f} ms", plan.label(), ms));
      ++best.plans_timed;
      ++timed_here;
      if (ms < winner_ms) {
        winner_ms = ms;
        winner = static_cast<int>(i);
      }
    } catch (const std::exception& e) {
      cudaStreamSynchronize(stream);
      cudaGetLastError();
      attempt.plans.push_back(fmt::format("{}: {}", plan.label(), e.what()));
    }
  }
  if (search.plans.empty()) {
    attempt.error = "no engine config finalized into a plan";
  } else if (timed_here == 0) {
    attempt.error = "no plan executed: " + attempt.plans.front();
  }
  if (winner >= 0) {
    best.graph = std::move(graph);
    best.plan = std::move(search.plans[static_cast<std::size_t>(winner)]);
    best.plan_index = winner;
    best.ms = winner_ms;
  }
}

// Rebuilds a remembered choice: that graph variant only, the plan it names if it is still the same
// (find_remembered_plan), run once on the caller's buffers. Anything else is an error saying what
// changed, and the caller tunes again.
status load_choice(const ordered_json& choice, const std::vector<sdpa_graph_kind>& kinds, const sdpa_problem& problem,
                   const sdpa_config& config, handle& h, version runtime, const std::vector<void*>& io_pointers,
                   cudaStream_t stream, device_buffer& workspace, best_choice& best) {
  const std::string graph_name = choice.at("graph").get<std::string>();
  std::optional<sdpa_graph_kind> kind;
  for (sdpa_graph_kind k : kinds)
    if (graph_name == graph_kind_name(k)) kind = k;
  if (!kind) return make_error(fmt::format("the {} graph is not one this build tries", graph_name));
  std::unique_ptr<sdpa_graph> graph = build_sdpa_graph(*kind, problem, h.get(), runtime);
  auto found = find_remembered_plan(graph->op_graph, choice, graph_name, config.max_plans_per_graph);
  if (!found) return found.err();
  plan_candidate& plan = *found;
  try {
    int64_t total = 0;
    std::vector<int64_t> offsets = scratch_offsets(*graph, plan.workspace_bytes, total);
    workspace.ensure(total);
    zero_scratch(*graph, offsets, workspace.get(), stream);
    descriptor pack = pack_for_graph(*graph, offsets, io_pointers, workspace.get());
    execute(h.get(), plan.plan, pack);
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  } catch (const std::exception& e) {
    cudaStreamSynchronize(stream);
    cudaGetLastError();
    return make_error(fmt::format("{} of the {} graph does not run: {}", plan.label(false), graph_name, e.what()));
  }
  best.graph = std::move(graph);
  best.plan = std::move(plan);
  best.plan_index = choice.at("index").get<int>();
  best.ms = choice.value("tuned_ms", std::numeric_limits<float>::quiet_NaN());
  best.plans_timed = choice.value("plans_timed", 0);
  return ok();
}

std::string shape_text(sdpa_direction direction, const sdpa_problem& p) {
  return fmt::format("{}SDPA {} (B={} H={} S={} D={})", p.causal ? "causal " : "",
                     direction == sdpa_direction::forward ? "forward" : "backward", p.b, p.h, p.s, p.d);
}

std::string shorten(const std::string& text, std::size_t max_chars) {
  return text.size() <= max_chars ? text : text.substr(0, max_chars) + "...";
}

std::string attempts_summary(const std::vector<graph_attempt>& attempts, std::optional<sdpa_graph_kind> except,
                             bool full) {
  std::string out;
  for (const graph_attempt& a : attempts) {
    if (a.kind == except) continue;
    std::string why = a.error.empty() ? "slower" : (full ? a.error : shorten(a.error, 160));
    if (!a.error.empty() && full && !a.rejected.empty()) why += " [" + a.rejected.front() + "]";
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", graph_kind_name(a.kind), why);
  }
  return out;
}

}  // namespace

std::string sdpa_tuned_choice_key(sdpa_direction direction, const sdpa_problem& p, const std::vector<sdpa_graph_kind>& kinds,
                                  const sdpa_config& config, int device) {
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &p.scale, sizeof scale_bits);
  std::string variants;
  for (sdpa_graph_kind k : kinds) variants += fmt::format("{}{}", variants.empty() ? "" : "+", graph_kind_name(k));
  return fmt::format("cudnn_sdpa_{}-{}-cudnn{}-headers{}-B{}-H{}-S{}-D{}-{}-scale{:08x}-bf16-{}-plans{}",
                     direction == sdpa_direction::forward ? "fwd" : "bwd", remembered_plan_device(device),
                     runtime_version().code, compiled_version().code, p.b, p.h, p.s, p.d,
                     p.causal ? "causal" : "noncausal", scale_bits, variants, config.max_plans_per_graph);
}

std::vector<sdpa_graph_kind> default_graph_kinds(sdpa_direction direction, bool causal, version runtime) {
  std::vector<sdpa_graph_kind> kinds;
  if (direction == sdpa_direction::forward) {
    if (!causal && runtime.code >= 91301 && CUDNN_VERSION >= 91301) kinds.push_back(sdpa_graph_kind::unified_fwd);
    kinds.push_back(sdpa_graph_kind::composite_fwd);
  } else {
    // cuDNN 9.19 declares OPERATION_SDPA_BWD but rejects any graph holding it (OPERATIONGRAPH
    // finalize: CUDNN_STATUS_BAD_PARAM, buildDAG); try it only on later libraries.
    if (!causal && CUDNN_VERSION >= 91900 && runtime.code >= 92000) kinds.push_back(sdpa_graph_kind::unified_bwd);
    kinds.push_back(sdpa_graph_kind::composite_bwd);
  }
  return kinds;
}

status check_sdpa_support(sdpa_direction direction, const sdpa_problem& p, version runtime, int sm_major) {
  const bool backward = direction == sdpa_direction::backward;
  if (runtime.code < 90000) {
    return make_error(fmt::format("the cuDNN attention baselines need cuDNN >= 9.0.0 (backend graph API with fused "
                                  "flash attention); the loaded library is {}",
                                  runtime.str()));
  }
  if (sm_major < 8) {
    return make_error(fmt::format("cuDNN fused attention needs an sm_80 or newer GPU; this one is sm_{}x", sm_major));
  }
  if (p.b <= 0 || p.h <= 0 || p.s <= 0 || p.d <= 0) {
    return make_error(fmt::format("B, H, S and D must be positive; got B={} H={} S={} D={}", p.b, p.h, p.s, p.d));
  }
  if (!(p.scale > 0.0F) || !std::isfinite(p.scale)) return make_error("the attention scale must be positive and finite");
  if (p.d % 8 != 0 || p.d > 256) {
    return make_error(fmt::format("cuDNN fused attention needs D a multiple of 8 and at most 256; got D={}", p.d));
  }
  if (!backward) return ok();
  if (sm_major >= 10 && p.d > 128) {
    return make_error(fmt::format("cuDNN's attention backward on sm_{}x needs D <= 128; got D={}", sm_major, p.d));
  }
  if (runtime.code == 91000 || runtime.code == 91001) {
    return make_error(fmt::format("cuDNN {} has known SDPA backward bugs (cudnn-frontend refuses it); use 9.10.2 or "
                                  "newer",
                                  runtime.str()));
  }
  if (p.s == 1) return make_error("cuDNN's attention backward does not support S = 1");
  if (runtime.code <= 91500 && p.s % 128 != 0) {
    return make_error(fmt::format("on cuDNN <= 9.15 the attention backward needs S a multiple of 128 (cudnn-frontend "
                                  "adds a padding mask otherwise, which this baseline does not); got S={} on cuDNN {}",
                                  p.s, runtime.str()));
  }
  return ok();
}

result<std::shared_ptr<sdpa_executable>> build_sdpa_executable(sdpa_direction direction, const sdpa_problem& problem,
                                                               const sdpa_config& config,
                                                               const std::vector<void*>& io_pointers,
                                                               cudaStream_t stream,
                                                               const std::filesystem::path& cache_dir) {
  const version runtime = runtime_version();
  int device = 0;
  int sm_major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    cudaGetLastError();
    return make_error("cuDNN attention baseline: no usable CUDA device");
  }
  if (status s = check_sdpa_support(direction, problem, runtime, sm_major); !s) return s.err();
  const std::vector<sdpa_graph_kind> kinds =
      config.kinds.empty() ? default_graph_kinds(direction, problem.causal, runtime) : config.kinds;
  const std::size_t expected_io = direction == sdpa_direction::forward ? 5 : 9;
  if (io_pointers.size() != expected_io) {
    return make_error(fmt::format("cuDNN attention: expected {} tensors, got {}", expected_io, io_pointers.size()));
  }

  std::shared_ptr<sdpa_executable> exe(new sdpa_executable());
  best_choice best;
  device_buffer workspace;
  try {
    exe->m_handle = std::make_unique<handle>();
    exe->m_handle->set_stream(stream);
  } catch (const std::exception& e) {
    return make_error(fmt::format("cuDNN {}: {}: {}", runtime.str(), shape_text(direction, problem), e.what()));
  }
  std::string others;  // why the other variants lost, from this tuning or the remembered one
  auto tune = [&]() -> result<ordered_json> {
    best = best_choice{};
    exe->m_attempts.clear();
    try {
      for (sdpa_graph_kind kind : kinds) {
        graph_attempt attempt;
        attempt.kind = kind;
        if (is_forward(kind) != (direction == sdpa_direction::forward)) {
          attempt.error = "graph variant does not match the direction";
        } else {
          try_graph(kind, problem, config, *exe->m_handle, runtime, io_pointers, stream, workspace, best, attempt);
        }
        exe->m_attempts.push_back(std::move(attempt));
      }
    } catch (const std::exception& e) {
      return make_error(fmt::format("cuDNN {}: {}: {}", runtime.str(), shape_text(direction, problem), e.what()));
    }
    if (!best.graph) {
      return make_error(fmt::format("cuDNN {}: no working plan for {}: {}", runtime.str(),
                                    shape_text(direction, problem),
                                    attempts_summary(exe->m_attempts, std::nullopt, true)));
    }
    others = attempts_summary(exe->m_attempts, best.graph->kind, false);
    ordered_json remembered{{"graph", graph_kind_name(best.graph->kind)}};
    remembered.update(remembered_plan_identity(best.plan, best.plan_index));
    remembered.update(ordered_json{{"tuned_ms", best.ms}, {"plans_timed", best.plans_timed}, {"other_variants", others}});
    return remembered;
  };
  auto use = [&](const ordered_json& choice) -> status {
    best = best_choice{};
    status loaded =
        load_choice(choice, kinds, problem, config, *exe->m_handle, runtime, io_pointers, stream, workspace, best);
    if (loaded) others = choice.value("other_variants", "");
    return loaded;
  };
  auto chosen = remember_tuned_choice(cache_dir, sdpa_tuned_choice_key(direction, problem, kinds, config, device),
                                      use, tune);
  if (!chosen) return chosen.err();
  exe->m_from_cache = chosen->from_cache;
  exe->m_graph = std::move(best.graph);
  exe->m_plan = std::move(best.plan);
  int64_t total = 0;
  exe->m_scratch_offsets = scratch_offsets(*exe->m_graph, exe->m_plan.workspace_bytes, total);
  try {
    workspace.ensure(total);  // a remembered plan may need more than the tuning's largest
  } catch (const std::exception& e) {
    return make_error(fmt::format("cuDNN {}: {}: {}", runtime.str(), shape_text(direction, problem), e.what()));
  }
  exe->m_workspace = workspace.release(exe->m_workspace_bytes);
  const std::string how =
      chosen->from_cache
          ? fmt::format("autotuned earlier, from the cache: fastest of {} timed plan(s), {:.3f} ms on the sample "
                        "buffers then",
                        best.plans_timed, best.ms)
          : fmt::format("autotuned now: fastest of {} timed plan(s), {:.3f} ms on the sample buffers{}",
                        best.plans_timed, best.ms, chosen->stale ? " (" + chosen->why_tuned + ")" : "");
  exe->m_description = fmt::format("cuDNN {} (headers {}) {} graph{}, {}; {}{}{}", runtime.str(),
                                   compiled_version().str(), graph_kind_name(exe->m_graph->kind),
                                   problem.causal ? " with causal mask" : "", exe->m_plan.label(), how,
                                   others.empty() ? "" : "; other variants: ", others);
  return exe;
}

sdpa_executable::~sdpa_executable() {
  if (m_workspace != nullptr) cudaFree(m_workspace);
}

const descriptor& sdpa_executable::pack_for(const std::vector<void*>& io_pointers) {
  if (!m_pack || io_pointers != m_last_io) {
    m_pack = pack_for_graph(*m_graph, m_scratch_offsets, io_pointers, m_workspace);
    m_last_io = io_pointers;
  }
  return m_pack;
}

void sdpa_executable::run(const std::vector<void*>& io_pointers, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (io_pointers.size() != m_graph->io_uids.size()) {
    throw std::runtime_error(fmt::format("cuDNN attention: expected {} tensors, got {}", m_graph->io_uids.size(),
                                         io_pointers.size()));
  }
  m_handle->set_stream(stream);
  const descriptor& pack = pack_for(io_pointers);
  zero_scratch(*m_graph, m_scratch_offsets, m_workspace, stream);
  execute(m_handle->get(), m_plan.plan, pack);
}

}  // namespace ptxbench::gpu::cudnn
