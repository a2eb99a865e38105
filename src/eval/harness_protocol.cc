#include "eval/harness_protocol.h"

#include <fmt/format.h>

namespace ptxbench::eval {
namespace {

ordered_json options_json(const gpu_options& o) {
  return {{"device", o.device},
          {"warmup", o.warmup},
          {"iterations", o.iterations},
          {"input_sets", o.input_sets},
          {"rule", o.rule},
          {"sanitize", o.sanitize},
          {"sanitizer_tools", o.sanitizer_tools},
          {"dynamic_check", o.dynamic_check},
          {"call_timeout_s", o.call_timeout_s},
          {"sanitize_timeout_s", o.sanitize_timeout_s},
          {"profile_timeout_s", o.profile_timeout_s},
          {"seed", o.seed}};
}

gpu_options options_from(const ordered_json& j) {
  gpu_options o;
  o.device = j.value("device", 0);
  o.warmup = j.value("warmup", 10);
  o.iterations = j.value("iterations", 50);
  o.input_sets = j.value("input_sets", 0);
  o.rule = j.value("rule", "allclose");
  o.sanitize = j.value("sanitize", true);
  o.sanitizer_tools = j.value("sanitizer_tools", "memcheck");
  o.dynamic_check = j.value("dynamic_check", true);
  o.call_timeout_s = j.value("call_timeout_s", 30.0);
  o.sanitize_timeout_s = j.value("sanitize_timeout_s", 300.0);
  o.profile_timeout_s = j.value("profile_timeout_s", 600.0);
  o.seed = j.value("seed", uint64_t{0});
  return o;
}

}  // namespace

ordered_json to_json(const harness_job& job) {
  ordered_json cands = ordered_json::array();
  for (const auto& c : job.candidates)
    cands.push_back({{"id", c.id},
                     {"shared_object", c.shared_object.string()},
                     {"symbol", c.symbol},
                     {"required_families", c.required_families},
                     {"static_present", c.static_present},
                     {"static_known", c.static_known}});
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
                   {"options", options_json(job.options)},
                   {"runner", job.runner.string()},
                   {"cuda_root", job.cuda_root.string()},
                   {"cache_dir", job.cache_dir.string()},
                   {"work_dir", job.work_dir.string()},
                   {"seed", job.seed}};
  if (job.physical_floor) j["physical_floor"] = to_json(*job.physical_floor);
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
      job_candidate jc;
      jc.id = c.at("id").get<std::string>();
      jc.shared_object = c.at("shared_object").get<std::string>();
      jc.symbol = c.value("symbol", "run");
      jc.required_families = c.value("required_families", std::vector<std::string>{});
      jc.static_present = c.value("static_present", true);
      jc.static_known = c.value("static_known", false);
      job.candidates.push_back(std::move(jc));
    }
    job.options = options_from(j.value("options", ordered_json::object()));
    job.runner = j.at("runner").get<std::string>();
    job.cuda_root = j.value("cuda_root", "");
    job.cache_dir = j.value("cache_dir", "");
    job.work_dir = j.at("work_dir").get<std::string>();
    job.seed = j.value("seed", uint64_t{0});
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

ordered_json to_json(const candidate_outcome& c) {
  // Reuse the verdict's serialisation for the shared parts, so both sides agree by construction.
  verdict v;
  v.status = c.status;
  v.outcome = c.outcome;
  v.deciding_stage = c.deciding_stage;
  v.message = c.message;
  v.log = c.log;
  v.stages = c.stages;
  v.correctness = c.correctness;
  v.timing = c.timing;
  v.targets.dynamic_counts = c.dynamic_counts;
  v.targets.dynamic_per_kernel = c.dynamic_per_kernel;
  v.targets.dynamic_method = c.dynamic_method;
  ordered_json j = to_json(v);
  j["id"] = c.id;
  j["dynamic_error"] = c.dynamic_error;
  j["dynamic_ran"] = c.dynamic_ran;
  return j;
}

void merge_into(const candidate_outcome& c, verdict& v) {
  for (const auto& s : c.stages) v.stages.push_back(s);
  v.status = c.status;
  v.outcome = c.outcome;
  v.deciding_stage = c.deciding_stage;
  v.message = c.message;
  if (!c.log.empty()) v.log = c.log;
  v.correctness = c.correctness;
  v.timing = c.timing;
  v.targets.dynamic_counts = c.dynamic_counts;
  v.targets.dynamic_per_kernel = c.dynamic_per_kernel;
  v.targets.dynamic_method = c.dynamic_method;
}

result<candidate_outcome> candidate_outcome_from_json(const ordered_json& j) {
  auto v = verdict_from_json(j);
  if (!v) return v.err().with_context("harness result");
  candidate_outcome c;
  c.id = j.value("id", "");
  c.status = v->status;
  c.outcome = v->outcome;
  c.deciding_stage = v->deciding_stage;
  c.message = v->message;
  c.log = v->log;
  c.stages = v->stages;
  c.correctness = v->correctness;
  c.timing = v->timing;
  c.dynamic_counts = v->targets.dynamic_counts;
  c.dynamic_per_kernel = v->targets.dynamic_per_kernel;
  c.dynamic_method = v->targets.dynamic_method;
  c.dynamic_error = j.value("dynamic_error", "");
  c.dynamic_ran = j.value("dynamic_ran", false);
  return c;
}

}  // namespace ptxbench::eval
