#include "cli/gpu_presence.h"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

namespace ptxbench::cli {

std::optional<std::string> missing_gpu() {
  const char* over = std::getenv("PTXBENCH_DEVICE_NODE");
  const std::string node = over && *over ? over : "/dev/nvidia0";
  std::error_code ec;
  if (std::filesystem::exists(node, ec)) return std::nullopt;
  return fmt::format("no NVIDIA GPU or driver found on this machine ({} is missing)", node);
}

}  // namespace ptxbench::cli
