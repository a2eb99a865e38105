#pragma once
// Strict reading of JSON documents: every complaint names the JSON path ("workload.axes.M") and what
// was expected, so a person can fix the file without reading our code.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ptxbench {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

/// Parses text as JSON; on failure the error says "<what>: invalid JSON at line L, column C: ...".
result<ordered_json> parse_json(const std::string& text, const std::string& what);

/// Pretty-prints with 2-space indentation but keeps arrays of numbers/strings on one line, which is
/// far easier to read (and cheaper in tokens) for shapes and lists.
std::string dump_pretty(const ordered_json& j);

/// Returns "object", "array", "string", "integer", "number", "boolean" or "null".
std::string json_type_name(const ordered_json& j);

/// Collects validation failures; the first one becomes the error a caller reports.
class json_errors {
 public:
  void add(const std::string& path, const std::string& message);
  [[nodiscard]] bool empty() const { return m_items.empty(); }
  [[nodiscard]] const std::vector<std::string>& items() const { return m_items; }
  /// The first failure, plus "(and N more)" when there are others.
  [[nodiscard]] error to_error() const;

 private:
  std::vector<std::string> m_items;
};

/// Joins a path and a key: ("workload", "axes") -> "workload.axes".
std::string json_child(const std::string& path, std::string_view key);
/// ("inputs.A.shape", 1) -> "inputs.A.shape[1]".
std::string json_index(const std::string& path, std::size_t index);

/// Checks that j is an object; records "expected object, got T" otherwise.
bool expect_object(const ordered_json& j, const std::string& path, json_errors& errs);
bool expect_array(const ordered_json& j, const std::string& path, json_errors& errs);

/// Records an error for every key of obj not in allowed ("unknown field 'x' (expected one of ...)").
void reject_unknown_keys(const ordered_json& obj, std::initializer_list<std::string_view> allowed,
                         const std::string& path, json_errors& errs);

/// Field getters: return nullopt and record an error when the field is missing (if required) or has
/// the wrong type. Optional fields that are absent (or null, where null_ok) return nullopt silently.
std::optional<std::string> get_string(const ordered_json& obj, std::string_view key, const std::string& path,
                                      json_errors& errs, bool required = true, bool non_empty = true);
std::optional<int64_t> get_int(const ordered_json& obj, std::string_view key, const std::string& path,
                               json_errors& errs, bool required = true);
std::optional<double> get_number(const ordered_json& obj, std::string_view key, const std::string& path,
                                 json_errors& errs, bool required = true);
std::optional<bool> get_bool(const ordered_json& obj, std::string_view key, const std::string& path,
                             json_errors& errs, bool required = true);
/// Returns the list of strings at key (each element checked).
std::optional<std::vector<std::string>> get_string_list(const ordered_json& obj, std::string_view key,
                                                        const std::string& path, json_errors& errs,
                                                        bool required = true);

}  // namespace ptxbench
