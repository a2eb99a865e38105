#include "baselines/cudnn_remembered_plan.h"

#include <cuda_runtime.h>

#include <fmt/format.h>

namespace ptxbench::gpu::cudnn {

ordered_json remembered_plan_identity(const plan_candidate& plan, int index) {
  return ordered_json{
      {"heuristic", plan.heuristic}, {"index", index}, {"engine", plan.engine_id}, {"label", plan.label(false)}};
}

result<plan_candidate> find_remembered_plan(const descriptor& op_graph, const ordered_json& choice,
                                            const std::string& graph_name, int max_plans) {
  const int index = choice.at("index").get<int>();
  const int64_t engine = choice.at("engine").get<int64_t>();
  const std::string heuristic = choice.at("heuristic").get<std::string>();
  const std::string label = choice.at("label").get<std::string>();
  if (index < 0 || index >= max_plans) return make_error(fmt::format("plan index {} out of range", index));
  plan_search search = find_plans(op_graph, index + 1);
  if (search.plans.size() <= static_cast<std::size_t>(index))
    return make_error(fmt::format("the {} graph now has {} plan(s), the remembered one was #{} ({})", graph_name,
                                  search.plans.size(), index, label));
  plan_candidate& plan = search.plans[static_cast<std::size_t>(index)];
  if (plan.engine_id != engine || plan.heuristic != heuristic || plan.label(false) != label)
    return make_error(fmt::format("plan #{} of the {} graph is now {}, the remembered one was {}", index, graph_name,
                                  plan.label(false), label));
  return std::move(plan);
}

std::string remembered_plan_device(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return "unknown-gpu-sm00";
  }
  return fmt::format("{}-sm{}{}", prop.name, prop.major, prop.minor);
}

}  // namespace ptxbench::gpu::cudnn
