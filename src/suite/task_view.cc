#include "suite/task_view.h"

namespace ptxbench {

ordered_json task_view_json(const task& t) {
  ordered_json def = to_json(t.def);
  def.erase("tags");
  auto axes = resolve_axes(t.wl, t.def);
  ordered_json axis_values = ordered_json::object();
  for (const auto& a : t.def.axes) axis_values[a.name] = axes[a.name];
  ordered_json shapes = ordered_json::object();
  auto add_shapes = [&](const std::vector<tensor_spec>& ts) {
    for (const auto& ts_item : ts)
      shapes[ts_item.name] = ts_item.shape ? ordered_json(concrete_shape(ts_item, axes)) : ordered_json("scalar");
  };
  add_shapes(t.def.inputs);
  add_shapes(t.def.outputs);
  def["workload"] = {{"uuid", t.wl.uuid}, {"axes", axis_values}, {"shapes", shapes}};
  return def;
}

ordered_json task_summary_json(const task& t, const suite& s) {
  ordered_json targets = ordered_json::array();
  for (const auto& name : t.targets) {
    const target_info* ti = s.find_target(name);
    if (!ti) continue;  // load_suite checks every task's targets; this only guards a hand-made suite
    targets.push_back({{"name", name},
                       {"gpu", ti->gpu_name},
                       {"arch", ti->arch},
                       {"required_families", ti->required_families},
                       {"verification", ti->verification}});
  }
  ordered_json axes = ordered_json::object();
  for (const auto& [k, v] : resolve_axes(t.wl, t.def)) axes[k] = v;
  return {{"name", t.name},
          {"problem", t.problem},
          {"op_type", t.def.op_type},
          {"workload_uuid", t.wl.uuid},
          {"axes", axes},
          {"baseline", t.baseline},
          {"tolerance", {{"atol", t.tol.atol}, {"rtol", t.tol.rtol}}},
          {"correctness_trials", t.correctness_trials},
          {"targets", targets},
          {"status", t.status},
          {"held_out", t.held_out},
          {"definition", (s.root.filename() / t.definition_path.lexically_relative(s.root)).string()}};
}

}  // namespace ptxbench
