#include "verdict/harness_protocol.h"

#include <fmt/format.h>

#include "verdict/verdict_json.h"

namespace ptxbench {
ordered_json to_json(const gpu_options& o) {
  return {{"device", o.device},
          {"warmup", o.warmup},
          {"iterations", o.iterations},
          {"min_pairs", o.min_pairs},
          {"timing_ci", o.timing_ci},
          {"timing_cap_s", o.timing_cap_s},
          {"input_sets", o.input_sets},
          {"rule", o.rule},
          {"sanitize", o.sanitize},
          {"sandbox", o.sandbox},
          {"sanitizer_tools", o.sanitizer_tools},
          {"dynamic_check", o.dynamic_check},
          {"call_timeout_s", o.call_timeout_s},
          {"sanitize_timeout_s", o.sanitize_timeout_s},
          {"profile_timeout_s", o.profile_timeout_s},
          {"jit_timeout_s", o.jit_timeout_s},
          {"seed", o.seed},
          {"timing_channel", o.timing_channel},
          {"tamper_check", o.tamper_check},
          {"lease_dir", o.lease_dir.string()},
          {"lease_timeout_s", o.lease_timeout_s}};
}

namespace {

gpu_options options_from(const ordered_json& j) {
  // A key the job leaves out keeps gpu_options' own default (one place for them: gpu_options.h).
  gpu_options o;
  o.device = j.value("device", o.device);
  o.warmup = j.value("warmup", o.warmup);
  o.iterations = j.value("iterations", o.iterations);
  o.min_pairs = j.value("min_pairs", o.min_pairs);
  o.timing_ci = j.value("timing_ci", o.timing_ci);
  o.timing_cap_s = j.value("timing_cap_s", o.timing_cap_s);
  o.input_sets = j.value("input_sets", o.input_sets);
  o.rule = j.value("rule", o.rule);
  o.sanitize = j.value("sanitize", o.sanitize);
  o.sandbox = j.value("sandbox", o.sandbox);
  o.sanitizer_tools = j.value("sanitizer_tools", o.sanitizer_tools);
  o.dynamic_check = j.value("dynamic_check", o.dynamic_check);
  o.call_timeout_s = j.value("call_timeout_s", o.call_timeout_s);
  o.sanitize_timeout_s = j.value("sanitize_timeout_s", o.sanitize_timeout_s);
  o.profile_timeout_s = j.value("profile_timeout_s", o.profile_timeout_s);
  o.jit_timeout_s = j.value("jit_timeout_s", o.jit_timeout_s);
  o.seed = j.value("seed", o.seed);
  o.timing_channel = j.value("timing_channel", o.timing_channel);
  o.tamper_check = j.value("tamper_check", o.tamper_check);
  o.lease_dir = j.value("lease_dir", o.lease_dir.string());
  o.lease_timeout_s = j.value("lease_timeout_s", o.lease_timeout_s);
  return o;
}

}  // namespace

ordered_json to_json(const floor_inputs& in) {
  return {{"target", in.target},
          {"flops", in.work.flops},
          {"bytes_read", in.work.bytes_read},
          {"bytes_written", in.work.bytes_written},
          {"peak_flops_per_s", in.peaks.bf16_dense_flops_per_s},
          {"peak_bytes_per_s", in.peaks.memory_bytes_per_s}};
}

result<floor_inputs> floor_inputs_from_json(const ordered_json& j) {
  json_errors errs;
  const std::string path = "physical_floor";
  if (!expect_object(j, path, errs)) return errs.to_error();
  floor_inputs in;
  in.target = get_string(j, "target", path, errs).value_or("");
  in.work.flops = get_number(j, "flops", path, errs).value_or(0);
  in.work.bytes_read = get_number(j, "bytes_read", path, errs).value_or(0);
  in.work.bytes_written = get_number(j, "bytes_written", path, errs).value_or(0);
  in.peaks.bf16_dense_flops_per_s = get_number(j, "peak_flops_per_s", path, errs).value_or(0);
  in.peaks.memory_bytes_per_s = get_number(j, "peak_bytes_per_s", path, errs).value_or(0);
  if (!errs.empty()) return errs.to_error();
  return in;
}

ordered_json to_json(const job_candidate& c) {
  return {{"id", c.id},
          {"language", c.language},
          {"shared_object", c.shared_object.string()},
          {"symbol", c.symbol},
          {"required_families", c.required_families},
          {"static_present", c.static_present},
          {"static_known", c.static_known},
          {"kernels", c.kernels}};
}

result<job_candidate> job_candidate_from_json(const ordered_json& c) {
  try {
    job_candidate jc;
    jc.id = c.at("id").get<std::string>();
    jc.language = c.value("language", "cuda");
    if (jc.language != "cuda" && jc.language != "triton")
      return make_error(fmt::format("harness job: candidate {} has unknown language '{}'", jc.id, jc.language));
    jc.shared_object = c.at("shared_object").get<std::string>();
    jc.symbol = c.value("symbol", "run");
    jc.required_families = c.value("required_families", std::vector<std::string>{});
    jc.static_present = c.value("static_present", true);
    jc.static_known = c.value("static_known", false);
    jc.kernels = c.value("kernels", std::vector<std::string>{});
    return jc;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed harness candidate: ") + e.what());
  }
}

ordered_json to_json(const harness_job& job) {
  ordered_json cands = ordered_json::array();
  for (const auto& c : job.candidates) cands.push_back(to_json(c));
  ordered_json j = {{"format", "ptxbench.harness-job/1"},
                   {"task",
                    {{"name", job.task_name},
                     {"definition", to_json(job.def)},
                     {"workload", to_json(job.wl)},
                     {"baseline", job.baseline},
                     {"baseline_options", job.baseline_options},
                     {"tolerance", {{"atol", job.tol.atol}, {"rtol", job.tol.rtol}}},
                     {"correctness_trials", job.correctness_trials}}},
                   {"candidates", cands},
                   {"options", to_json(job.options)},
                   {"runner", job.runner.string()},
                   {"cuda_root", job.cuda_root.string()},
                   {"cache_dir", job.cache_dir.string()},
                   {"work_dir", job.work_dir.string()},
                   {"seed", job.seed}};
  if (job.physical_floor) j["physical_floor"] = to_json(*job.physical_floor);
  if (job.triton)
    j["triton"] = {{"python", job.triton->python.string()},
                   {"runner", job.triton->runner.string()},
                   {"helper", job.triton->helper.string()},
                   {"recompiler", job.triton->recompiler.string()}};
  return j;
}

result<harness_job> harness_job_from_json(const ordered_json& j) {
  if (j.value("format", "") != "ptxbench.harness-job/1") return make_error("not a ptxbench harness job");
  try {
    harness_job job;
    const auto& t = j.at("task");
    job.task_name = t.at("name").get<std::string>();
    auto d = definition_from_json(t.at("definition"), "job.task.definition");
    if (!d) return d.err();
    job.def = *d;
    auto w = workload_from_json(t.at("workload"), "job.task.workload");
    if (!w) return w.err();
    job.wl = *w;
    job.baseline = t.at("baseline").get<std::string>();
    job.baseline_options = t.value("baseline_options", ordered_json::object());
    job.tol.atol = t.at("tolerance").at("atol").get<double>();
    job.tol.rtol = t.at("tolerance").at("rtol").get<double>();
    job.correctness_trials = t.value("correctness_trials", 3);
    for (const auto& c : j.at("candidates")) {
      auto jc = job_candidate_from_json(c);
      if (!jc) return jc.err();
      job.candidates.push_back(std::move(*jc));
    }
    job.options = options_from(j.value("options", ordered_json::object()));
    job.runner = j.at("runner").get<std::string>();
    job.cuda_root = j.value("cuda_root", "");
    job.cache_dir = j.value("cache_dir", "");
    job.work_dir = j.at("work_dir").get<std::string>();
    job.seed = j.value("seed", uint64_t{0});
    if (j.contains("triton") && !j["triton"].is_null()) {
      const auto& tr = j["triton"];
      job.triton = triton_runtime{tr.at("python").get<std::string>(), tr.at("runner").get<std::string>(),
                                  tr.at("helper").get<std::string>(), tr.value("recompiler", std::string())};
    }
    if (j.contains("physical_floor")) {
      auto floor = floor_inputs_from_json(j["physical_floor"]);
      if (!floor) return floor.err();
      job.physical_floor = *floor;
    }
    return job;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed harness job: ") + e.what());
  }
}

ordered_json to_json(const gpu_stage_result& r) {
  ordered_json j = {{"format", "ptxbench.gpu-stage-result/1"}, {"id", r.id}};
  write_decision(r.decided, j);
  j["stages"] = to_json(r.stages);
  j["correctness"] = r.correctness ? to_json(*r.correctness) : ordered_json(nullptr);
  j["timing"] = r.timing ? to_json(*r.timing) : ordered_json(nullptr);
  write_runtime_counts(r.dynamic, j);
  j["measurement"] = to_json(r.measurement);
  j["sandbox"] = r.sandbox;
  if (!r.jit_cubins.empty() || !r.jit_kernels.empty()) {
    ordered_json cubins = ordered_json::array();
    for (const auto& c : r.jit_cubins) cubins.push_back(c.string());
    j["jit_cubins"] = cubins;
    j["jit_kernels"] = r.jit_kernels;
  }
  return j;
}

result<gpu_stage_result> gpu_stage_result_from_json(const ordered_json& j) {
  if (!j.is_object() || j.value("format", "") != "ptxbench.gpu-stage-result/1")
    return make_error("harness result: not a ptxbench GPU stage result");
  try {
    gpu_stage_result r;
    r.id = j.value("id", "");
    auto d = read_decision(j);
    if (!d) return d.err().with_context("harness result");
    r.decided = std::move(*d);
    r.stages = stages_from_json(j.value("stages", ordered_json::array()));
    if (j.contains("correctness") && j["correctness"].is_object()) r.correctness = correctness_from_json(j["correctness"]);
    if (j.contains("timing") && j["timing"].is_object()) r.timing = timing_from_json(j["timing"]);
    r.dynamic = read_runtime_counts(j);
    if (j.contains("measurement") && j["measurement"].is_object()) r.measurement = measurement_from_json(j["measurement"]);
    if (j.contains("sandbox") && !j["sandbox"].is_null()) {
      if (!j["sandbox"].is_object()) return make_error("harness result: sandbox must be an object");
      r.sandbox = j["sandbox"];
    }
    for (const auto& c : j.value("jit_cubins", ordered_json::array())) r.jit_cubins.emplace_back(c.get<std::string>());
    r.jit_kernels = j.value("jit_kernels", std::vector<std::string>{});
    return r;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed harness result: ") + e.what());
  }
}

void merge_into(const gpu_stage_result& r, verdict& v) {
  v.decided = r.decided;
  v.stages.insert(v.stages.end(), r.stages.begin(), r.stages.end());
  v.correctness = r.correctness;
  v.timing = r.timing;
  v.targets.dynamic = r.dynamic;
  if (!r.measurement.holds.empty()) v.measurement = r.measurement;
  if (!r.sandbox.empty()) {
    if (!v.environment.is_object()) v.environment = ordered_json::object();
    v.environment["sandbox"] = r.sandbox;
  }
}

}  // namespace ptxbench
