#include "service/job_runner.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "eval/fake_evaluator.h"
#include "eval/local_gpu.h"
#include "build/toolchain.h"
#include "core/file_io.h"
#include "core/process.h"
#include "eval/triton_stages.h"
#include "eval/pipeline_halves.h"
#include "service/artifact_bundle.h"
#include "service/environment.h"
#include "service/submission.h"
#include "verdict/verdict_json.h"

namespace ptxbench::service {
namespace fs = std::filesystem;
using queue::compile_outcome;
using queue::job;
using queue::run_outcome;

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

fs::path default_harness(const eval::pipeline_config& config) {
  if (!config.gpu.harness.empty()) return config.gpu.harness;
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : self.parent_path()) / "ptxbench-harness";
}

bool is_cpu_decision(const verdict& v) {
  return v.outcome() == eval_outcome::rejected || v.outcome() == eval_outcome::compile_error ||
         v.outcome() == eval_outcome::incorrect_shape || v.outcome() == eval_outcome::incorrect_dtype;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

result<decoded_job> decode_job(const job& j, const suite& tasks, const eval::pipeline_config& base) {
  auto doc = ordered_json::parse(j.spec.solution_json, nullptr, false);
  if (doc.is_discarded()) return make_error("job " + j.id + ": its solution is not JSON");
  auto sol = solution_from_json(doc, "solution");
  if (!sol) return sol.err().with_context("job " + j.id);
  auto protocol = read_protocol(j.spec.protocol_json);
  if (!protocol) return protocol.err().with_context("job " + j.id);
  auto pair = resolve_evaluation(tasks, j.spec.task, j.spec.target, !protocol->check_only);
  if (!pair) return pair.err().with_context("job " + j.id + " (this worker's suite)");
  decoded_job d;
  d.t = std::make_unique<task>(*pair->t);
  d.target = pair->target;
  d.candidate = std::move(*sol);
  d.run_on_gpu = !protocol->check_only;
  d.config = base;
  if (protocol->atol) d.t->tol.atol = *protocol->atol;
  if (protocol->rtol) d.t->tol.rtol = *protocol->rtol;
  auto& g = d.config.gpu;
  switch (j.spec.kind) {
    case queue::job_kind::evaluate:
      if (protocol->timeout_s) g.call_timeout_s = *protocol->timeout_s;
      break;
    case queue::job_kind::sanitize:
    case queue::job_kind::debug:  // a sanitizer run; the service writes its verdict up as a debug report
      g.sanitize = true;
      g.dynamic_check = false;
      if (!protocol->sanitizer_types.empty()) g.sanitizer_tools = join(protocol->sanitizer_types);
      if (protocol->timeout_s) g.sanitize_timeout_s = *protocol->timeout_s;
      if (protocol->call_timeout_s) g.call_timeout_s = *protocol->call_timeout_s;
      break;
    case queue::job_kind::profile:
      g.dynamic_check = true;
      if (protocol->timeout_s) g.profile_timeout_s = *protocol->timeout_s;
      break;
  }
  return d;
}

// ---- the real pipeline ----

queue::worker_callbacks pipeline_cpu_callbacks(const suite& tasks, const eval::pipeline_config& base) {
  auto tc = build::find_toolchain(base.cuda_root, base.cache_dir);
  queue::run_environment env = cpu_environment(tc ? tc->nvcc_version : std::string());
  queue::worker_callbacks cb;
  cb.compile = [&tasks, base, env](const job& j, const std::atomic<bool>&) -> result<compile_outcome> {
    auto d = decode_job(j, tasks, base);
    if (!d) return d.err();
    auto half = eval::run_cpu_half(d->request(), d->config);
    if (!half) return half.err();
    compile_outcome out;
    if (!half->built) {
      out.verdict_json = to_json(half->v).dump();
      out.environment = env;
      return out;
    }
    auto so = read_file(half->built->shared_object, 1u << 30);
    if (!so) return so.err().with_context("reading the built object");
    out.artifact = pack_artifact({to_json(half->v).dump(), std::move(*so)});
    return out;
  };
  return cb;
}

gpu_job_runner::gpu_job_runner(const suite& tasks, eval::pipeline_config base, int max_sessions)
    : m_tasks(tasks), m_base(std::move(base)), m_sessions(max_sessions) {
  m_base.gpu.harness = default_harness(m_base);
}

gpu_job_runner::~gpu_job_runner() = default;

result<queue::run_environment> gpu_job_runner::probe() {
  m_last_probe_ms = now_ms();
  auto env = eval::probe_gpu(m_base.gpu.device, m_base.gpu.harness);
  if (!env) return env.err();
  m_unhealthy.clear();
  return gpu_environment(*env);
}

std::string gpu_job_runner::health() {
  if (m_unhealthy.empty()) return "ok";
  if (now_ms() - m_last_probe_ms >= 30000) {
    auto p = probe();
    if (p) return "ok";
    m_unhealthy = p.err().message;
  }
  return m_unhealthy;
}

queue::worker_callbacks gpu_job_runner::callbacks() {
  queue::worker_callbacks cb;
  cb.run = [this](const job& j, const std::string& artifact, const std::atomic<bool>& cancelled) {
    return run(j, artifact, cancelled);
  };
  cb.health = [this] { return health(); };
  return cb;
}

result<run_outcome> gpu_job_runner::run(const job& j, const std::string& artifact, const std::atomic<bool>& cancelled) {
  auto d = decode_job(j, m_tasks, m_base);
  if (!d) return d.err();
  auto parts = unpack_artifact(artifact);
  if (!parts) return parts.err();
  auto cpu_doc = parse_json(parts->cpu_verdict_json, "artifact verdict");
  if (!cpu_doc) return cpu_doc.err();
  auto v = verdict_from_json(*cpu_doc);
  if (!v) return v.err().with_context("artifact verdict");
  // The object lands in a content-addressed folder of this host; the runner loads it from there.
  // A Triton candidate's artifact is its kernel.py, which the Triton runner imports under that name.
  fs::path so = m_base.cache_dir / "service" / "artifacts" / j.artifact_sha256 /
                (eval::is_triton(d->candidate) ? "kernel.py" : "candidate.so");
  if (!fs::exists(so))
    if (auto st = write_file_atomic(so, parts->shared_object); !st) return st.err().with_context("storing the artifact");
  build::build_result built;
  built.outcome = build::build_outcome::built;
  built.shared_object = so;

  const bool triton = eval::is_triton(d->candidate);
  eval::gpu_candidate c{&built, d->candidate.entry_symbol(), &*v, triton ? "triton" : "cuda"};
  if (auto st = m_sessions.evaluate(*d->t, *d->target, d->config, c, &cancelled); !st) {
    // A harness that failed may have lost its GPU: then the job goes back without penalty and this
    // worker reports itself unhealthy; otherwise the failure is the job's, retried by the queue.
    if (!cancelled)
      if (auto p = probe(); !p) {
        m_unhealthy = p.err().message;
        return run_outcome{"", std::nullopt, "GPU lost: " + m_unhealthy};
      }
    return st.err();
  }
  queue::run_environment env = gpu_environment(m_sessions.last()->environment());
  eval::finish_verdict(*v, d->request(), d->config);
  return run_outcome{to_json(*v).dump(), env, std::nullopt};
}

// ---- the fake ----

queue::run_environment fake_cpu_environment() { return cpu_environment("fake nvcc"); }

queue::run_environment fake_gpu_environment(const std::string& gpu_name) {
  return gpu_environment({{"gpu", gpu_name}, {"libs", {{"nvidia_driver", "0.0"}, {"cuda_runtime", "13.0"}}}});
}

queue::worker_callbacks fake_callbacks(const suite& tasks, const fake_options& options) {
  auto has = [](const job& j, const char* marker) { return j.spec.solution_json.find(marker) != std::string::npos; };
  auto evaluate = [&tasks, options](const job& j, bool gpu_half) -> result<verdict> {
    auto d = decode_job(j, tasks, {});
    if (!d) return d.err();
    auto ev = eval::make_fake_evaluator(gpu_half ? options.delay_ms : options.cpu_delay_ms);
    auto request = d->request();
    request.run_on_gpu = gpu_half;
    return ev->evaluate(request);
  };
  queue::worker_callbacks cb;
  cb.compile = [evaluate, has, &tasks, options](const job& j, const std::atomic<bool>&) -> result<compile_outcome> {
    if (options.inject_faults && has(j, "FAKE_FLAKY_BUILD") && j.infra_failures == 0)
      return make_error("fake: build host lost (injected, first attempt)");
    auto v = evaluate(j, false);
    if (!v) return v.err();
    auto d = decode_job(j, tasks, {});
    compile_outcome out;
    if (is_cpu_decision(*v) || !d || !d->run_on_gpu) {
      out.verdict_json = to_json(*v).dump();
      out.environment = fake_cpu_environment();
      return out;
    }
    out.artifact = pack_artifact({to_json(*v).dump(), "fake shared object of " + j.content_key});
    return out;
  };
  cb.run = [evaluate, has, options](const job& j, const std::string& artifact, const std::atomic<bool>&) -> result<run_outcome> {
    auto parts = unpack_artifact(artifact);
    if (!parts) return parts.err();
    if (parts->shared_object != "fake shared object of " + j.content_key) return make_error("fake: the artifact is not this job's");
    if (options.allow_kill_self && has(j, "FAKE_KILL_WORKER")) ::kill(::getpid(), SIGKILL);  // the candidate takes its worker down
    if (options.inject_faults && has(j, "FAKE_FLAKY_GPU") && j.infra_failures == 0)
      return make_error("fake: GPU lost (injected, first attempt)");
    auto v = evaluate(j, true);
    if (!v) return v.err();
    return run_outcome{to_json(*v).dump(), fake_gpu_environment(options.gpu_name), std::nullopt};
  };
  return cb;
}

}  // namespace ptxbench::service
