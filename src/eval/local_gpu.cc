#include "eval/local_gpu.h"

#include <unistd.h>

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/process.h"

namespace ptxbench::eval {
namespace fs = std::filesystem;
namespace {

/// The "Model:" line of every /proc/driver/nvidia/gpus/<bus>/information file.
std::set<std::string> proc_models() {
  std::set<std::string> models;
  std::error_code ec;
  for (const auto& gpu : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    auto text = read_text_file(gpu.path() / "information", 1u << 16);
    if (!text) continue;
    auto at = text->find("Model:");
    if (at == std::string::npos) continue;
    auto end = text->find('\n', at);
    std::string model = text->substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
    auto a = model.find_first_not_of(" \t"), b = model.find_last_not_of(" \t\r");
    if (a != std::string::npos) models.insert(model.substr(a, b - a + 1));
  }
  return models;
}

}  // namespace

result<ordered_json> probe_gpu(int device, const fs::path& harness) {
  if (!fs::exists(harness))
    return make_error(fmt::format("{} not found: this build has no GPU harness to ask which GPU this is", harness.string()));
  char name[] = "/tmp/ptxbench-gpu-probe-XXXXXX";
  int fd = ::mkstemp(name);
  if (fd < 0) return make_error("cannot create a temporary file for the GPU probe");
  ::close(fd);
  auto run = run_process({.argv = {harness.string(), "--environment", name, "--device", std::to_string(device)},
                          .timeout_s = 120, .max_output_bytes = 1u << 16, .merge_stderr = true});
  auto text = read_text_file(name, 1u << 20);
  ::unlink(name);
  if (!run.succeeded() || !text)
    return make_error(fmt::format("asking the harness ({}) about GPU device {}: {} {}", harness.string(), device,
                                  describe_exit(run, 120), run.out.substr(0, 300)));
  auto env = ordered_json::parse(*text, nullptr, false);
  if (!env.is_object() || env.value("gpu", "").empty())
    return make_error(fmt::format("the harness found no GPU device {}", device));
  return env;
}

result<std::string> local_gpu_model(int device, const fs::path& harness) {
  if (const char* forced = std::getenv("PTXBENCH_GPU_MODEL"); forced && *forced) return std::string(forced);
  auto models = proc_models();
  if (models.size() == 1) return *models.begin();
  auto env = probe_gpu(device, harness);
  if (!env) return env.err();
  return env->value("gpu", "");
}

result<const target_info*> local_target(const suite& s, int device, const fs::path& harness) {
  auto model = local_gpu_model(device, harness);
  if (!model) return model.err();
  auto t = s.target_for_gpu(*model);
  if (!t) return t.err();
  return *t;
}

status check_target_for_device(const suite& s, const target_info& target, int device, const fs::path& harness) {
  if (target.verification != "runtime") return ok();
  auto model = local_gpu_model(device, harness);
  if (!model) return model.err();
  auto here = s.target_for_gpu(*model);
  if (here && (*here)->name == target.name) return ok();
  return make_error(fmt::format("--target {} needs an {}, but GPU {} is an {}{}", target.name, target.gpu_name, device,
                                *model, here ? fmt::format(" (target {}; leave --target out to use it)", (*here)->name) : ""));
}

}  // namespace ptxbench::eval
