#include "gpu/harness/harness.h"

#include <unistd.h>
#include <algorithm>

#include <chrono>

#include <fmt/format.h>

#include "measure/measurement_audit.h"
#include "gpu/common/cuda_check.h"
#include "gpu/harness/environment.h"
#include "gpu/harness/runner_sandbox.h"
#include "gpu/harness/scalar_input.h"
#include "gpu/harness/snapshot_plan.h"

namespace ptxbench::gpu {

std::vector<guarded_buffer*> tensor_set::input_ptrs() const {
  std::vector<guarded_buffer*> out;
  for (const auto& b : inputs) out.push_back(b.get());
  return out;
}

std::vector<ipc_tensor> tensor_set::describe() const {
  std::vector<ipc_tensor> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    out.push_back(inputs[i]->describe());
    if (i < scalar_values.size()) out.back().value = scalar_values[i];
  }
  for (const auto& b : outputs) out.push_back(b->describe());
  return out;
}

std::vector<device_tensor> tensor_set::input_views() const {
  std::vector<device_tensor> out;
  for (const auto& b : inputs) out.push_back({b->data(), b->type(), b->shape()});
  return out;
}

std::size_t tensor_set::bytes() const {
  std::size_t n = 0;
  for (const auto& b : inputs) n += b->bytes();
  for (const auto& b : outputs) n += b->bytes();
  for (const auto& r : reference_outputs) n += r->bytes;
  return n;
}

device_allocation::device_allocation(std::size_t n) : bytes(n) { PTXB_CUDA_CALL(cudaMalloc(&data, n)); }
device_allocation::~device_allocation() { PTXB_CUDA_CALL_NOEXCEPT(cudaFree(data)); }

tensor_set harness::make_set() const {
  tensor_set s;
  for (const auto& t : m_job.def.inputs) {
    s.inputs.push_back(std::make_unique<guarded_buffer>(t.name, t.type, concrete_shape(t, m_axes), false));
    // A value that does not fit its dtype stays empty here: input_generator::create names it.
    std::vector<unsigned char> value;
    if (const input_spec spec = m_job.wl.input(t.name); spec.kind == input_kind::scalar)
      if (auto bytes = scalar_bytes(t, spec.scalar_value)) value = std::move(*bytes);
    s.scalar_values.push_back(std::move(value));
  }
  for (const auto& t : m_job.def.outputs)
    s.outputs.push_back(std::make_unique<guarded_buffer>(t.name, t.type, concrete_shape(t, m_axes), true));
  for (const auto& o : s.outputs) s.reference_outputs.push_back(std::make_unique<device_allocation>(o->bytes()));
  return s;
}

void harness::ensure_sets(std::size_t n) {
  while (m_sets.size() < n) m_sets.push_back(make_set());
}

stage_lease harness::lease(const std::string& stage, bool measuring, measurement_lease& record) const {
  auto held = stage_lease::take(m_lease_dir, m_lease_device, stage, measuring, m_job.options.lease_timeout_s, record);
  if (!held) throw std::runtime_error(held.err().message);
  return std::move(*held);
}

result<std::unique_ptr<harness>> harness::create(const harness_job& job) {
  auto h = std::unique_ptr<harness>(new harness(job));
  try {
    h->m_device = job.options.device;
    PTXB_CUDA_CALL(cudaSetDevice(h->m_device));
    h->m_lease_device = device_uuid(h->m_device);
    if (h->m_lease_device.empty()) h->m_lease_device = fmt::format("cuda-device-{}", h->m_device);
    h->m_lease_dir = job.options.lease_dir.empty() ? default_lease_dir() : job.options.lease_dir;
    // Setting the task up (autotuning the baseline, reference outputs) uses the GPU without measuring.
    measurement_lease setup_record;
    auto setup_lease = h->lease("setup", false, setup_record);
    // Spin, not yield, while waiting for the GPU: the confirmation inside a timed call is a wait.
    (void)cudaSetDeviceFlags(cudaDeviceScheduleSpin);
    (void)cudaGetLastError();
    keep_pool_memory(h->m_device);  // no unmapping between timed calls (device_ops.h)
    PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&h->m_stream, cudaStreamNonBlocking));
    h->m_axes = resolve_axes(job.wl, job.def);
    // Scalar inputs (shape null) live in one-element device buffers like any input (guards,
    // checksums; the baseline reads them there); the runner hands the candidate their value on the
    // host (kernel ABI: ndim 0), taken from the prepare message (tensor_set::scalar_values).
    h->m_rule = job.options.rule == "upstream_and" ? compare_rule::upstream_and : compare_rule::allclose;
    auto tracer = activity_tracer::start();
    if (tracer) h->m_tracer = std::move(*tracer);
    h->m_flusher = std::make_unique<l2_flusher>(h->m_device);
    h->ensure_sets(1);
    auto& set0 = h->m_sets[0];
    // The largest batch: a call's hygiene, two guards and a checksum per tensor.
    h->m_checks = std::make_unique<device_checks>(h->m_stream, 3 * (set0.inputs.size() + set0.outputs.size()) + 1);
    auto gen = input_generator::create(job.def, job.wl, h->m_axes, job.baseline_options, set0.input_ptrs(),
                                       h->m_device, job.cache_dir, h->m_stream);
    if (!gen) return gen.err();
    h->m_inputs = std::move(*gen);
    h->m_inputs->generate(set0.input_ptrs(), job.seed, h->m_stream);
    std::vector<device_tensor> ref_views;
    for (std::size_t i = 0; i < set0.outputs.size(); ++i)
      ref_views.push_back({set0.reference_outputs[i]->data, set0.outputs[i]->type(), set0.outputs[i]->shape()});
    baseline_request req{job.baseline, h->m_axes, job.baseline_options, h->m_device, job.cache_dir};
    auto ref = make_baseline(req, set0.input_views(), ref_views, h->m_stream);
    if (!ref) return ref.err();
    h->m_reference = std::move(*ref);
    PTXB_CUDA_CALL(cudaStreamSynchronize(h->m_stream));
    h->m_environment = collect_environment(h->m_device);
    h->m_environment["timing_method"] = h->m_tracer ? "cupti" : "events";
    h->m_environment["baseline"] = h->m_reference->description();
    if (auto d = h->m_inputs->derived_description(); !d.empty()) h->m_environment["derived_inputs"] = d;
  } catch (const std::exception& e) {
    return make_error(e.what());
  }
  return h;
}

harness::~harness() {
  m_sets.clear();
  m_snapshot.clear();
  m_reference.reset();
  m_inputs.reset();
  if (m_stream) cudaStreamDestroy(m_stream);
}

std::string harness::baseline_description() const {
  // One line for messages; the full description (cuDNN appends its plan JSON) stays in the environment.
  std::string d = m_reference ? m_reference->description() : "";
  if (auto cut = d.find(", plan {"); cut != std::string::npos) d = d.substr(0, cut) + ")";
  return d.size() > 240 ? d.substr(0, 237) + "..." : d;
}

double harness::run_reference(tensor_set& set, bool timed) {
  std::vector<device_tensor> outs;
  for (std::size_t i = 0; i < set.outputs.size(); ++i)
    outs.push_back({set.reference_outputs[i]->data, set.outputs[i]->type(), set.outputs[i]->shape()});
  if (!timed) {
    m_reference->run(set.input_views(), outs, m_stream);
    PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
    return 0;
  }
  m_flusher->flush(m_stream);
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
  if (m_tracer) {
    uint64_t t0 = m_tracer->now();
    m_reference->run(set.input_views(), outs, m_stream);
    PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
    uint64_t t1 = m_tracer->now();
    auto records = m_tracer->drain();
    // The window alone, without the correlation ids the runner adds (its callbacks see the call's
    // launches; the harness subscribes to none): a record placed outside [t0, t1] would show as a
    // reference with fewer records than before. None has: 53,848 timed reference calls in
    // bench/results/h100 (scanned in session 11) all had their usual record count, none 0 ms.
    auto span = activity_tracer::span_of(records, t0, t1);
    // Fewer records than this reference has made before: CUPTI delivers some after the
    // synchronisation returns (the runner waits for them the same way: polled, up to 4 ms). Without
    // this an H100's GQA decode reference was now and then measured as its 2 µs prepare kernel alone.
    for (int waited_us = 0; waited_us < 4000 && span.records < m_reference_records_seen; waited_us += 250) {
      ::usleep(250);
      auto late = m_tracer->drain();
      records.insert(records.end(), late.begin(), late.end());
      span = activity_tracer::span_of(records, t0, t1);
    }
    m_reference_records_seen = std::max(m_reference_records_seen, span.records);
    m_reference_records = span.records;
    m_reference_busy_ms = static_cast<double>(span.busy_ns) * 1e-6;
    return span.ms();
  }
  cudaEvent_t e0, e1;
  PTXB_CUDA_CALL(cudaEventCreate(&e0));
  PTXB_CUDA_CALL(cudaEventCreate(&e1));
  PTXB_CUDA_CALL(cudaEventRecord(e0, m_stream));
  m_reference->run(set.input_views(), outs, m_stream);
  PTXB_CUDA_CALL(cudaEventRecord(e1, m_stream));
  PTXB_CUDA_CALL(cudaEventSynchronize(e1));
  float ms = 0;
  PTXB_CUDA_CALL(cudaEventElapsedTime(&ms, e0, e1));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return ms;
}

void harness::arm_and_poison(tensor_set& set) {
  for (auto& b : set.inputs) b->arm_guards(m_stream);
  for (auto& b : set.outputs) {
    b->arm_guards(m_stream);
    b->poison(m_stream);
  }
}

void harness::prepare_outputs(tensor_set& set) {
  arm_and_poison(set);
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
}

std::vector<uint64_t> harness::prepare_call(tensor_set& set, bool flush_l2) {
  m_checks->clear();
  arm_and_poison(set);
  std::vector<std::size_t> slots;
  for (const auto& b : set.inputs) slots.push_back(m_checks->checksum(b->data(), b->bytes()));
  if (flush_l2) m_flusher->flush(m_stream);
  m_checks->collect();
  std::vector<uint64_t> sums;
  for (auto slot : slots) sums.push_back(m_checks->checksum_result(slot));
  return sums;
}

std::string harness::check_call_hygiene(runner_client& runner, tensor_set& set, const std::vector<uint64_t>& sums) {
  auto libs = runner.vendor_mappings();
  if (!libs.empty())
    return fmt::format("the candidate process mapped the vendor library {} (cuBLAS, cuBLASLt and cuDNN are not allowed)",
                       libs.front());
  m_checks->clear();
  std::vector<guarded_buffer::guard_slots> output_guards, input_guards;
  std::vector<std::size_t> input_sums;
  for (const auto& b : set.outputs) output_guards.push_back(b->check_guards(*m_checks));
  for (const auto& b : set.inputs) input_guards.push_back(b->check_guards(*m_checks));
  for (const auto& b : set.inputs) input_sums.push_back(m_checks->checksum(b->data(), b->bytes()));
  m_checks->collect();
  for (std::size_t i = 0; i < set.outputs.size(); ++i)
    if (auto g = set.outputs[i]->guard_damage(*m_checks, output_guards[i]); !g.empty()) return "out-of-bounds write: " + g;
  for (std::size_t i = 0; i < set.inputs.size(); ++i)
    if (auto g = set.inputs[i]->guard_damage(*m_checks, input_guards[i]); !g.empty()) return "out-of-bounds write: " + g;
  for (std::size_t i = 0; i < set.inputs.size(); ++i)
    if (m_checks->checksum_result(input_sums[i]) != sums.at(i))
      return fmt::format("the candidate modified its input {} (inputs must not be written)", set.inputs[i]->name());
  return "";
}

std::vector<compare_stats> harness::compare_outputs(const tensor_set& set, const std::vector<const void*>& from,
                                                    double atol, double rtol) {
  m_checks->clear();
  std::vector<std::size_t> slots;
  for (std::size_t o = 0; o < set.outputs.size(); ++o) {
    const auto& b = set.outputs[o];
    slots.push_back(m_checks->compare(from.empty() ? b->data() : from.at(o), set.reference_outputs[o]->data, b->type(),
                                      b->numel(), atol, rtol, m_rule));
  }
  m_checks->collect();
  std::vector<compare_stats> out;
  for (auto slot : slots) out.push_back(m_checks->compare_result(slot));
  return out;
}

runner_launch harness::launch_for(const job_candidate& c, const std::string& mode, bool timing) const {
  runner_launch l;
  l.runner = m_job.runner;
  if (c.language == "triton") {
    // Only the capture runs candidate Python (stage_triton_plan.cc): the same protocol over the same
    // socket; the runner is python3 running the bootstrap, which loads the helper library, confines
    // itself and then imports kernel.py (src/gpu/runner_py).
    if (!m_job.triton) throw std::runtime_error("a Triton candidate, but the harness job names no Triton runtime");
    l.interpreter = {m_job.triton->python.string(), "-I", "-B"};
    l.runner = m_job.triton->runner;
    l.first_prepare_extra_s = m_job.options.jit_timeout_s;
    l.startup_timeout_s = 300;  // importing torch and Triton, building Triton's driver module
    l.setup_extra = {{"language", "triton"},
                     {"helper", m_job.triton->helper.string()},
                     {"kernel_cache", "triton-cache"}};
  } else if (c.language == "plan") {
    // A Triton candidate replayed: the C++ runner loads the verified plan instead of a shared object.
    l.setup_extra = {{"plan", c.shared_object.string()}};
  }
  l.work_dir = work_dir_for(mode);
  l.shared_object = c.shared_object;
  l.symbol = c.symbol;
  l.mode = mode;
  l.timing = timing;
  l.device = m_device;
  l.sandbox = m_job.options.sandbox;
  l.shared_memory_sync = m_job.options.timing_channel != "socket";
  return l;
}

std::string harness::tampering(const runner_client& runner, const call_result& r) {
  auto finding = measure::judge_call_audit(runner.audits(), r.audit);
  return finding ? *finding : "";
}

void harness::snapshot_outputs(tensor_set& set) {
  if (m_snapshot.size() != set.outputs.size()) {
    m_snapshot.clear();
    for (const auto& o : set.outputs) m_snapshot.push_back(std::make_unique<device_allocation>(o->bytes()));
  }
  std::vector<std::size_t> sizes;
  for (const auto& o : set.outputs) sizes.push_back(o->bytes());
  for (const auto& c : snapshot_plan(sizes, k_snapshot_chunks_per_output, m_snapshot_rng())) {
    auto* from = static_cast<const char*>(set.outputs[c.output]->data()) + c.offset;
    auto* to = static_cast<char*>(m_snapshot[c.output]->data) + c.offset;
    PTXB_CUDA_CALL(cudaMemcpyAsync(to, from, c.bytes, cudaMemcpyDeviceToDevice, m_stream));
  }
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
}

std::string harness::work_dir_for(const std::string& what) const {
  return (m_job.work_dir / fmt::format("c{}-{}", m_candidate_index, what)).string();
}

stage_part harness::correctness_part(const job_candidate& c, runner_client& runner, sanitize_run& s) {
  stage_part part;
  auto& out = part.result;
  auto shared = lease("correctness", false, out.measurement);
  runner_launch l = launch_for(c, "plain", true);
  // Sanitize runs meanwhile on another thread and stops this runner when it decides (stage_order.h:
  // its decision comes first). Either it sees the runner forked, or this sees its flag.
  s.correctness_runner.store(&runner);
  auto spawned = runner.spawn(l);
  if (!spawned) throw std::runtime_error("starting the candidate runner: " + spawned.err().message);
  if (s.stop_correctness.load()) runner.abort();
  auto started = runner.finish_start(l);
  if (!started) throw std::runtime_error("starting the candidate runner: " + started.err().message);
  out.sandbox["plain"] = sandbox_record(*started, m_job.options.sandbox);
  if (started->outcome != call_outcome::ok) {
    auto f = classify_call_failure(*started, "loading the candidate");
    out.decided = {f.outcome, stage_id::correctness, f.message, runner.output()};
    out.stages.push_back({stage_id::correctness, stage_outcome::failed, 0, f.message, nullptr});
    part.go_on = false;
    return part;
  }
  part.go_on = stage_correctness(c, runner, out);
  if (part.go_on) runner.freeze();
  return part;
}

// The GPU lease (device_lease.h) follows what each step does with the GPU: sanitize, the runner's
// start-up and correctness hold it shared; the dynamic check's profiled call and timing hold it
// exclusively. From correctness to the end of timing the runner is frozen, so nothing of this
// candidate's runs on the GPU while another harness measures.
//
// Stages that measure nothing overlap: sanitize (its own runner under compute-sanitizer) runs beside
// the runner's start-up and correctness, and the dynamic check's runner starts under Nsight Compute
// beside them (before correctness on a guess, or once it passed). They are judged in the order they always
// were (stage_order.h): sanitize's failure decides before correctness's, a failure stops everything
// after it, and a speculatively started runner whose turn never comes is stopped unseen.
result<gpu_stage_result> harness::evaluate(const job_candidate& candidate) {
  ++m_candidate_index;
  gpu_stage_result out;
  out.id = candidate.id;
  out.measurement.device = m_lease_device;
  out.measurement.lease_dir = m_lease_dir.string();
  try {
    // A Triton candidate's Python runs in its capture only; from here on its launch plan is replayed.
    job_candidate c = candidate;
    if (candidate.language == "triton" && !stage_triton_plan(candidate, out, c)) return out;
    // Destroyed in reverse: the sanitize thread (which may stop `runner`) and the speculative start
    // end before the runners they use.
    runner_client runner;
    dynamic_profile profile;
    sanitize_run sanitize;
    sanitize_begin(c, sanitize);
    // The dynamic check's runner needs the launches per call (its --launch-skip/-count), which
    // correctness counts. Its start under Nsight Compute is the longest step before timing (1.4 s
    // of a cached GEMM evaluation's 3.6 s on an H100: bench/results/h100/session8-870f055/speed-p3),
    // so a candidate with one kernel has it started now, on the guess of one launch per call;
    // should correctness count otherwise, it is stopped and started again with the count. Its
    // profiled calls wait until sanitize and correctness are judged.
    if (int guess = dynamic_early_guess(c); guess > 0) dynamic_prestart(c, profile, guess);
    stage_part correctness = correctness_part(c, runner, sanitize);
    if (correctness.go_on && !sanitize.stop_correctness.load()) {
      if (profile.runner && profile.per_call != m_launches_per_call) {
        int guessed = profile.per_call;
        dynamic_abandon(out, profile);
        profile.details["early_start"] =
            fmt::format("restarted: {} launch(es) per call, not {} as guessed", m_launches_per_call, guessed);
      } else if (profile.runner) {
        profile.details["early_start"] = "before correctness (its launches per call as guessed)";
      }
      if (!profile.runner) dynamic_prestart(c, profile, m_launches_per_call);
    }
    std::vector<stage_part> parts;
    parts.push_back(sanitize_end(c, sanitize));
    parts.push_back(std::move(correctness));
    if (!judge_in_order(out, std::move(parts))) {
      dynamic_abandon(out, profile);
      runner.stop();
      return out;
    }
    // The dynamic check's profiled calls come before timing, so that ncu's writing of its report and
    // reading it back (CPU only) overlap the timing stage instead of preceding or following it:
    // timing starts once the profiled runner process has ended (stage_dynamic.cc). Its record still
    // follows timing's, and a timing failure decides the verdict as before (the profile is then not
    // judged).
    if (!stage_dynamic_profile(c, out, profile)) {
      runner.stop();
      return out;
    }
    bool timed = false;
    {
      auto exclusive = lease("timing", true, out.measurement);
      timed = stage_timing(runner, out);
    }
    runner.stop();
    if (!timed) return out;
    stage_dynamic_finish(c, out, profile);
    out.decided = {eval_outcome::passed, std::nullopt,
                   fmt::format("correct; speedup {:.3f}x vs {}", out.timing->speedup, baseline_description()), ""};
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    return make_error(e.what());  // the session says "the harness failed: ..."
  }
  return out;
}

}  // namespace ptxbench::gpu
