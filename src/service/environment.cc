#include "service/environment.h"

#include "core/build_info.h"

namespace ptxbench::service {

std::string ptxbench_version() {
  auto b = this_build();
  return b.version + "+" + b.git_commit;
}

queue::run_environment gpu_environment(const ordered_json& env) {
  queue::run_environment out;
  if (!env.is_object()) return out;
  out.gpu_model = env.value("gpu", "");
  const auto libs = env.value("libs", ordered_json::object());
  auto lib = [&](const char* key) { return libs.contains(key) && libs[key].is_string() ? libs[key].get<std::string>() : std::string(); };
  out.driver = lib("nvidia_driver");
  out.cuda = lib("cuda_runtime");
  out.cublaslt = lib("cublasLt");
  out.cudnn = lib("cudnn");
  out.ptxbench = ptxbench_version();
  return out;
}

queue::run_environment cpu_environment(const std::string& nvcc_version) {
  queue::run_environment out;
  out.cuda = nvcc_version;
  out.ptxbench = ptxbench_version();
  return out;
}

ordered_json to_json(const queue::run_environment& e) {
  return {{"gpu_model", e.gpu_model}, {"driver", e.driver},   {"cuda", e.cuda},
          {"cublaslt", e.cublaslt},   {"cudnn", e.cudnn},     {"ptxbench", e.ptxbench}};
}

std::optional<queue::run_environment> environment_from_json(const ordered_json& j) {
  if (!j.is_object() || !j.contains("ptxbench")) return std::nullopt;
  queue::run_environment e;
  auto field = [&](const char* key) { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string(); };
  e.gpu_model = field("gpu_model");
  e.driver = field("driver");
  e.cuda = field("cuda");
  e.cublaslt = field("cublaslt");
  e.cudnn = field("cudnn");
  e.ptxbench = field("ptxbench");
  return e;
}

}  // namespace ptxbench::service
