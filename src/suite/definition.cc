#include "suite/definition.h"

#include <set>

#include <fmt/format.h>

namespace ptxbench {

const axis* definition::find_axis(const std::string& axis_name) const {
  for (const auto& a : axes)
    if (a.name == axis_name) return &a;
  return nullptr;
}

const tensor_spec* definition::find_input(const std::string& input_name) const {
  for (const auto& t : inputs)
    if (t.name == input_name) return &t;
  return nullptr;
}

namespace {

void read_axes(const ordered_json& j, const std::string& path, definition& d, json_errors& errs) {
  if (!expect_object(j, path, errs)) return;
  for (const auto& item : j.items()) {
    std::string here = json_child(path, item.key());
    const auto& a = item.value();
    if (!expect_object(a, here, errs)) continue;
    reject_unknown_keys(a, {"type", "value", "description"}, here, errs);
    axis ax;
    ax.name = item.key();
    auto type = get_string(a, "type", here, errs);
    if (type && *type == "const") {
      ax.is_const = true;
      if (auto v = get_int(a, "value", here, errs)) {
        if (*v < 0) errs.add(json_child(here, "value"), "expected an integer >= 0");
        ax.value = *v;
      }
    } else if (type && *type == "var") {
      if (a.contains("value")) errs.add(json_child(here, "value"), "a var axis takes its value from the workload");
    } else if (type) {
      errs.add(json_child(here, "type"), fmt::format("expected \"const\" or \"var\", got \"{}\"", *type));
    }
    ax.description = get_string(a, "description", here, errs, false, false).value_or("");
    d.axes.push_back(std::move(ax));
  }
}

void read_tensors(const ordered_json& j, const std::string& path, std::vector<tensor_spec>& out,
                  json_errors& errs) {
  if (!expect_object(j, path, errs)) return;
  for (const auto& item : j.items()) {
    std::string here = json_child(path, item.key());
    const auto& t = item.value();
    if (!expect_object(t, here, errs)) continue;
    reject_unknown_keys(t, {"shape", "dtype", "description"}, here, errs);
    tensor_spec spec;
    spec.name = item.key();
    if (!t.contains("shape")) {
      errs.add(json_child(here, "shape"), "missing required field (use null for a scalar)");
    } else if (!t["shape"].is_null()) {
      auto shape = get_string_list(t, "shape", here, errs);
      if (shape) spec.shape = *shape;
    }
    if (auto dt = get_string(t, "dtype", here, errs)) {
      if (auto parsed = parse_dtype(*dt)) spec.type = *parsed;
      else errs.add(json_child(here, "dtype"), fmt::format("unknown dtype \"{}\" (expected one of: {})", *dt, dtype_choices()));
    }
    spec.description = get_string(t, "description", here, errs, false, false).value_or("");
    out.push_back(std::move(spec));
  }
}

void check_cross_references(const definition& d, const std::string& path, json_errors& errs) {
  std::set<std::string> input_names;
  for (const auto& t : d.inputs) input_names.insert(t.name);
  for (const auto& t : d.outputs)
    if (input_names.count(t.name))
      errs.add(json_child(json_child(path, "outputs"), t.name), "an output may not share a name with an input");
  auto check_shapes = [&](const std::vector<tensor_spec>& ts, const char* field) {
    for (const auto& t : ts) {
      if (!t.shape) continue;
      for (std::size_t i = 0; i < t.shape->size(); ++i)
        if (!d.find_axis((*t.shape)[i]))
          errs.add(json_index(json_child(json_child(json_child(path, field), t.name), "shape"), i),
                   fmt::format("axis \"{}\" is not declared in axes", (*t.shape)[i]));
    }
  };
  check_shapes(d.inputs, "inputs");
  check_shapes(d.outputs, "outputs");
  // We cannot parse Python here; the cheap check catches a reference without its entry function.
  if (!d.reference.empty() && d.reference.find("def run(") == std::string::npos)
    errs.add(json_child(path, "reference"), "the reference must define a top-level run(...)");
}

}  // namespace

result<definition> definition_from_json(const ordered_json& j, const std::string& path) {
  json_errors errs;
  if (!expect_object(j, path, errs)) return errs.to_error();
  reject_unknown_keys(j, {"name", "op_type", "axes", "inputs", "outputs", "reference", "tags", "description",
                          "constraints"}, path, errs);
  definition d;
  d.name = get_string(j, "name", path, errs).value_or("");
  d.op_type = get_string(j, "op_type", path, errs).value_or("");
  if (j.contains("axes")) read_axes(j["axes"], json_child(path, "axes"), d, errs);
  else errs.add(json_child(path, "axes"), "missing required field");
  if (j.contains("inputs")) read_tensors(j["inputs"], json_child(path, "inputs"), d.inputs, errs);
  else errs.add(json_child(path, "inputs"), "missing required field");
  if (j.contains("outputs")) read_tensors(j["outputs"], json_child(path, "outputs"), d.outputs, errs);
  else errs.add(json_child(path, "outputs"), "missing required field");
  d.reference = get_string(j, "reference", path, errs).value_or("");
  d.tags = get_string_list(j, "tags", path, errs, false).value_or(std::vector<std::string>{});
  d.description = get_string(j, "description", path, errs, false, false).value_or("");
  d.constraints = get_string_list(j, "constraints", path, errs, false).value_or(std::vector<std::string>{});
  if (errs.empty()) check_cross_references(d, path, errs);
  if (!errs.empty()) return errs.to_error();
  return d;
}

ordered_json to_json(const definition& d) {
  ordered_json j;
  j["name"] = d.name;
  j["op_type"] = d.op_type;
  j["description"] = d.description;
  j["tags"] = d.tags;
  ordered_json axes = ordered_json::object();
  for (const auto& a : d.axes) {
    ordered_json aj;
    aj["type"] = a.is_const ? "const" : "var";
    if (a.is_const) aj["value"] = a.value;
    if (!a.description.empty()) aj["description"] = a.description;
    axes[a.name] = aj;
  }
  j["axes"] = axes;
  if (!d.constraints.empty()) j["constraints"] = d.constraints;
  auto tensors = [](const std::vector<tensor_spec>& ts) {
    ordered_json out = ordered_json::object();
    for (const auto& t : ts) {
      ordered_json tj;
      tj["shape"] = t.shape ? ordered_json(*t.shape) : ordered_json(nullptr);
      tj["dtype"] = std::string(dtype_name(t.type));
      if (!t.description.empty()) tj["description"] = t.description;
      out[t.name] = tj;
    }
    return out;
  };
  j["inputs"] = tensors(d.inputs);
  j["outputs"] = tensors(d.outputs);
  j["reference"] = d.reference;
  return j;
}

}  // namespace ptxbench
