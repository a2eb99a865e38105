#include "sandbox/sandbox_policy.h"

#include <set>

#include <fmt/format.h>

namespace ptxbench::sandbox {
namespace fs = std::filesystem;
using nlohmann::ordered_json;

std::vector<fs::path> default_read_paths(const fs::path& candidate_so, const fs::path& cuda_root) {
  // "/proc/self" is opened when the rule is added, in the runner, so it names the runner's own
  // /proc/<pid> (and /proc/thread-self beneath it), not the harness's, nor any other process's.
  // "/proc/self/exe" likewise becomes the runner's own binary (tools read it for host backtraces).
  std::vector<fs::path> out = {"/usr",  "/lib", "/lib64", "/etc", "/opt", "/sys", "/proc/driver/nvidia", "/proc/self",
                               "/proc/self/exe"};
  if (!cuda_root.empty()) out.push_back(cuda_root);
  // Only the candidate's own file, not its folder: the build cache holds every other candidate.
  if (!candidate_so.empty()) out.push_back(candidate_so);
  return out;
}

sandbox_policy runner_policy(const fs::path& scratch_dir, const fs::path& candidate_so, const fs::path& cuda_root,
                             tool_mode tool) {
  sandbox_policy p;
  p.tool = tool;
  p.scratch_dir = scratch_dir;
  p.read_paths = default_read_paths(candidate_so, cuda_root);
  return p;
}

std::string to_string(enforcement e) { return e == enforcement::audit ? "audit" : "enforce"; }

std::string to_string(tool_mode t) {
  switch (t) {
    case tool_mode::none: return "none";
    case tool_mode::compute_sanitizer: return "compute-sanitizer";
    case tool_mode::nsight_compute: return "nsight-compute";
  }
  return "none";
}

namespace {

ordered_json paths_json(const std::vector<fs::path>& paths) {
  ordered_json a = ordered_json::array();
  for (const auto& p : paths) a.push_back(p.string());
  return a;
}

// Small strict reader: every complaint names the field. Written here rather than using
// core/json_check so this library needs nothing of the rest of the project but core/result.h.
struct reader {
  const ordered_json& obj;
  std::string error;

  void fail(const std::string& key, const std::string& what) {
    if (error.empty()) error = fmt::format("sandbox policy: '{}' {}", key, what);
  }
  template <typename T>
  void get(const char* key, T& out, const char* type, bool (ordered_json::*is)() const noexcept) {
    if (!obj.contains(key)) return;
    const auto& v = obj.at(key);
    if (!(v.*is)()) return fail(key, fmt::format("must be {}", type));
    out = v.get<T>();
  }
  void get_paths(const char* key, std::vector<fs::path>& out) {
    if (!obj.contains(key)) return;
    const auto& v = obj.at(key);
    if (!v.is_array()) return fail(key, "must be an array of paths");
    out.clear();
    for (const auto& e : v) {
      if (!e.is_string() || e.get<std::string>().empty()) return fail(key, "must hold non-empty strings");
      out.emplace_back(e.get<std::string>());
    }
  }
};

}  // namespace

ordered_json to_json(const sandbox_policy& p) {
  ordered_json limits = {{"open_files", p.limits.open_files},
                         {"file_size_bytes", p.limits.file_size_bytes},
                         {"no_core_dumps", p.limits.no_core_dumps},
                         {"cpu_seconds", p.limits.cpu_seconds},
                         {"data_bytes", p.limits.data_bytes}};
  return {{"mode", to_string(p.mode)},
          {"tool", to_string(p.tool)},
          {"scratch_dir", p.scratch_dir.string()},
          {"read_paths", paths_json(p.read_paths)},
          {"device_paths", paths_json(p.device_paths)},
          {"extra_write_paths", paths_json(p.extra_write_paths)},
          {"allow_network", p.allow_network},
          {"limits", limits},
          {"violation_fd", p.violation_fd},
          {"required", p.required},
          {"disabled", p.disabled}};
}

result<sandbox_policy> policy_from_json(const ordered_json& j) {
  if (!j.is_object()) return make_error("sandbox policy: expected an object");
  static const std::set<std::string> known = {"mode", "tool", "scratch_dir", "read_paths", "device_paths",
                                              "extra_write_paths", "allow_network", "limits", "violation_fd",
                                              "required", "disabled"};
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) return make_error(fmt::format("sandbox policy: unknown field '{}'", key));
  sandbox_policy p;
  reader r{j, ""};
  std::string mode = "enforce", tool = "none", scratch;
  r.get("mode", mode, "a string", &ordered_json::is_string);
  r.get("tool", tool, "a string", &ordered_json::is_string);
  r.get("scratch_dir", scratch, "a string", &ordered_json::is_string);
  r.get_paths("read_paths", p.read_paths);
  r.get_paths("device_paths", p.device_paths);
  r.get_paths("extra_write_paths", p.extra_write_paths);
  r.get("allow_network", p.allow_network, "a boolean", &ordered_json::is_boolean);
  r.get("violation_fd", p.violation_fd, "an integer", &ordered_json::is_number_integer);
  if (j.contains("required")) {
    const auto& req = j.at("required");
    if (!req.is_array()) r.fail("required", "must be an array of protection names");
    else {
      p.required.clear();
      static const std::set<std::string> names = {"no_new_privs", "seccomp", "landlock", "network_namespace",
                                                  "capabilities", "rlimits"};
      for (const auto& n : req) {
        if (!n.is_string() || !names.count(n.get<std::string>()))
          r.fail("required", "holds an unknown protection (expected no_new_privs, seccomp, landlock, "
                             "network_namespace, capabilities, rlimits)");
        else p.required.push_back(n.get<std::string>());
      }
    }
  }
  if (j.contains("disabled")) {
    const auto& dis = j.at("disabled");
    static const std::set<std::string> names = {"seccomp", "landlock", "network_namespace", "capabilities"};
    if (!dis.is_array()) r.fail("disabled", "must be an array of protection names");
    else
      for (const auto& n : dis) {
        if (!n.is_string() || !names.count(n.get<std::string>()))
          r.fail("disabled", "holds a protection that cannot be disabled (expected seccomp, landlock, "
                             "network_namespace, capabilities)");
        else p.disabled.push_back(n.get<std::string>());
      }
  }
  if (j.contains("limits")) {
    const auto& l = j.at("limits");
    if (!l.is_object()) r.fail("limits", "must be an object");
    else {
      reader lr{l, ""};
      for (const auto& [key, value] : l.items())
        if (key != "open_files" && key != "file_size_bytes" && key != "no_core_dumps" && key != "cpu_seconds" &&
            key != "data_bytes")
          lr.fail("limits." + key, "is not a known limit");
      lr.get("open_files", p.limits.open_files, "an unsigned integer", &ordered_json::is_number_unsigned);
      lr.get("file_size_bytes", p.limits.file_size_bytes, "an unsigned integer", &ordered_json::is_number_unsigned);
      lr.get("no_core_dumps", p.limits.no_core_dumps, "a boolean", &ordered_json::is_boolean);
      lr.get("cpu_seconds", p.limits.cpu_seconds, "an unsigned integer", &ordered_json::is_number_unsigned);
      lr.get("data_bytes", p.limits.data_bytes, "an unsigned integer", &ordered_json::is_number_unsigned);
      if (!lr.error.empty() && r.error.empty()) r.error = lr.error;
    }
  }
  if (!r.error.empty()) return make_error(r.error);
  if (mode == "enforce") p.mode = enforcement::enforce;
  else if (mode == "audit") p.mode = enforcement::audit;
  else return make_error(fmt::format("sandbox policy: 'mode' must be enforce or audit, got '{}'", mode));
  if (tool == "none") p.tool = tool_mode::none;
  else if (tool == "compute-sanitizer") p.tool = tool_mode::compute_sanitizer;
  else if (tool == "nsight-compute") p.tool = tool_mode::nsight_compute;
  else
    return make_error(fmt::format(
        "sandbox policy: 'tool' must be none, compute-sanitizer or nsight-compute, got '{}'", tool));
  if (scratch.empty()) return make_error("sandbox policy: 'scratch_dir' is required");
  p.scratch_dir = scratch;
  return p;
}

}  // namespace ptxbench::sandbox
