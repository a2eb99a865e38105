#include "supervision/json_schema.h"

#include <set>

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::supervision {
namespace {

const std::set<std::string> k_keywords = {"type",      "properties", "required",  "additionalProperties",
                                          "items",     "minItems",   "maxItems",  "minLength",
                                          "maxLength", "enum"};
const std::set<std::string> k_annotations = {"$schema", "$id", "title", "description", "examples"};
const std::set<std::string> k_types = {"object", "array", "string", "integer", "number", "boolean", "null"};

status check_schema(const ordered_json& s, const std::string& path) {
  if (!s.is_object()) return make_error(fmt::format("schema {}: expected an object", path.empty() ? "(root)" : path));
  for (const auto& [key, value] : s.items()) {
    std::string here = json_child(path, key);
    if (k_annotations.count(key)) continue;
    if (!k_keywords.count(key)) return make_error(fmt::format("schema {}: unsupported keyword", here));
    if (key == "type" && (!value.is_string() || !k_types.count(value.get<std::string>())))
      return make_error(fmt::format("schema {}: expected one type name", here));
    if (key == "properties") {
      if (!value.is_object()) return make_error(fmt::format("schema {}: expected an object", here));
      for (const auto& [name, sub] : value.items())
        if (auto st = check_schema(sub, json_child(here, name)); !st) return st;
    }
    if (key == "items")
      if (auto st = check_schema(value, here); !st) return st;
    if (key == "additionalProperties" && !value.is_boolean())
      return make_error(fmt::format("schema {}: only true or false is supported", here));
    if ((key == "required" || key == "enum") && !value.is_array())
      return make_error(fmt::format("schema {}: expected an array", here));
    if (key.rfind("min", 0) == 0 || key.rfind("max", 0) == 0)
      if (!value.is_number_unsigned()) return make_error(fmt::format("schema {}: expected a non-negative integer", here));
  }
  return ok();
}

bool has_type(const ordered_json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  return v.is_null();
}

void validate_at(const ordered_json& s, const ordered_json& v, const std::string& path, json_errors& errs) {
  const std::string where = path.empty() ? "(root)" : path;
  if (s.contains("type")) {
    std::string type = s["type"].get<std::string>();
    if (!has_type(v, type)) {
      errs.add(where, fmt::format("expected {}, got {}", type, json_type_name(v)));
      return;
    }
  }
  if (s.contains("enum")) {
    bool found = false;
    for (const auto& e : s["enum"]) found = found || e == v;
    if (!found) errs.add(where, fmt::format("expected one of {}, got {}", s["enum"].dump(), v.dump()));
  }
  if (v.is_string()) {
    std::size_t n = utf8_length(v.get<std::string>());
    if (s.contains("minLength") && n < s["minLength"].get<std::size_t>())
      errs.add(where, n == 0 ? std::string("must not be empty")
                             : fmt::format("too short: {} characters, at least {}", n, s["minLength"].get<std::size_t>()));
    if (s.contains("maxLength") && n > s["maxLength"].get<std::size_t>())
      errs.add(where, fmt::format("too long: {} characters, at most {}", n, s["maxLength"].get<std::size_t>()));
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>())
      errs.add(where, fmt::format("{} items, at least {}", v.size(), s["minItems"].get<std::size_t>()));
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<std::size_t>())
      errs.add(where, fmt::format("{} items, at most {}", v.size(), s["maxItems"].get<std::size_t>()));
    if (s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i) validate_at(s["items"], v[i], json_index(path, i), errs);
  }
  if (v.is_object()) {
    if (s.contains("required"))
      for (const auto& name : s["required"])
        if (name.is_string() && !v.contains(name.get<std::string>()))
          errs.add(json_child(path, name.get<std::string>()), "missing required field");
    const ordered_json* props = s.contains("properties") ? &s["properties"] : nullptr;
    for (const auto& [key, value] : v.items()) {
      if (props && props->contains(key)) {
        validate_at((*props)[key], value, json_child(path, key), errs);
      } else if (s.contains("additionalProperties") && !s["additionalProperties"].get<bool>()) {
        std::string known;
        if (props)
          for (const auto& [name, _] : props->items()) known += (known.empty() ? "" : ", ") + name;
        errs.add(json_child(path, key), fmt::format("unknown field (expected one of: {})", known));
      }
    }
  }
}

}  // namespace

result<json_schema> json_schema::parse(const std::string& text) {
  auto j = parse_json(text, "schema");
  if (!j) return j.err();
  if (auto st = check_schema(*j, ""); !st) return st.err();
  json_schema s;
  s.m_schema = std::move(*j);
  return s;
}

status json_schema::validate(const ordered_json& document) const {
  json_errors errs;
  validate_at(m_schema, document, "", errs);
  if (!errs.empty()) return errs.to_error();
  return ok();
}

std::vector<std::string> json_schema::problems(const ordered_json& document) const {
  json_errors errs;
  validate_at(m_schema, document, "", errs);
  return errs.items();
}

}  // namespace ptxbench::supervision
