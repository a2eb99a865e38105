#include "cli/cli_test_support.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "test_support.h"

namespace ptxbench::testing {

process_result run_cli(const std::vector<std::string>& args, double timeout_s) {
  static const std::string cache =
      (std::filesystem::temp_directory_path() / ("ptxbench-cli-cache-" + std::to_string(::getpid()))).string();
  std::vector<std::string> argv = {(bin_dir() / "ptxbench").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process({.argv = argv,
                      .env_overrides = {{"PTXBENCH_CACHE", cache}, {"PTXBENCH_ROOT", repo_root().string()}},
                      .timeout_s = timeout_s});
}

bool one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && std::count(text.begin(), text.end(), '\n') == 1;
}

}  // namespace ptxbench::testing
