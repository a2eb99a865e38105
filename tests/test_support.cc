#include "test_support.h"

#include <random>

namespace ptxbench::testing {

std::filesystem::path make_temp_dir(const std::string& tag) {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() /
             ("ptxbench-test-" + tag + "-" + std::to_string((static_cast<uint64_t>(rd()) << 32) | rd()));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace ptxbench::testing
