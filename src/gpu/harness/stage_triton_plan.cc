// A Triton candidate's way to the GPU stages (docs/trusted-timing.md, "Triton candidates"): its
// Python runs only here, in a sandboxed capture process, and the rest of the evaluation replays a
// launch plan in the C++ runner, with no candidate Python in any process that is checked or
// measured. In order:
//   1. capture: the Triton runner imports kernel.py, calls run() once for real (Triton compiles
//      there), then twice under stream capture on two different buffer sets of the harness's; it
//      writes what the driver recorded and what Triton compiled (untrusted data);
//   2. plan: each capture becomes a launch plan (gpu/harness/triton_plan.h: only kernels Triton
//      compiled, pointers only into the call's tensors, no scratch memory) and the two plans must be
//      the same;
//   3. provenance: the trusted recompile compiles every kernel of the plan again from kernel.py
//      (never importing it, in its own sandbox) and must produce the same cubin byte for byte, whose
//      entry function is the plan kernel's name;
//   4. the plan and its cubins are written into the harness's work folder, where the C++ runner
//      loads them (gpu/runner/plan_launcher.h).
// A candidate failure decides at the stage whose question it answers: Triton cannot compile the
// kernel → build (compile_error); run() raises, crashes, hangs or breaks the capture → correctness
// (like any failing call); a plan that cannot be replayed, changes with the inputs or does not
// recompile to the same binaries → link_gate (rejected, the provenance gate of a Triton candidate).
#include <optional>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "gpu/harness/harness.h"
#include "gpu/harness/runner_sandbox.h"
#include "gpu/harness/triton_plan.h"
#include "gpu/harness/triton_recompile.h"
#include "verdict/stage_timer.h"

namespace ptxbench::gpu {
namespace fs = std::filesystem;

bool harness::stage_triton_plan(const job_candidate& c, gpu_stage_result& out, job_candidate& replay) {
  stage_timer timer(stage_id::link_gate);
  ordered_json details = ordered_json::object();
  auto decide = [&](stage_id stage, eval_outcome outcome, const std::string& message, const std::string& log) {
    out.decided = {outcome, stage, message, log};
    if (stage == stage_id::link_gate) {
      out.stages.push_back(timer.finish(stage_outcome::failed, message, details));
    } else {
      // The capture's calls are the candidate's first calls: their failures are the stage's that
      // asks the same question of a CUDA candidate's calls.
      out.stages.push_back({stage, stage_outcome::failed, timer.seconds(), message, nullptr});
    }
    return false;
  };
  if (!m_job.triton) throw std::runtime_error("a Triton candidate, but the harness job names no Triton runtime");

  // 1. The capture, in the candidate's own sandboxed process.
  std::vector<triton_capture> captures;
  fs::path plan_dir = work_dir_for("triton-plan");
  std::error_code ec;
  fs::create_directories(plan_dir, ec);
  std::map<fs::path, std::string> cubin_sha256;  // captured path → hash
  std::map<fs::path, fs::path> kept;              // captured path → copy in plan_dir
  {
    // The GPU's shared lease from the runner's setup on (its CUDA context, Triton's start-up, the
    // candidate's import and calls, the harness's inputs) until the runner has stopped — not during
    // Python's start-up before "hello", which touches no GPU (runner_launch::before_setup).
    std::optional<stage_lease> shared;
    runner_client runner;
    runner_launch l = launch_for(c, "capture", false);
    l.before_setup = [&] { shared.emplace(lease("capture", false, out.measurement)); };
    l.shared_memory_sync = false;  // nothing is timed here: go and done travel on the socket
    auto started = runner.start(l);
    if (!started) throw std::runtime_error("starting the Triton capture: " + started.err().message);
    out.sandbox["capture"] = sandbox_record(*started, m_job.options.sandbox);
    if (started->outcome != call_outcome::ok) {
      auto f = classify_call_failure(*started, "loading the candidate");
      std::string log = runner.output();
      runner.stop();
      return decide(stage_id::correctness, f.outcome, f.message, log);
    }
    ensure_sets(2);  // device memory: under the lease, like all of the harness's GPU work
    for (int i = 0; i < 2; ++i) {
      auto& set = m_sets[static_cast<std::size_t>(i)];
      m_inputs->generate(set.input_ptrs(), m_job.seed + 900 + static_cast<uint64_t>(i), m_stream);
      prepare_outputs(set);
      auto r = runner.call(set.describe(), m_job.options.call_timeout_s);
      if (r.outcome != call_outcome::ok) {
        auto f = classify_call_failure(r, i == 0 ? "the first call (Triton compiles there)" : "the second call");
        std::string log = runner.output();
        runner.stop();
        // A call that ran but whose graph holds a launch the plan cannot replay (cuBLAS reached by
        // reflection launches with 'extra' parameters): the same refusal as a plan that fails below.
        // The candidate can only lose by claiming it.
        if (r.outcome == call_outcome::failed && r.error_kind == candidate_error::unreplayable)
          return decide(stage_id::link_gate, f.outcome, f.message, log);
        return decide(r.error_kind == candidate_error::compile ? stage_id::build : stage_id::correctness, f.outcome,
                      f.message, log);
      }
      // The capture file and its cubins live in the runner's scratch, removed when it stops.
      auto text = read_text_file(runner.scratch() / fmt::format("capture-{}.json", i + 1), 32u << 20);
      if (!text) {
        std::string log = runner.output();
        runner.stop();
        return decide(stage_id::link_gate, eval_outcome::rejected, "the capture wrote no record of the call: " + text.err().message, log);
      }
      auto doc = parse_json(*text, "capture");
      auto cap = doc ? triton_capture_from_json(*doc, runner.scratch()) : result<triton_capture>(doc.err());
      if (!cap) {
        std::string log = runner.output();
        runner.stop();
        return decide(stage_id::link_gate, eval_outcome::rejected, "the capture is not usable: " + cap.err().message, log);
      }
      for (const auto& k : cap->kernels) {
        if (cubin_sha256.count(k.cubin)) continue;
        auto bytes = read_file(k.cubin, 64u << 20);
        if (!bytes) continue;  // a kernel the plan does not launch may be missing; one it does is refused below
        fs::path copy = plan_dir / fmt::format("{:03d}-{}.cubin", kept.size(), k.jit);
        if (auto st = write_file_atomic(copy, *bytes); !st) throw std::runtime_error(st.err().message);
        cubin_sha256[k.cubin] = sha256_hex(*bytes);
        kept[k.cubin] = copy;
      }
      captures.push_back(std::move(*cap));
    }
    details["capture_log"] = runner.output(8u << 10);
    runner.stop();
  }

  // 2. The plan, the same for both captures.
  std::vector<uint64_t> tensor_bytes;
  for (const auto& t : m_sets[0].describe()) tensor_bytes.push_back(t.bytes);
  std::vector<launch_plan> plans;
  for (const auto& cap : captures) {
    auto p = plan_from_capture(cap, tensor_bytes, cubin_sha256);
    if (!p) return decide(stage_id::link_gate, eval_outcome::rejected, unreplayable_plan(p.err().message), "");
    plans.push_back(std::move(*p));
  }
  if (auto diff = plan_difference(plans[0], plans[1]); !diff.empty())
    return decide(stage_id::link_gate, eval_outcome::rejected,
                  "run() did different GPU work on two calls with different inputs (" + diff +
                      "): the plan must not depend on the inputs' values or on which call it is",
                  "");

  // 3. Provenance: every kernel recompiled from kernel.py, byte for byte.
  recompile_request rq;
  rq.python = m_job.triton->python;
  rq.script = m_job.triton->recompiler;
  rq.source = c.shared_object;
  rq.cache_dir = m_job.cache_dir;
  rq.helper = m_job.triton->helper;
  rq.sandbox = m_job.options.sandbox;  // confined like the capture (docs/sandbox.md), unless --no-sandbox
  auto wanted = kernels_to_recompile(captures[0], plans[0], cubin_sha256);
  std::map<std::string, std::string> jit_of;  // captured cubin hash → its @triton.jit function
  for (const auto* k : wanted) {
    rq.kernels.push_back({{"id", cubin_sha256.at(k->cubin)}, {"jit", k->jit},
                          {"specialization_data", k->hints.value("specialization_data", std::string())}});
    jit_of[cubin_sha256.at(k->cubin)] = k->jit;
  }
  auto recompiled = recompile_triton_kernels(rq);
  if (!recompiled) throw std::runtime_error(recompiled.err().message);
  details["recompile"] = {{"seconds", recompiled->seconds}, {"cache_hit", recompiled->cache_hit},
                          {"triton", recompiled->triton_version}};
  out.sandbox["recompile"] = recompiled->sandbox;
  if (!recompiled->source_problem.empty())
    return decide(stage_id::link_gate, eval_outcome::rejected,
                  "kernel provenance: " + recompiled->source_problem, "");
  // Each plan kernel: the same cubin, byte for byte, and the entry the replay will look up by name.
  auto provenance = check_provenance(plans[0], recompiled->kernels, jit_of);
  if (!provenance) return decide(stage_id::link_gate, eval_outcome::rejected, provenance.err().message, "");
  details["kernels"] = *provenance;

  // 4. The plan the runner replays, with the harness's copies of the verified cubins.
  launch_plan plan = plans[0];
  for (auto& k : plan.kernels) k.cubin = kept.at(k.cubin);
  fs::path plan_file = plan_dir / "plan.json";
  if (auto st = write_file_atomic(plan_file, to_json(plan).dump(1)); !st) throw std::runtime_error(st.err().message);
  for (const auto& [captured, copy] : kept) {
    bool used = std::any_of(plan.kernels.begin(), plan.kernels.end(), [&](const plan_kernel& k) { return k.cubin == copy; });
    if (!used) continue;
    out.jit_cubins.push_back(copy);
  }
  for (const auto& k : plan.kernels)
    if (std::find(out.jit_kernels.begin(), out.jit_kernels.end(), k.name) == out.jit_kernels.end()) out.jit_kernels.push_back(k.name);
  replay = c;
  replay.language = "plan";
  replay.shared_object = plan_file;
  replay.kernels = out.jit_kernels;  // only the plan's kernels count in the dynamic check
  details["plan"] = plan_file.string();
  details["steps"] = plan.steps.size();
  out.stages.push_back(timer.finish(
      stage_outcome::passed,
      fmt::format("{} kernel(s), {} GPU operation(s) per call, the same on two calls; each kernel recompiled from kernel.py "
                  "to the same cubin{}; replayed without Python",
                  plan.kernels.size(), plan.steps.size(), recompiled->cache_hit ? " (cached)" : ""),
      details));
  return true;
}

}  // namespace ptxbench::gpu
