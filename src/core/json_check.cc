#include "core/json_check.h"

#include <fmt/format.h>

namespace ptxbench {

result<ordered_json> parse_json(const std::string& text, const std::string& what) {
  try {
    return ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    std::size_t pos = e.byte > 0 ? e.byte - 1 : 0;
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
    std::string msg = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column 2: "; keep the tail.
    if (auto p = msg.rfind(": "); p != std::string::npos) msg = msg.substr(p + 2);
    // Parsing that ran out of text is a cut-off file (a copy or a write that stopped), which the
    // parser's own words ("unexpected end of input") do not make plain.
    if (e.byte > text.size() || (e.byte == text.size() && msg.find("end of input") != std::string::npos))
      return make_error(fmt::format("{}: invalid JSON at line {}, column {}: the text ends early (a truncated file?): {}",
                                    what, line, col, msg));
    return make_error(fmt::format("{}: invalid JSON at line {}, column {}: {}", what, line, col, msg));
  }
}

static void dump_into(const ordered_json& j, int indent, std::string& out) {
  auto pad = [&](int n) { out.append(static_cast<std::size_t>(n), ' '); };
  if (j.is_object() && !j.empty()) {
    out += "{\n";
    std::size_t i = 0;
    for (const auto& item : j.items()) {
      pad(indent + 2);
      out += ordered_json(item.key()).dump() + ": ";
      dump_into(item.value(), indent + 2, out);
      out += ++i < j.size() ? ",\n" : "\n";
    }
    pad(indent);
    out += "}";
    return;
  }
  if (j.is_array() && !j.empty()) {
    bool flat = true;
    for (const auto& e : j) flat = flat && e.is_primitive();
    if (flat) { out += j.dump(); return; }
    out += "[\n";
    for (std::size_t i = 0; i < j.size(); ++i) {
      pad(indent + 2);
      dump_into(j[i], indent + 2, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    pad(indent);
    out += "]";
    return;
  }
  out += j.dump();
}

std::string dump_pretty(const ordered_json& j) {
  std::string out;
  dump_into(j, 0, out);
  return out;
}

std::string json_type_name(const ordered_json& j) {
  switch (j.type()) {
    case ordered_json::value_t::object: return "object";
    case ordered_json::value_t::array: return "array";
    case ordered_json::value_t::string: return "string";
    case ordered_json::value_t::number_integer:
    case ordered_json::value_t::number_unsigned: return "integer";
    case ordered_json::value_t::number_float: return "number";
    case ordered_json::value_t::boolean: return "boolean";
    case ordered_json::value_t::null: return "null";
    default: return "unknown";
  }
}

void json_errors::add(const std::string& path, const std::string& message) {
  m_items.push_back(path.empty() ? message : path + ": " + message);
}

error json_errors::to_error() const {
  if (m_items.empty()) return make_error("no error");
  if (m_items.size() == 1) return make_error(m_items.front());
  return make_error(fmt::format("{} (and {} more)", m_items.front(), m_items.size() - 1));
}

std::string json_child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string json_index(const std::string& path, std::size_t index) { return fmt::format("{}[{}]", path, index); }

bool expect_object(const ordered_json& j, const std::string& path, json_errors& errs) {
  if (j.is_object()) return true;
  errs.add(path, "expected object, got " + json_type_name(j));
  return false;
}

bool expect_array(const ordered_json& j, const std::string& path, json_errors& errs) {
  if (j.is_array()) return true;
  errs.add(path, "expected array, got " + json_type_name(j));
  return false;
}

void reject_unknown_keys(const ordered_json& obj, std::initializer_list<std::string_view> allowed,
                         const std::string& path, json_errors& errs) {
  if (!obj.is_object()) return;
  for (const auto& item : obj.items()) {
    bool known = false;
    for (auto a : allowed) known = known || item.key() == a;
    if (known) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    errs.add(json_child(path, item.key()), fmt::format("unknown field (expected one of: {})", list));
  }
}

namespace {

const ordered_json* lookup(const ordered_json& obj, std::string_view key, const std::string& path,
                           json_errors& errs, bool required) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) {
    if (required) errs.add(json_child(path, key), "missing required field");
    return nullptr;
  }
  return &*it;
}

}  // namespace

std::optional<std::string> get_string(const ordered_json& obj, std::string_view key, const std::string& path,
                                      json_errors& errs, bool required, bool non_empty) {
  const auto* v = lookup(obj, key, path, errs, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    errs.add(json_child(path, key), "expected string, got " + json_type_name(*v));
    return std::nullopt;
  }
  auto s = v->get<std::string>();
  if (non_empty && s.empty()) {
    errs.add(json_child(path, key), "expected a non-empty string");
    return std::nullopt;
  }
  return s;
}

std::optional<int64_t> get_int(const ordered_json& obj, std::string_view key, const std::string& path,
                               json_errors& errs, bool required) {
  const auto* v = lookup(obj, key, path, errs, required);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    errs.add(json_child(path, key), "expected integer, got " + json_type_name(*v));
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<double> get_number(const ordered_json& obj, std::string_view key, const std::string& path,
                                 json_errors& errs, bool required) {
  const auto* v = lookup(obj, key, path, errs, required);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    errs.add(json_child(path, key), "expected number, got " + json_type_name(*v));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<bool> get_bool(const ordered_json& obj, std::string_view key, const std::string& path,
                             json_errors& errs, bool required) {
  const auto* v = lookup(obj, key, path, errs, required);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    errs.add(json_child(path, key), "expected boolean, got " + json_type_name(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<std::vector<std::string>> get_string_list(const ordered_json& obj, std::string_view key,
                                                        const std::string& path, json_errors& errs,
                                                        bool required) {
  const auto* v = lookup(obj, key, path, errs, required);
  if (!v) return std::nullopt;
  std::string here = json_child(path, key);
  if (!expect_array(*v, here, errs)) return std::nullopt;
  std::vector<std::string> out;
  bool good = true;
  for (std::size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      errs.add(json_index(here, i), "expected string, got " + json_type_name((*v)[i]));
      good = false;
    } else {
      out.push_back((*v)[i].get<std::string>());
    }
  }
  if (!good) return std::nullopt;
  return out;
}

}  // namespace ptxbench
