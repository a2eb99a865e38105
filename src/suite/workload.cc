#include "suite/workload.h"

#include <fmt/format.h>

namespace ptxbench {

input_spec workload::input(const std::string& name) const {
  for (const auto& [n, spec] : inputs)
    if (n == name) return spec;
  return input_spec{};
}

namespace {

std::optional<input_spec> read_input(const ordered_json& j, const std::string& path, json_errors& errs) {
  if (!expect_object(j, path, errs)) return std::nullopt;
  auto type = get_string(j, "type", path, errs);
  if (!type) return std::nullopt;
  input_spec spec;
  if (*type == "random") {
    reject_unknown_keys(j, {"type"}, path, errs);
  } else if (*type == "scalar") {
    reject_unknown_keys(j, {"type", "value"}, path, errs);
    spec.kind = input_kind::scalar;
    if (!j.contains("value") || !(j["value"].is_number() || j["value"].is_boolean()))
      errs.add(json_child(path, "value"), "expected a number or boolean");
    else
      spec.scalar_value = j["value"];
  } else if (*type == "safetensors") {
    reject_unknown_keys(j, {"type", "path", "tensor_key"}, path, errs);
    spec.kind = input_kind::safetensors;
    spec.path = get_string(j, "path", path, errs).value_or("");
    spec.tensor_key = get_string(j, "tensor_key", path, errs).value_or("");
  } else if (*type == "derived") {
    reject_unknown_keys(j, {"type", "generator", "values"}, path, errs);
    spec.kind = input_kind::derived;
    spec.generator = get_string(j, "generator", path, errs).value_or("");
    if (j.contains("values")) {
      std::string vp = json_child(path, "values");
      if (expect_array(j["values"], vp, errs)) {
        std::vector<int64_t> values;
        for (std::size_t i = 0; i < j["values"].size(); ++i) {
          if (j["values"][i].is_number_integer()) values.push_back(j["values"][i].get<int64_t>());
          else errs.add(json_index(vp, i), "expected integer, got " + json_type_name(j["values"][i]));
        }
        spec.values = std::move(values);
      }
    }
  } else {
    errs.add(json_child(path, "type"),
             fmt::format("expected \"random\", \"scalar\", \"safetensors\" or \"derived\", got \"{}\"", *type));
    return std::nullopt;
  }
  return spec;
}

}  // namespace

result<workload> workload_from_json(const ordered_json& j, const std::string& path) {
  json_errors errs;
  if (!expect_object(j, path, errs)) return errs.to_error();
  reject_unknown_keys(j, {"uuid", "axes", "inputs", "outputs"}, path, errs);
  workload w;
  w.uuid = get_string(j, "uuid", path, errs).value_or("");
  if (!j.contains("axes")) {
    errs.add(json_child(path, "axes"), "missing required field");
  } else if (expect_object(j["axes"], json_child(path, "axes"), errs)) {
    for (const auto& item : j["axes"].items()) {
      std::string here = json_child(json_child(path, "axes"), item.key());
      if (!item.value().is_number_integer()) errs.add(here, "expected integer, got " + json_type_name(item.value()));
      else w.axes.emplace_back(item.key(), item.value().get<int64_t>());
    }
  }
  if (j.contains("inputs") && expect_object(j["inputs"], json_child(path, "inputs"), errs)) {
    for (const auto& item : j["inputs"].items())
      if (auto spec = read_input(item.value(), json_child(json_child(path, "inputs"), item.key()), errs))
        w.inputs.emplace_back(item.key(), *spec);
  }
  if (!errs.empty()) return errs.to_error();
  return w;
}

ordered_json to_json(const workload& w) {
  ordered_json j;
  j["uuid"] = w.uuid;
  ordered_json axes = ordered_json::object();
  for (const auto& [k, v] : w.axes) axes[k] = v;
  j["axes"] = axes;
  ordered_json inputs = ordered_json::object();
  for (const auto& [name, spec] : w.inputs) {
    ordered_json ij;
    switch (spec.kind) {
      case input_kind::random: ij["type"] = "random"; break;
      case input_kind::scalar: ij["type"] = "scalar"; ij["value"] = spec.scalar_value; break;
      case input_kind::safetensors:
        ij["type"] = "safetensors"; ij["path"] = spec.path; ij["tensor_key"] = spec.tensor_key; break;
      case input_kind::derived:
        ij["type"] = "derived";
        ij["generator"] = spec.generator;
        if (spec.values) ij["values"] = *spec.values;
        break;
    }
    inputs[name] = ij;
  }
  j["inputs"] = inputs;
  return j;
}

status validate_workload(const workload& w, const definition& d, const std::string& path) {
  json_errors errs;
  for (const auto& [name, value] : w.axes) {
    std::string here = json_child(json_child(path, "axes"), name);
    const axis* a = d.find_axis(name);
    if (!a) errs.add(here, fmt::format("definition {} has no axis \"{}\"", d.name, name));
    else if (a->is_const && a->value != value)
      errs.add(here, fmt::format("axis is const {} in the definition, got {}", a->value, value));
    else if (value < 1) errs.add(here, "expected an integer >= 1");
  }
  for (const auto& a : d.axes) {
    if (a.is_const) continue;
    bool found = false;
    for (const auto& [name, value] : w.axes) found = found || name == a.name;
    if (!found) errs.add(json_child(json_child(path, "axes"), a.name), "missing value for var axis");
  }
  for (const auto& [name, spec] : w.inputs) {
    std::string here = json_child(json_child(path, "inputs"), name);
    const tensor_spec* t = d.find_input(name);
    if (!t) { errs.add(here, fmt::format("definition {} has no input \"{}\"", d.name, name)); continue; }
    if (spec.kind == input_kind::scalar && t->shape) errs.add(here, "a scalar value for a tensor input");
    if (spec.kind != input_kind::scalar && !t->shape && spec.kind != input_kind::random)
      errs.add(here, "a scalar input needs {\"type\": \"scalar\"}");
  }
  for (const auto& t : d.inputs) {
    if (t.shape) continue;
    bool given = false;
    for (const auto& [name, spec] : w.inputs) given = given || (name == t.name && spec.kind == input_kind::scalar);
    if (!given) errs.add(json_child(json_child(path, "inputs"), t.name), "scalar input needs a value");
  }
  if (!errs.empty()) return errs.to_error();
  return ok();
}

std::map<std::string, int64_t> resolve_axes(const workload& w, const definition& d) {
  std::map<std::string, int64_t> out;
  for (const auto& a : d.axes)
    if (a.is_const) out[a.name] = a.value;
  for (const auto& [k, v] : w.axes) out[k] = v;
  return out;
}

std::vector<int64_t> concrete_shape(const tensor_spec& t, const std::map<std::string, int64_t>& axes) {
  std::vector<int64_t> out;
  if (!t.shape) return out;
  for (const auto& name : *t.shape) {
    auto it = axes.find(name);
    out.push_back(it == axes.end() ? -1 : it->second);
  }
  return out;
}

}  // namespace ptxbench
