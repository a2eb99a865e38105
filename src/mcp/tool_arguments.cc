#include "mcp/tool_arguments.h"

#include <fmt/format.h>

namespace ptxbench::mcp {
namespace {

// Every failure names the argument ("arguments.task: expected string, got integer").
constexpr const char* k_path = "arguments";

status check_object(const ordered_json& a, std::initializer_list<std::string_view> allowed, json_errors& errs) {
  if (!expect_object(a, k_path, errs)) return errs.to_error();
  reject_unknown_keys(a, allowed, k_path, errs);
  return ok();
}

std::optional<std::string> optional_string(const ordered_json& a, std::string_view key, json_errors& errs) {
  return get_string(a, key, k_path, errs, false, true);
}

}  // namespace

status read_list_arguments(const ordered_json& a) {
  json_errors errs;
  if (!expect_object(a, k_path, errs)) return errs.to_error();
  if (!a.empty()) return make_error(fmt::format("{}.{}: unknown field (list_tasks takes no arguments)", k_path, a.begin().key()));
  return ok();
}

result<show_arguments> read_show_arguments(const ordered_json& a) {
  json_errors errs;
  if (auto st = check_object(a, {"task", "target", "variant"}, errs); !st) return st.err();
  show_arguments out;
  out.task = get_string(a, "task", k_path, errs).value_or("");
  out.target = optional_string(a, "target", errs);
  out.variant = optional_string(a, "variant", errs);
  if (!errs.empty()) return errs.to_error();
  return out;
}

result<kernel_arguments> read_kernel_arguments(const ordered_json& a) {
  json_errors errs;
  if (auto st = check_object(a, {"task", "source", "path", "target", "language"}, errs); !st) return st.err();
  kernel_arguments out;
  out.task = get_string(a, "task", k_path, errs).value_or("");
  // An empty source is the tool's error (no kernel), not a schema violation: get it as it is.
  out.source = get_string(a, "source", k_path, errs, false, false);
  out.path = optional_string(a, "path", errs);
  out.target = optional_string(a, "target", errs);
  out.language = optional_string(a, "language", errs);
  if (out.language && *out.language != "cuda" && *out.language != "triton")
    errs.add("arguments.language", fmt::format("'{}' is not cuda or triton", *out.language));
  if (errs.empty() && out.source.has_value() == out.path.has_value())
    errs.add(k_path, "give exactly one of source (the kernel as text) and path (a kernel file)");
  if (errs.empty() && out.path && out.language)
    errs.add("arguments.language", "goes with source; a path's extension (.cu or .py) gives its language");
  if (!errs.empty()) return errs.to_error();
  return out;
}

}  // namespace ptxbench::mcp
