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

}  // namespace ptxbench
