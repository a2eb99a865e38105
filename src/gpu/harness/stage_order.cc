#include "gpu/harness/stage_order.h"

namespace ptxbench::gpu {

bool judge_in_order(gpu_stage_result& out, std::vector<stage_part> parts) {
  bool decided = false;
  for (auto& part : parts) {
    auto& r = part.result;
    // The GPU was held whether or not the part is judged: its holds stay, in the parts' order.
    for (auto& h : r.measurement.holds) out.measurement.holds.push_back(std::move(h));
    if (decided) continue;
    for (auto& s : r.stages) out.stages.push_back(std::move(s));
    for (const auto& item : r.sandbox.items()) out.sandbox[item.key()] = item.value();
    if (r.correctness) out.correctness = std::move(r.correctness);
    if (!part.go_on) {
      out.decided = std::move(r.decided);
      decided = true;
    }
  }
  return !decided;
}

}  // namespace ptxbench::gpu
