#include "eval/verdict.h"

#include <array>

namespace ptxbench::eval {
namespace {

constexpr std::array<std::string_view, 8> k_stage_names = {"source_gate", "build",       "link_gate", "static_sass",
                                                           "sanitize",    "correctness", "timing",    "dynamic_check"};
constexpr std::array<std::string_view, 5> k_outcome_names = {"passed", "failed", "skipped", "deferred", "error"};
constexpr std::array<std::string_view, 5> k_target_names = {"executed", "not_executed", "absent_in_sass",
                                                            "profile_error", "deferred"};

template <std::size_t N>
std::optional<std::size_t> index_of(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return i;
  return std::nullopt;
}

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

}  // namespace

std::string_view stage_name(stage_id s) { return k_stage_names[static_cast<std::size_t>(s)]; }
std::optional<stage_id> parse_stage(std::string_view name) {
  auto i = index_of(k_stage_names, name);
  return i ? std::optional<stage_id>(static_cast<stage_id>(*i)) : std::nullopt;
}
std::string_view outcome_name(stage_outcome o) { return k_outcome_names[static_cast<std::size_t>(o)]; }
std::optional<stage_outcome> parse_outcome(std::string_view name) {
  auto i = index_of(k_outcome_names, name);
  return i ? std::optional<stage_outcome>(static_cast<stage_outcome>(*i)) : std::nullopt;
}
std::string_view target_verdict_name(target_verdict v) { return k_target_names[static_cast<std::size_t>(v)]; }
std::optional<target_verdict> parse_target_verdict(std::string_view name) {
  auto i = index_of(k_target_names, name);
  return i ? std::optional<target_verdict>(static_cast<target_verdict>(*i)) : std::nullopt;
}

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

const stage_record* verdict::stage(stage_id id) const {
  for (const auto& s : stages)
    if (s.id == id) return &s;
  return nullptr;
}

ordered_json to_json(const verdict& v) {
  ordered_json j;
  j["format"] = "ptxbench.verdict/1";
  j["mode"] = v.mode;
  j["task"] = v.task;
  j["target"] = v.target;
  j["arch"] = v.arch;
  j["status"] = v.status ? ordered_json(std::string(status_name(*v.status))) : ordered_json(nullptr);
  j["outcome"] = v.outcome;
  j["target_correct"] = v.target_correct();
  j["deciding_stage"] = v.deciding_stage;
  j["message"] = v.message;
  ordered_json stages = ordered_json::array();
  for (const auto& s : v.stages)
    stages.push_back({{"stage", std::string(stage_name(s.id))},
                      {"outcome", std::string(outcome_name(s.outcome))},
                      {"seconds", s.seconds},
                      {"summary", s.summary},
                      {"details", s.details}});
  j["stages"] = stages;
  ordered_json findings = ordered_json::array();
  for (const auto& f : v.gate_findings)
    findings.push_back({{"rule", f.rule}, {"file", f.file}, {"line", f.line}, {"excerpt", f.excerpt},
                        {"message", f.message}});
  j["gate_findings"] = findings;
  const auto& b = v.build;
  ordered_json kernels = ordered_json::array();
  for (const auto& k : b.kernels)
    kernels.push_back({{"kernel", k.kernel}, {"arch", k.arch}, {"registers", k.registers}, {"barriers", k.barriers},
                       {"smem_bytes", k.smem_bytes}, {"cmem0_bytes", k.cmem0_bytes},
                       {"stack_frame_bytes", k.stack_frame_bytes}, {"spill_store_bytes", k.spill_store_bytes},
                       {"spill_load_bytes", k.spill_load_bytes}});
  j["build"] = {{"attempted", b.attempted}, {"succeeded", b.succeeded}, {"cache_hit", b.cache_hit},
                {"cache_key", b.cache_key}, {"seconds", b.seconds}, {"command", b.command},
                {"nvcc_version", b.nvcc_version}, {"log", b.log}, {"errors", b.errors}, {"warnings", b.warnings},
                {"kernels", kernels}, {"artifact", b.artifact}, {"artifact_sha256", b.artifact_sha256}};
  const auto& t = v.targets;
  j["target_instructions"] = {
      {"target", t.target},
      {"arch", t.arch},
      {"required_families", t.required_families},
      {"static_counts", t.static_counts ? counts_json(*t.static_counts) : ordered_json(nullptr)},
      {"static_per_kernel", per_kernel_json(t.static_per_kernel)},
      {"dynamic_counts", t.dynamic_counts ? counts_json(*t.dynamic_counts) : ordered_json(nullptr)},
      {"dynamic_per_kernel", per_kernel_json(t.dynamic_per_kernel)},
      {"dynamic_method", t.dynamic_method},
      {"verdict", std::string(target_verdict_name(t.verdict))},
      {"reason", t.reason},
      {"coverage", coverage_json(t.coverage)},
      {"min_coverage", t.min_coverage ? ordered_json(*t.min_coverage) : ordered_json(nullptr)}};
  if (v.correctness) {
    const auto& c = *v.correctness;
    ordered_json outs = ordered_json::array();
    for (const auto& o : c.outputs)
      outs.push_back({{"name", o.name}, {"max_absolute_error", finite_or_string(o.max_absolute_error)},
                      {"max_relative_error", finite_or_string(o.max_relative_error)}, {"mismatches", o.mismatches},
                      {"nonfinite", o.nonfinite}, {"worst_index", o.worst_index},
                      {"worst_value", finite_or_string(o.worst_value)},
                      {"worst_expected", finite_or_string(o.worst_expected)}});
    j["correctness"] = {{"rule", c.rule}, {"atol", c.atol}, {"rtol", c.rtol}, {"trials", c.trials},
                        {"seeds", c.seeds}, {"max_absolute_error", finite_or_string(c.max_absolute_error)},
                        {"max_relative_error", finite_or_string(c.max_relative_error)}, {"outputs", outs},
                        {"failed_trial", c.failed_trial}, {"shape_or_dtype_problem", c.shape_or_dtype_problem}};
  } else {
    j["correctness"] = nullptr;
  }
  if (v.timing) {
    const auto& tm = *v.timing;
    j["timing"] = {{"method", tm.method}, {"warmup", tm.warmup}, {"iterations", tm.iterations},
                   {"candidate", stats_json(tm.candidate)}, {"reference", stats_json(tm.reference)},
                   {"speedup", tm.speedup}, {"speedup_p10", tm.speedup_p10}, {"speedup_p90", tm.speedup_p90},
                   {"reference_name", tm.reference_name}, {"wallclock_disagreed", tm.wallclock_disagreed},
                   {"candidate_wall_median_ms", tm.candidate_wall_median_ms}, {"input_sets", tm.input_sets},
                   {"l2_flush_bytes", tm.l2_flush_bytes}, {"sm_clock_mhz", tm.sm_clock_mhz}};
  } else {
    j["timing"] = nullptr;
  }
  j["log"] = v.log;
  j["environment"] = v.environment;
  j["trace"] = v.flashinfer_trace ? to_json(*v.flashinfer_trace) : ordered_json(nullptr);
  return j;
}

result<verdict> verdict_from_json(const ordered_json& j) {
  if (!j.is_object() || j.value("format", "") != "ptxbench.verdict/1")
    return make_error("not a ptxbench verdict (expected \"format\": \"ptxbench.verdict/1\")");
  try {
    verdict v;
    v.mode = j.value("mode", "");
    v.task = j.value("task", "");
    v.target = j.value("target", "");
    v.arch = j.value("arch", "");
    if (j.contains("status") && j["status"].is_string()) v.status = parse_status(j["status"].get<std::string>());
    v.outcome = j.value("outcome", "");
    v.deciding_stage = j.value("deciding_stage", "");
    v.message = j.value("message", "");
    for (const auto& s : j.value("stages", ordered_json::array())) {
      stage_record r;
      r.id = parse_stage(s.value("stage", "")).value_or(stage_id::source_gate);
      r.outcome = parse_outcome(s.value("outcome", "")).value_or(stage_outcome::skipped);
      r.seconds = s.value("seconds", 0.0);
      r.summary = s.value("summary", "");
      r.details = s.contains("details") ? s["details"] : ordered_json(nullptr);
      v.stages.push_back(std::move(r));
    }
    for (const auto& f : j.value("gate_findings", ordered_json::array()))
      v.gate_findings.push_back({f.value("rule", ""), f.value("file", ""), f.value("line", 0), f.value("excerpt", ""),
                                 f.value("message", "")});
    if (j.contains("build") && j["build"].is_object()) {
      const auto& b = j["build"];
      v.build.attempted = b.value("attempted", false);
      v.build.succeeded = b.value("succeeded", false);
      v.build.cache_hit = b.value("cache_hit", false);
      v.build.cache_key = b.value("cache_key", "");
      v.build.seconds = b.value("seconds", 0.0);
      v.build.command = b.value("command", std::vector<std::string>{});
      v.build.nvcc_version = b.value("nvcc_version", "");
      v.build.log = b.value("log", "");
      v.build.errors = b.value("errors", std::vector<std::string>{});
      v.build.warnings = b.value("warnings", std::vector<std::string>{});
      for (const auto& k : b.value("kernels", ordered_json::array()))
        v.build.kernels.push_back({k.value("kernel", ""), k.value("arch", ""), k.value("registers", 0),
                                   k.value("barriers", 0), k.value("smem_bytes", int64_t{0}),
                                   k.value("cmem0_bytes", int64_t{0}), k.value("stack_frame_bytes", int64_t{0}),
                                   k.value("spill_store_bytes", int64_t{0}), k.value("spill_load_bytes", int64_t{0})});
      v.build.artifact = b.value("artifact", "");
      v.build.artifact_sha256 = b.value("artifact_sha256", "");
    }
    if (j.contains("target_instructions") && j["target_instructions"].is_object()) {
      const auto& t = j["target_instructions"];
      v.targets.target = t.value("target", "");
      v.targets.arch = t.value("arch", "");
      v.targets.required_families = t.value("required_families", std::vector<std::string>{});
      if (t.contains("static_counts") && t["static_counts"].is_object()) v.targets.static_counts = counts_from(t["static_counts"]);
      v.targets.static_per_kernel = per_kernel_from(t.value("static_per_kernel", ordered_json::object()));
      if (t.contains("dynamic_counts") && t["dynamic_counts"].is_object())
        v.targets.dynamic_counts = counts_from(t["dynamic_counts"]);
      v.targets.dynamic_per_kernel = per_kernel_from(t.value("dynamic_per_kernel", ordered_json::object()));
      v.targets.dynamic_method = t.value("dynamic_method", "");
      v.targets.verdict = parse_target_verdict(t.value("verdict", "deferred")).value_or(target_verdict::deferred);
      v.targets.reason = t.value("reason", "");
      v.targets.coverage = coverage_from(t.value("coverage", ordered_json::object()));
      if (t.contains("min_coverage") && t["min_coverage"].is_number()) v.targets.min_coverage = t["min_coverage"].get<double>();
    }
    if (j.contains("correctness") && j["correctness"].is_object()) {
      const auto& c = j["correctness"];
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
      v.correctness = std::move(cs);
    }
    if (j.contains("timing") && j["timing"].is_object()) {
      const auto& t = j["timing"];
      timing_summary ts;
      ts.method = t.value("method", "");
      ts.warmup = t.value("warmup", 0);
      ts.iterations = t.value("iterations", 0);
      ts.candidate = stats_from(t.value("candidate", ordered_json::object()));
      ts.reference = stats_from(t.value("reference", ordered_json::object()));
      ts.speedup = t.value("speedup", 0.0);
      ts.speedup_p10 = t.value("speedup_p10", 0.0);
      ts.speedup_p90 = t.value("speedup_p90", 0.0);
      ts.reference_name = t.value("reference_name", "");
      ts.wallclock_disagreed = t.value("wallclock_disagreed", false);
      ts.candidate_wall_median_ms = t.value("candidate_wall_median_ms", 0.0);
      ts.input_sets = t.value("input_sets", 0);
      ts.l2_flush_bytes = t.value("l2_flush_bytes", 0.0);
      ts.sm_clock_mhz = t.value("sm_clock_mhz", std::vector<double>{});
      v.timing = std::move(ts);
    }
    v.log = j.value("log", "");
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

}  // namespace ptxbench::eval
