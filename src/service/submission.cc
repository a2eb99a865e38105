#include "service/submission.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/sha1.h"
#include "core/text.h"
#include "eval/triton_stages.h"
#include "suite/binding.h"
#include "suite/unknown_target.h"
#include "verdict/gpu_options.h"

namespace ptxbench::service {
namespace {

using queue::job_kind;

/// A source is text: no NUL and no control characters other than tab, newline, carriage return,
/// form feed and vertical tab (JSON has already guaranteed valid UTF-8).
bool is_binary(const std::string& content) {
  for (unsigned char c : content)
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return true;
  return false;
}

/// The request's optional top-level fields, each checked against its type and range the way
/// upstream's pydantic models check them (a null or absent field is the default); every problem is
/// recorded as a 422 field problem with pydantic's wording and type name.
class request_fields {
 public:
  explicit request_fields(const ordered_json& body) : m_body(body) {}

  std::optional<bool> boolean(const char* key) {
    const auto* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return problem<bool>(key, "Input should be a valid boolean", "bool_type");
    return v->get<bool>();
  }

  /// An integer (30.0 counts, as in pydantic); gt / le bounds when given.
  std::optional<int64_t> integer(const char* key, std::optional<int64_t> gt = std::nullopt,
                                 std::optional<int64_t> le = std::nullopt) {
    const auto* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) return problem<int64_t>(key, "Input should be a valid integer", "int_type");
    double d = v->get<double>();
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 9e15)
      return problem<int64_t>(key, "Input should be a valid integer, got a number with a fractional part", "int_from_float");
    auto n = static_cast<int64_t>(d);
    if (gt && !(n > *gt)) return problem<int64_t>(key, fmt::format("Input should be greater than {}", *gt), "greater_than");
    if (le && !(n <= *le))
      return problem<int64_t>(key, fmt::format("Input should be less than or equal to {}", *le), "less_than_equal");
    return n;
  }

  std::optional<double> number(const char* key, std::optional<double> ge = std::nullopt) {
    const auto* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) return problem<double>(key, "Input should be a valid number", "float_type");
    double d = v->get<double>();
    if (ge && !(d >= *ge))
      return problem<double>(key, fmt::format("Input should be greater than or equal to {:g}", *ge), "greater_than_equal");
    return d;
  }

  std::optional<std::string> string(const char* key) {
    const auto* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) return problem<std::string>(key, "Input should be a valid string", "string_type");
    return v->get<std::string>();
  }

  std::optional<std::vector<std::string>> strings(const char* key) {
    const auto* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_array()) return problem<std::vector<std::string>>(key, "Input should be a valid list", "list_type");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) {
        m_problems.push_back({ordered_json::array({"body", key, i}), "Input should be a valid string", "string_type"});
        return std::nullopt;
      }
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }

  /// One of `allowed` (pydantic's enum message).
  std::optional<std::string> choice(const char* key, const std::vector<std::string>& allowed) {
    auto s = string(key);
    if (!s) return std::nullopt;
    if (is_one_of(*s, allowed)) return s;
    return problem<std::string>(key, enum_message(allowed), "enum");
  }

  /// A list of values each one of `allowed`; the first that is not is the problem (at its index).
  std::optional<std::vector<std::string>> choices(const char* key, const std::vector<std::string>& allowed) {
    auto list = strings(key);
    if (!list) return std::nullopt;
    for (std::size_t i = 0; i < list->size(); ++i)
      if (!is_one_of((*list)[i], allowed)) {
        m_problems.push_back({ordered_json::array({"body", key, i}), enum_message(allowed), "enum"});
        return std::nullopt;
      }
    return list;
  }

  void add(field_problem p) { m_problems.push_back(std::move(p)); }
  [[nodiscard]] std::vector<field_problem>& problems() { return m_problems; }

 private:
  const ordered_json* find(const char* key) const {
    auto it = m_body.find(key);
    return it == m_body.end() || it->is_null() ? nullptr : &*it;
  }

  static bool is_one_of(const std::string& value, const std::vector<std::string>& allowed) {
    return std::find(allowed.begin(), allowed.end(), value) != allowed.end();
  }
  // pydantic's words for a value outside an enum: "Input should be 'a', 'b' or 'c'".
  static std::string enum_message(const std::vector<std::string>& allowed) {
    std::string text = "Input should be ";
    for (std::size_t i = 0; i < allowed.size(); ++i)
      text += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ", allowed[i]);
    return text;
  }

  template <typename T>
  std::optional<T> problem(const char* key, std::string msg, const char* type) {
    m_problems.push_back({ordered_json::array({"body", key}), std::move(msg), type});
    return std::nullopt;
  }

  const ordered_json& m_body;
  std::vector<field_problem> m_problems;
};

parsed_submission refused(request_refusal r) { return {std::nullopt, std::move(r)}; }


}  // namespace

std::string upstream_solution_hash(const solution& s) {
  std::string text = s.definition + s.spec.language + s.spec.entry_point + (s.spec.binding ? *s.spec.binding : "");
  for (const auto& d : s.spec.dependencies) text += d;
  for (const auto& f : s.sources) text += f.path + f.content;
  return sha1_hex(text);
}

std::string normalized_solution_name(const solution& s) { return s.name + "_" + upstream_solution_hash(s).substr(0, 8); }

parsed_submission parse_submission(std::string_view text, job_kind kind, const suite& tasks, const std::string& default_target,
                                   const submission_limits& limits) {
  return parse_submission(text, kind, tasks, [&]() -> result<std::string> { return default_target; }, limits);
}

parsed_submission parse_submission(std::string_view text, job_kind kind, const suite& tasks,
                                   const default_target_fn& default_target, const submission_limits& limits) {
  const std::string body_text(text);
  auto body = ordered_json::parse(body_text, nullptr, false);
  if (body.is_discarded()) return refused(request_refusal::invalid(invalid_json(body_text)));
  if (!body.is_object()) return refused(request_refusal::invalid(not_an_object()));

  // The schema first (422), as FastAPI validates the whole request before the handler runs.
  request_fields fields(body);
  std::optional<solution> sol;
  if (!body.contains("solution") || body["solution"].is_null()) {
    fields.add({ordered_json::array({"body", "solution"}), "Field required", "missing"});
  } else {
    auto parsed = solution_from_json(body["solution"], "solution");
    if (parsed) {
      sol = std::move(*parsed);
      for (std::size_t i = 0; i < sol->sources.size(); ++i)
        if (sol->sources[i].content.empty())
          fields.add({ordered_json::array({"body", "solution", "sources", i, "content"}),
                      "String should have at least 1 character", "string_too_short"});
    } else {
      fields.add(field_problem_of(parsed.err()));
    }
  }
  // PTXBench's own fields.
  auto target_field = fields.string("target");
  auto check_only = fields.boolean("check_only").value_or(false);
  auto cache = fields.choice("cache", {"reuse", "bypass"});
  auto baseline_cache_mode = fields.choice("baseline_cache_mode", {"reuse", "bypass"});
  auto request_id = fields.string("request_id");
  if (request_id) {
    bool printable = std::all_of(request_id->begin(), request_id->end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
    if (request_id->empty() || request_id->size() > 200 || !printable)
      fields.add({ordered_json::array({"body", "request_id"}), "expected 1 to 200 printable ASCII characters", "value_error"});
  }
  // Upstream's fields. workload_uuids: null = every workload of the definition.
  auto workload_uuids = fields.strings("workload_uuids");
  ordered_json protocol = ordered_json::object();
  if (auto t = fields.integer("timeout", 0, 3600)) protocol["timeout"] = *t;  // every endpoint's
  std::optional<bool> run_baseline;
  switch (kind) {
    case job_kind::evaluate: {
      for (const char* key : {"atol", "rtol"})
        if (auto v = fields.number(key, 0.0)) protocol[key] = *v;
      run_baseline = fields.boolean("run_baseline");
      if (auto p = fields.boolean("profile_baseline"); p && !*p) protocol["profile_baseline"] = false;
      break;
    }
    case job_kind::sanitize:
    case job_kind::debug: {
      if (auto types = fields.choices("sanitizer_types", sanitizer_tool_names())) {
        std::set<std::string> chosen(types->begin(), types->end());
        if (!chosen.empty()) protocol["sanitizer_types"] = std::vector<std::string>(chosen.begin(), chosen.end());
      }
      if (kind == job_kind::debug && !protocol.contains("sanitizer_types"))
        protocol["sanitizer_types"] = std::vector<std::string>{"memcheck"};  // upstream's debug default
      // Accepted for upstream's clients; PTXBench runs its own compute-sanitizer and never takes a
      // path from a request, and reports are not truncated.
      (void)fields.string("sanitizer_path");
      (void)fields.integer("max_lines");
      (void)fields.integer("print_limit");
      if (kind == job_kind::debug) {
        if (auto t = fields.integer("evaluation_timeout", 0, 3600)) protocol["call_timeout"] = *t;
        if (auto n = fields.integer("source_context_lines", -1, 200); n && *n != 4) protocol["source_context_lines"] = *n;
        (void)fields.boolean("enable_coredump");
        (void)fields.number("coredump_grace_seconds", 0.0);
      }
      break;
    }
    case job_kind::profile: {
      // Upstream's Nsight Compute report options; PTXBench's profile is its runtime instruction check.
      for (const char* key : {"set", "kernel_name", "page", "ncu_path"}) (void)fields.string(key);
      for (const char* key : {"sections", "metrics"}) (void)fields.strings(key);
      (void)fields.integer("max_lines");
      break;
    }
  }
  if (!fields.problems().empty()) return refused(request_refusal::invalid(std::move(fields.problems())));

  // Well-formed; now what this service can serve (400).
  const task* t = tasks.find_task(sol->definition);
  if (!t) return refused(request_refusal::bad_request("Definition not found: " + sol->definition));
  // Upstream's name hashes the solution as submitted (before the language is normalized below).
  const std::string unique_name = normalized_solution_name(*sol);
  // Upstream's "python" solutions are Python files that launch Triton kernels: PTXBench's Triton track.
  if (sol->spec.language == "python") sol->spec.language = "triton";
  const bool triton = eval::is_triton(*sol);
  if (!triton && sol->spec.language != "cuda" && sol->spec.language != "cpp")
    return refused(request_refusal::bad_request(fmt::format(
        "solution.spec.language: '{}' is not supported here (cuda, cpp, triton or python)", sol->spec.language)));
  // A Triton candidate is Python: no native binding (docs/kernel-abi.md, "Triton candidates"); upstream
  // ignores the binding of Python solutions too.
  if (!triton)
    if (auto b = binding_of(*sol); !b) return refused(request_refusal::bad_request("solution.spec.binding: " + b.err().message));
  if (sol->sources.size() > limits.max_sources)
    return refused(request_refusal::bad_request(
        fmt::format("solution.sources: {} files, more than the limit of {}", sol->sources.size(), limits.max_sources)));
  std::size_t total = 0;
  for (std::size_t i = 0; i < sol->sources.size(); ++i) {
    const auto& f = sol->sources[i];
    if (is_binary(f.content))
      return refused(request_refusal::bad_request(fmt::format(
          "solution.sources[{}].content: '{}' is binary (NUL or control characters); sources must be text", i, f.path)));
    total += f.content.size();
  }
  if (total > limits.max_source_bytes)
    return refused(request_refusal::bad_request(
        fmt::format("solution.sources: {} bytes in all, more than the limit of {} bytes", total, limits.max_source_bytes)));

  submission out;
  out.spec.kind = kind;
  out.spec.task = t->name;
  out.bypass_cache = cache == "bypass" || baseline_cache_mode == "bypass";
  out.request_id = request_id.value_or("");
  if (workload_uuids) {
    // Upstream evaluates the requested workloads the definition has; none at all is a failed task.
    std::set<std::string> asked(workload_uuids->begin(), workload_uuids->end());
    if (asked.count(t->wl.uuid)) out.spec.workloads.push_back(t->wl.uuid);
    else if (!asked.empty()) out.no_workloads = "No workloads found for definition: " + t->name;
  }
  if (run_baseline == false && out.no_workloads.empty())
    // Upstream compares against stored reference outputs then; no workload of the suite stores any.
    return refused(request_refusal::bad_request(
        fmt::format("Workload '{}' has no `outputs`; required when run_baseline=False", t->wl.uuid)));

  std::string target;
  if (target_field) {
    target = lower(*target_field);
  } else {
    auto d = default_target();
    if (!d) return refused(request_refusal::bad_request("target: " + d.err().message));
    target = *d;
  }
  const target_info* tgt = tasks.find_target(target);
  if (!tgt) return refused(request_refusal::bad_request("target: " + unknown_target_message(tasks, target)));
  if (std::find(t->targets.begin(), t->targets.end(), tgt->name) == t->targets.end())
    return refused(request_refusal::bad_request(fmt::format("target: definition {} does not list target {}", t->name, tgt->name)));
  if (!check_only && t->status != "ready")
    return refused(request_refusal::bad_request(
        fmt::format("Definition {} cannot be evaluated on a GPU yet: {} (check_only: true runs the CPU stages)", t->name,
                    t->note.empty() ? "its reference is pending" : t->note)));
  if (check_only) protocol["check_only"] = true;

  out.spec.target = tgt->name;
  out.normalized_solution_name = unique_name;
  out.candidate = std::move(*sol);
  out.candidate.name = out.normalized_solution_name;
  out.spec.solution_json = to_json(out.candidate).dump();
  out.spec.protocol_json = protocol.dump();
  return {std::move(out), {}};
}

result<protocol_options> read_protocol(const std::string& protocol_json) {
  auto j = ordered_json::parse(protocol_json.empty() ? std::string("{}") : protocol_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("the job's protocol options are not a JSON object");
  protocol_options o;
  try {
    if (j.contains("atol")) o.atol = j["atol"].get<double>();
    if (j.contains("rtol")) o.rtol = j["rtol"].get<double>();
    if (j.contains("timeout")) o.timeout_s = j["timeout"].get<double>();
    if (j.contains("call_timeout")) o.call_timeout_s = j["call_timeout"].get<double>();
    if (j.contains("sanitizer_types")) o.sanitizer_types = j["sanitizer_types"].get<std::vector<std::string>>();
    o.check_only = j.value("check_only", false);
    o.profile_baseline = j.value("profile_baseline", true);
    o.source_context_lines = j.value("source_context_lines", 4);
  } catch (const std::exception& e) {
    return make_error(std::string("the job's protocol options are malformed: ") + e.what());
  }
  return o;
}

}  // namespace ptxbench::service
