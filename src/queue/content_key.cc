#include "queue/content_key.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_check.h"
#include "core/sha256.h"

namespace ptxbench::queue {
namespace {

// nlohmann::json (not ordered_json) keeps object members in a std::map, so dump() writes keys sorted
// bytewise: that is the canonical order.
using sorted_json = nlohmann::json;

/// Copies j with integral floats turned into integers; drops null members of objects when asked.
sorted_json canonical(const ordered_json& j, bool drop_null_members) {
  if (j.is_object()) {
    sorted_json out = sorted_json::object();
    for (const auto& [k, v] : j.items()) {
      if (drop_null_members && v.is_null()) continue;
      out[k] = canonical(v, false);
    }
    return out;
  }
  if (j.is_array()) {
    sorted_json out = sorted_json::array();
    for (const auto& v : j) out.push_back(canonical(v, false));
    return out;
  }
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9007199254740992.0)  // 2^53: exact
      return static_cast<int64_t>(d);
  }
  return sorted_json(j);
}

result<sorted_json> canonical_solution(const std::string& text, const std::string& task) {
  auto parsed = parse_json(text, "solution");
  if (!parsed) return parsed.err();
  const ordered_json& s = *parsed;
  if (!s.is_object()) return make_error("solution: expected a JSON object");
  if (s.contains("definition") && !(s["definition"].is_string() && s["definition"] == task))
    return make_error(fmt::format("solution.definition does not match the job's task '{}'", task));
  if (!s.contains("spec") || !s["spec"].is_object()) return make_error("solution.spec: expected an object");
  sorted_json spec = canonical(s["spec"], false);
  if (!spec.contains("destination_passing_style")) spec["destination_passing_style"] = true;
  if (!spec.contains("binding")) spec["binding"] = nullptr;
  if (!spec.contains("dependencies")) spec["dependencies"] = sorted_json::array();

  if (!s.contains("sources") || !s["sources"].is_array() || s["sources"].empty())
    return make_error("solution.sources: expected a non-empty array");
  std::vector<std::pair<std::string, std::string>> files;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < s["sources"].size(); ++i) {
    const auto& f = s["sources"][i];
    std::string where = json_index("solution.sources", i);
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("content") ||
        !f["content"].is_string())
      return make_error(where + ": expected {\"path\": string, \"content\": string}");
    std::string path = f["path"].get<std::string>();
    if (path.empty()) return make_error(where + ".path: empty");
    if (!seen.insert(path).second) return make_error(fmt::format("{}.path: '{}' appears twice", where, path));
    files.emplace_back(std::move(path), f["content"].get<std::string>());
  }
  std::sort(files.begin(), files.end());
  sorted_json sources = sorted_json::array();
  for (auto& [path, content] : files) sources.push_back({{"path", path}, {"content", content}});
  return sorted_json{{"spec", std::move(spec)}, {"sources", std::move(sources)}};
}

}  // namespace

result<std::string> canonical_job_text(const job_spec& spec) {
  if (spec.task.empty()) return make_error("job: task is empty");
  if (spec.target.empty()) return make_error("job: target is empty");
  auto solution = canonical_solution(spec.solution_json, spec.task);
  if (!solution) return solution.err();
  auto protocol = parse_json(spec.protocol_json.empty() ? "{}" : spec.protocol_json, "protocol options");
  if (!protocol) return protocol.err();
  if (!protocol->is_object()) return make_error("protocol options: expected a JSON object");
  std::set<std::string> workloads(spec.workloads.begin(), spec.workloads.end());
  if (workloads.count("")) return make_error("job: empty workload uuid");

  sorted_json doc{{"kind", std::string(to_string(spec.kind))},
                  {"protocol", canonical(*protocol, true)},
                  {"solution", std::move(*solution)},
                  {"target", spec.target},
                  {"task", spec.task},
                  {"workloads", workloads}};
  try {
    return doc.dump(-1, ' ', false, sorted_json::error_handler_t::strict);
  } catch (const sorted_json::exception&) {
    return make_error("job: a string is not valid UTF-8");
  }
}

result<std::string> content_key(const job_spec& spec) {
  auto text = canonical_job_text(spec);
  if (!text) return text.err();
  return sha256_builder().update("ptxbench-job-key/1").update(*text).hex_digest();
}

}  // namespace ptxbench::queue
