#include "verdict/verdict_json.h"

#include <array>
#include <limits>

#include <fmt/format.h>

namespace ptxbench {
namespace {

constexpr std::array<std::string_view, 5> k_target_names = {"executed", "not_executed", "absent_in_sass",
                                                            "profile_error", "deferred"};
constexpr std::array<std::string_view, 2> k_mode_names = {"check", "eval"};

ordered_json counts_json(const family_counts& c) {
  ordered_json j = ordered_json::object();
  for (const auto& [k, v] : c) j[k] = v;
  return j;
}

family_counts counts_from(const ordered_json& j) {
  family_counts c;
  if (j.is_object())
    for (const auto& item : j.items()) c[item.key()] = item.value().get<int64_t>();
  return c;
}

ordered_json per_kernel_json(const std::map<std::string, family_counts>& m) {
  ordered_json j = ordered_json::object();
  for (const auto& [k, c] : m) j[k] = counts_json(c);
  return j;
}

std::map<std::string, family_counts> per_kernel_from(const ordered_json& j) {
  std::map<std::string, family_counts> m;
  if (j.is_object())
    for (const auto& item : j.items()) m[item.key()] = counts_from(item.value());
  return m;
}

ordered_json coverage_json(const std::map<std::string, family_coverage>& m) {
  ordered_json j = ordered_json::object();
  for (const auto& [fam, c] : m)
    j[fam] = {{"fraction", c.fraction ? ordered_json(*c.fraction) : ordered_json(nullptr)}, {"unit", c.unit},
              {"done", c.done}, {"required", c.required}, {"reason", c.reason}};
  return j;
}

std::map<std::string, family_coverage> coverage_from(const ordered_json& j) {
  std::map<std::string, family_coverage> m;
  if (!j.is_object()) return m;
  for (const auto& item : j.items()) {
    const auto& c = item.value();
    if (!c.is_object()) continue;
    family_coverage f;
    if (c.contains("fraction") && c["fraction"].is_number()) f.fraction = c["fraction"].get<double>();
    f.unit = c.value("unit", "");
    f.done = c.value("done", 0.0);
    f.required = c.value("required", 0.0);
    f.reason = c.value("reason", "");
    m[item.key()] = std::move(f);
  }
  return m;
}

ordered_json floor_json(const physical_floor& f) {
  return {{"floor_ms", f.floor_ms},     {"compute_ms", f.compute_ms}, {"memory_ms", f.memory_ms},
          {"dram_bytes", f.dram_bytes}, {"basis", f.basis}};
}

physical_floor floor_from(const ordered_json& j) {
  physical_floor f;
  f.floor_ms = j.value("floor_ms", 0.0);
  f.compute_ms = j.value("compute_ms", 0.0);
  f.memory_ms = j.value("memory_ms", 0.0);
  f.dram_bytes = j.value("dram_bytes", 0.0);
  f.basis = j.value("basis", "");
  return f;
}

ordered_json stats_json(const latency_stats& s) {
  return {{"median_ms", s.median_ms}, {"p10_ms", s.p10_ms}, {"p90_ms", s.p90_ms},
          {"mean_ms", s.mean_ms},     {"cv", s.cv},         {"samples", s.samples}};
}

latency_stats stats_from(const ordered_json& j) {
  latency_stats s;
  s.median_ms = j.value("median_ms", 0.0);
  s.p10_ms = j.value("p10_ms", 0.0);
  s.p90_ms = j.value("p90_ms", 0.0);
  s.mean_ms = j.value("mean_ms", 0.0);
  s.cv = j.value("cv", 0.0);
  s.samples = j.value("samples", 0);
  return s;
}

double number_or_nan(const ordered_json& j, const char* key) {
  if (!j.contains(key)) return 0;
  const auto& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return 0;
}

ordered_json findings_json(const std::vector<gate_finding>& findings) {
  ordered_json a = ordered_json::array();
  for (const auto& f : findings)
    a.push_back({{"rule", f.rule}, {"file", f.file}, {"line", f.line}, {"excerpt", f.excerpt}, {"message", f.message}});
  return a;
}

ordered_json build_json(const build_summary& b) {
  ordered_json kernels = ordered_json::array();
  for (const auto& k : b.kernels)
    kernels.push_back({{"kernel", k.kernel}, {"arch", k.arch}, {"registers", k.registers}, {"barriers", k.barriers},
                       {"smem_bytes", k.smem_bytes}, {"cmem0_bytes", k.cmem0_bytes},
                       {"stack_frame_bytes", k.stack_frame_bytes}, {"spill_store_bytes", k.spill_store_bytes},
                       {"spill_load_bytes", k.spill_load_bytes}});
  return {{"attempted", b.attempted}, {"succeeded", b.succeeded}, {"cache_hit", b.cache_hit},
          {"cache_key", b.cache_key}, {"seconds", b.seconds}, {"command", b.command},
          {"nvcc_version", b.nvcc_version}, {"log", b.log}, {"errors", b.errors}, {"warnings", b.warnings},
          {"kernels", kernels}, {"artifact", b.artifact}, {"artifact_sha256", b.artifact_sha256}};
}

build_summary build_from(const ordered_json& b) {
  build_summary s;
  s.attempted = b.value("attempted", false);
  s.succeeded = b.value("succeeded", false);
  s.cache_hit = b.value("cache_hit", false);
  s.cache_key = b.value("cache_key", "");
  s.seconds = b.value("seconds", 0.0);
  s.command = b.value("command", std::vector<std::string>{});
  s.nvcc_version = b.value("nvcc_version", "");
  s.log = b.value("log", "");
  s.errors = b.value("errors", std::vector<std::string>{});
  s.warnings = b.value("warnings", std::vector<std::string>{});
  for (const auto& k : b.value("kernels", ordered_json::array()))
    s.kernels.push_back({k.value("kernel", ""), k.value("arch", ""), k.value("registers", 0), k.value("barriers", 0),
                         k.value("smem_bytes", int64_t{0}), k.value("cmem0_bytes", int64_t{0}),
                         k.value("stack_frame_bytes", int64_t{0}), k.value("spill_store_bytes", int64_t{0}),
                         k.value("spill_load_bytes", int64_t{0})});
  s.artifact = b.value("artifact", "");
  s.artifact_sha256 = b.value("artifact_sha256", "");
  return s;
}

ordered_json targets_json(const target_instructions& t) {
  ordered_json j = {{"target", t.target},
                    {"arch", t.arch},
                    {"required_families", t.required_families},
                    {"static_counts", t.static_counts ? counts_json(*t.static_counts) : ordered_json(nullptr)},
                    {"static_per_kernel", per_kernel_json(t.static_per_kernel)}};
  write_runtime_counts(t.dynamic, j);
  j["verdict"] = std::string(target_verdict_name(t.verdict));
  j["reason"] = t.reason;
  j["coverage"] = coverage_json(t.coverage);
  j["min_coverage"] = t.min_coverage ? ordered_json(*t.min_coverage) : ordered_json(nullptr);
  return j;
}

target_instructions targets_from(const ordered_json& t) {
  target_instructions s;
  s.target = t.value("target", "");
  s.arch = t.value("arch", "");
  s.required_families = t.value("required_families", std::vector<std::string>{});
  if (t.contains("static_counts") && t["static_counts"].is_object()) s.static_counts = counts_from(t["static_counts"]);
  s.static_per_kernel = per_kernel_from(t.value("static_per_kernel", ordered_json::object()));
  s.dynamic = read_runtime_counts(t);
  s.verdict = parse_target_verdict(t.value("verdict", "deferred")).value_or(target_verdict::deferred);
  s.reason = t.value("reason", "");
  s.coverage = coverage_from(t.value("coverage", ordered_json::object()));
  if (t.contains("min_coverage") && t["min_coverage"].is_number()) s.min_coverage = t["min_coverage"].get<double>();
  return s;
}

}  // namespace

std::string_view target_verdict_name(target_verdict v) { return k_target_names[static_cast<std::size_t>(v)]; }
std::optional<target_verdict> parse_target_verdict(std::string_view name) {
  for (std::size_t i = 0; i < k_target_names.size(); ++i)
    if (k_target_names[i] == name) return static_cast<target_verdict>(i);
  return std::nullopt;
}

std::string_view mode_name(eval_mode m) { return k_mode_names[static_cast<std::size_t>(m)]; }

bool target_instructions::coverage_at_least(double x) const {
  for (const auto& fam : required_families) {
    auto it = coverage.find(fam);
    if (it != coverage.end() && it->second.fraction && *it->second.fraction >= x) return true;
  }
  return false;
}

bool verdict::target_correct() const {
  return passed() && targets.verdict == target_verdict::executed &&
         (!targets.min_coverage || targets.coverage_at_least(*targets.min_coverage));
}

void write_decision(const decision& d, ordered_json& j) {
  auto status = flashinfer_status(d.outcome);
  j["status"] = status ? ordered_json(std::string(status_name(*status))) : ordered_json(nullptr);
  j["outcome"] = std::string(outcome_name(d.outcome));
  j["deciding_stage"] = d.stage ? std::string(stage_name(*d.stage)) : std::string();
  j["message"] = d.message;
  j["log"] = d.log;
}

result<decision> read_decision(const ordered_json& j) {
  decision d;
  std::string name = j.value("outcome", "");
  auto o = parse_outcome(name);
  if (!o) return make_error(fmt::format("unknown outcome '{}'", name));
  d.outcome = *o;
  std::string stage = j.value("deciding_stage", "");
  if (!stage.empty()) {
    d.stage = parse_stage(stage);
    if (!d.stage) return make_error(fmt::format("unknown deciding_stage '{}'", stage));
  }
  d.message = j.value("message", "");
  d.log = j.value("log", "");
  return d;
}

ordered_json to_json(const std::vector<stage_record>& stages) {
  ordered_json a = ordered_json::array();
  for (const auto& s : stages)
    a.push_back({{"stage", std::string(stage_name(s.id))},
                 {"outcome", std::string(stage_outcome_name(s.outcome))},
                 {"seconds", s.seconds},
                 {"summary", s.summary},
                 {"details", s.details}});
  return a;
}

std::vector<stage_record> stages_from_json(const ordered_json& j) {
  std::vector<stage_record> out;
  if (!j.is_array()) return out;
  for (const auto& s : j) {
    stage_record r;
    r.id = parse_stage(s.value("stage", "")).value_or(stage_id::source_gate);
    r.outcome = parse_stage_outcome(s.value("outcome", "")).value_or(stage_outcome::skipped);
    r.seconds = s.value("seconds", 0.0);
    r.summary = s.value("summary", "");
    r.details = s.contains("details") ? s["details"] : ordered_json(nullptr);
    out.push_back(std::move(r));
  }
  return out;
}

ordered_json to_json(const correctness_summary& c) {
  ordered_json outs = ordered_json::array();
  for (const auto& o : c.outputs)
    outs.push_back({{"name", o.name}, {"max_absolute_error", finite_or_string(o.max_absolute_error)},
                    {"max_relative_error", finite_or_string(o.max_relative_error)}, {"mismatches", o.mismatches},
                    {"nonfinite", o.nonfinite}, {"worst_index", o.worst_index},
                    {"worst_value", finite_or_string(o.worst_value)},
                    {"worst_expected", finite_or_string(o.worst_expected)}});
  return {{"rule", c.rule}, {"atol", c.atol}, {"rtol", c.rtol}, {"trials", c.trials},
          {"seeds", c.seeds}, {"max_absolute_error", finite_or_string(c.max_absolute_error)},
          {"max_relative_error", finite_or_string(c.max_relative_error)}, {"outputs", outs},
          {"failed_trial", c.failed_trial}, {"shape_or_dtype_problem", c.shape_or_dtype_problem}};
}

correctness_summary correctness_from_json(const ordered_json& c) {
  correctness_summary cs;
  cs.rule = c.value("rule", "");
  cs.atol = c.value("atol", 1e-2);
  cs.rtol = c.value("rtol", 1e-2);
  cs.trials = c.value("trials", 0);
  cs.seeds = c.value("seeds", std::vector<uint64_t>{});
  cs.max_absolute_error = number_or_nan(c, "max_absolute_error");
  cs.max_relative_error = number_or_nan(c, "max_relative_error");
  for (const auto& o : c.value("outputs", ordered_json::array())) {
    output_error oe;
    oe.name = o.value("name", "");
    oe.max_absolute_error = number_or_nan(o, "max_absolute_error");
    oe.max_relative_error = number_or_nan(o, "max_relative_error");
    oe.mismatches = o.value("mismatches", int64_t{0});
    oe.nonfinite = o.value("nonfinite", int64_t{0});
    oe.worst_index = o.value("worst_index", std::vector<int64_t>{});
    oe.worst_value = number_or_nan(o, "worst_value");
    oe.worst_expected = number_or_nan(o, "worst_expected");
    cs.outputs.push_back(std::move(oe));
  }
  cs.failed_trial = c.value("failed_trial", -1);
  cs.shape_or_dtype_problem = c.value("shape_or_dtype_problem", "");
  return cs;
}

ordered_json to_json(const timing_summary& tm) {
  return {{"method", tm.method}, {"warmup", tm.warmup}, {"iterations", tm.iterations},
          {"candidate", stats_json(tm.candidate)}, {"reference", stats_json(tm.reference)},
          {"speedup", tm.speedup}, {"speedup_p10", tm.speedup_p10}, {"speedup_p90", tm.speedup_p90},
          {"speedup_ci", {{"low", tm.speedup_ci_low}, {"high", tm.speedup_ci_high}, {"half_width", tm.speedup_ci_half_width},
                          {"target_half_width", tm.ci_target_half_width}, {"confidence", 0.95}}},
          {"pairs", tm.pairs}, {"stopped", tm.stopped},
          {"reference_name", tm.reference_name}, {"wallclock_disagreed", tm.wallclock_disagreed},
          {"candidate_wall_median_ms", tm.candidate_wall_median_ms}, {"input_sets", tm.input_sets},
          {"l2_flush_bytes", tm.l2_flush_bytes}, {"sm_clock_mhz", tm.sm_clock_mhz},
          {"physical_floor", tm.floor ? floor_json(*tm.floor) : ordered_json(nullptr)}};
}

timing_summary timing_from_json(const ordered_json& t) {
  timing_summary ts;
  ts.method = t.value("method", "");
  ts.warmup = t.value("warmup", 0);
  ts.iterations = t.value("iterations", 0);
  ts.candidate = stats_from(t.value("candidate", ordered_json::object()));
  ts.reference = stats_from(t.value("reference", ordered_json::object()));
  ts.speedup = t.value("speedup", 0.0);
  ts.speedup_p10 = t.value("speedup_p10", 0.0);
  ts.speedup_p90 = t.value("speedup_p90", 0.0);
  if (t.contains("speedup_ci") && t["speedup_ci"].is_object()) {
    const auto& ci = t["speedup_ci"];
    ts.speedup_ci_low = ci.value("low", 0.0);
    ts.speedup_ci_high = ci.value("high", 0.0);
    ts.speedup_ci_half_width = ci.value("half_width", 0.0);
    ts.ci_target_half_width = ci.value("target_half_width", 0.0);
  }
  ts.pairs = t.value("pairs", 0);
  ts.stopped = t.value("stopped", "");
  ts.reference_name = t.value("reference_name", "");
  ts.wallclock_disagreed = t.value("wallclock_disagreed", false);
  ts.candidate_wall_median_ms = t.value("candidate_wall_median_ms", 0.0);
  ts.input_sets = t.value("input_sets", 0);
  ts.l2_flush_bytes = t.value("l2_flush_bytes", 0.0);
  ts.sm_clock_mhz = t.value("sm_clock_mhz", std::vector<double>{});
  if (t.contains("physical_floor") && t["physical_floor"].is_object()) ts.floor = floor_from(t["physical_floor"]);
  return ts;
}

bool measurement_lease::exclusive() const {
  bool any = false;
  for (const auto& h : holds) {
    if (h.stage != "timing" && h.stage != "dynamic_check") continue;
    if (!h.exclusive) return false;
    any = true;
  }
  return any;
}

double measurement_lease::exclusive_waited_ms() const {
  double ms = 0;
  for (const auto& h : holds)
    if (h.exclusive) ms += h.waited_ms;
  return ms;
}

double measurement_lease::exclusive_held_ms() const {
  double ms = 0;
  for (const auto& h : holds)
    if (h.exclusive) ms += h.held_ms;
  return ms;
}

ordered_json to_json(const measurement_lease& m) {
  ordered_json holds = ordered_json::array();
  for (const auto& h : m.holds)
    holds.push_back({{"stage", h.stage},
                     {"exclusive", h.exclusive},
                     {"waited_ms", h.waited_ms},
                     {"held_ms", h.held_ms},
                     {"granted_unix_ms", h.granted_unix_ms}});
  return {{"exclusive", m.exclusive()},
          {"device", m.device},
          {"lease_dir", m.lease_dir},
          {"exclusive_waited_ms", m.exclusive_waited_ms()},
          {"exclusive_held_ms", m.exclusive_held_ms()},
          {"holds", holds}};
}

measurement_lease measurement_from_json(const ordered_json& j) {
  measurement_lease m;
  m.device = j.value("device", "");
  m.lease_dir = j.value("lease_dir", "");
  for (const auto& h : j.value("holds", ordered_json::array()))
    m.holds.push_back({h.value("stage", ""), h.value("exclusive", false), h.value("waited_ms", 0.0), h.value("held_ms", 0.0),
                       h.value("granted_unix_ms", 0.0)});
  return m;
}

void write_runtime_counts(const runtime_counts& r, ordered_json& j) {
  j["dynamic_counts"] = r.counts ? counts_json(*r.counts) : ordered_json(nullptr);
  j["dynamic_per_kernel"] = per_kernel_json(r.per_kernel);
  j["dynamic_method"] = r.method;
  j["dynamic_error"] = r.error;
  j["dynamic_ran"] = r.ran;
  j["dynamic_coverage_evidence"] = r.evidence ? to_json(*r.evidence) : ordered_json(nullptr);
}

runtime_counts read_runtime_counts(const ordered_json& j) {
  runtime_counts r;
  if (j.contains("dynamic_counts") && j["dynamic_counts"].is_object()) r.counts = counts_from(j["dynamic_counts"]);
  r.per_kernel = per_kernel_from(j.value("dynamic_per_kernel", ordered_json::object()));
  r.method = j.value("dynamic_method", "");
  r.error = j.value("dynamic_error", "");
  r.ran = j.value("dynamic_ran", r.counts.has_value() || !r.error.empty());
  if (j.contains("dynamic_coverage_evidence") && !j["dynamic_coverage_evidence"].is_null()) {
    // Malformed evidence is kept as evidence that says why it is missing, so the coverage reads
    // "unknown" with the reason instead of the whole record failing to load.
    auto e = coverage_evidence_from_json(j["dynamic_coverage_evidence"]);
    if (e) {
      r.evidence = std::move(*e);
    } else {
      r.evidence = coverage_evidence{};
      r.evidence->instructions_missing = r.evidence->counters_missing = e.err().message;
    }
  }
  return r;
}

ordered_json to_json(const coverage_evidence& e) {
  ordered_json instructions = ordered_json::array();
  for (const auto& i : e.instructions)
    instructions.push_back({{"kernel", i.kernel}, {"mnemonic", i.mnemonic}, {"family", i.family},
                            {"inst_executed", i.inst_executed}, {"thread_pred_on", i.thread_pred_on}});
  ordered_json counters = ordered_json::object();
  for (const auto& [kernel, metrics] : e.counters)
    for (const auto& [metric, value] : metrics) counters[kernel][metric] = value;
  return {{"instructions", instructions}, {"counters", counters}, {"instructions_missing", e.instructions_missing},
          {"counters_missing", e.counters_missing}};
}

result<coverage_evidence> coverage_evidence_from_json(const ordered_json& j) {
  const std::string path = "coverage_evidence";
  json_errors errs;
  if (!expect_object(j, path, errs)) return errs.to_error();
  coverage_evidence e;
  e.instructions_missing = get_string(j, "instructions_missing", path, errs, false, false).value_or("");
  e.counters_missing = get_string(j, "counters_missing", path, errs, false, false).value_or("");
  if (j.contains("instructions") && expect_array(j["instructions"], json_child(path, "instructions"), errs))
    for (std::size_t n = 0; n < j["instructions"].size(); ++n) {
      const auto& x = j["instructions"][n];
      std::string here = json_index(json_child(path, "instructions"), n);
      if (!expect_object(x, here, errs)) continue;
      executed_instruction i;
      i.kernel = get_string(x, "kernel", here, errs).value_or("");
      i.mnemonic = get_string(x, "mnemonic", here, errs).value_or("");
      i.family = get_string(x, "family", here, errs).value_or("");
      i.inst_executed = get_int(x, "inst_executed", here, errs).value_or(0);
      i.thread_pred_on = get_int(x, "thread_pred_on", here, errs).value_or(0);
      e.instructions.push_back(std::move(i));
    }
  if (j.contains("counters") && expect_object(j["counters"], json_child(path, "counters"), errs))
    for (const auto& k : j["counters"].items()) {
      std::string here = json_child(json_child(path, "counters"), k.key());
      if (!expect_object(k.value(), here, errs)) continue;
      for (const auto& m : k.value().items()) {
        if (!m.value().is_number()) {
          errs.add(json_child(here, m.key()), "expected a number, got " + json_type_name(m.value()));
          continue;
        }
        e.counters[k.key()][m.key()] = m.value().get<double>();
      }
    }
  if (!errs.empty()) return errs.to_error();
  return e;
}

ordered_json to_json(const verdict& v) {
  ordered_json j;
  j["format"] = "ptxbench.verdict/1";
  j["mode"] = std::string(mode_name(v.mode));
  j["task"] = v.task;
  j["target"] = v.target;
  j["arch"] = v.arch;
  write_decision(v.decided, j);
  j["target_correct"] = v.target_correct();
  j["stages"] = to_json(v.stages);
  j["gate_findings"] = findings_json(v.gate_findings);
  j["build"] = build_json(v.build);
  j["target_instructions"] = targets_json(v.targets);
  j["correctness"] = v.correctness ? to_json(*v.correctness) : ordered_json(nullptr);
  j["timing"] = v.timing ? to_json(*v.timing) : ordered_json(nullptr);
  j["measurement"] = v.measurement ? to_json(*v.measurement) : ordered_json(nullptr);
  j["environment"] = v.environment;
  j["trace"] = v.flashinfer_trace ? to_json(*v.flashinfer_trace) : ordered_json(nullptr);
  return j;
}

result<verdict> verdict_from_json(const ordered_json& j) {
  if (!j.is_object() || j.value("format", "") != "ptxbench.verdict/1")
    return make_error("not a ptxbench verdict (expected \"format\": \"ptxbench.verdict/1\")");
  try {
    verdict v;
    v.mode = j.value("mode", "") == "eval" ? eval_mode::eval : eval_mode::check;
    v.task = j.value("task", "");
    v.target = j.value("target", "");
    v.arch = j.value("arch", "");
    auto d = read_decision(j);
    if (!d) return d.err().with_context("verdict");
    v.decided = std::move(*d);
    v.stages = stages_from_json(j.value("stages", ordered_json::array()));
    for (const auto& f : j.value("gate_findings", ordered_json::array()))
      v.gate_findings.push_back({f.value("rule", ""), f.value("file", ""), f.value("line", 0), f.value("excerpt", ""),
                                 f.value("message", "")});
    if (j.contains("build") && j["build"].is_object()) v.build = build_from(j["build"]);
    if (j.contains("target_instructions") && j["target_instructions"].is_object())
      v.targets = targets_from(j["target_instructions"]);
    if (j.contains("correctness") && j["correctness"].is_object()) v.correctness = correctness_from_json(j["correctness"]);
    if (j.contains("timing") && j["timing"].is_object()) v.timing = timing_from_json(j["timing"]);
    if (j.contains("measurement") && j["measurement"].is_object()) v.measurement = measurement_from_json(j["measurement"]);
    v.environment = j.contains("environment") ? j["environment"] : ordered_json(nullptr);
    if (j.contains("trace") && j["trace"].is_object()) {
      auto t = trace_from_json(j["trace"], "trace");
      if (!t) return t.err();
      v.flashinfer_trace = std::move(*t);
    }
    return v;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed verdict: ") + e.what());
  }
}

}  // namespace ptxbench
