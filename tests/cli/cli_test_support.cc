#include "cli/cli_test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "build/toolchain.h"
#include "test_support.h"

namespace ptxbench::testing {

process_result run_cli(const std::vector<std::string>& args, double timeout_s,
                       const std::vector<std::pair<std::string, std::string>>& env) {
  static const std::string cache =
      (std::filesystem::temp_directory_path() / ("ptxbench-cli-cache-" + std::to_string(::getpid()))).string();
  std::vector<std::string> argv = {(bin_dir() / "ptxbench").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::pair<std::string, std::string>> vars = {{"PTXBENCH_CACHE", cache},
                                                           {"PTXBENCH_ROOT", repo_root().string()}};
  for (const auto& [k, v] : env) {
    auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& kv) { return kv.first == k; });
    if (it != vars.end()) it->second = v; else vars.emplace_back(k, v);
  }
  return run_process({.argv = argv, .env_overrides = vars, .timeout_s = timeout_s});
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

bool one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && std::count(text.begin(), text.end(), '\n') == 1;
}

bool have_nvcc() { return build::find_toolchain(PTXBENCH_CUDA_ROOT_FOR_TESTS).ok(); }

void expect_cases(const std::vector<cli_case>& cases, const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& c : cases) {
    auto r = run_cli(c.args, 120, env);
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    EXPECT_EQ(r.exit_code, c.exit_code) << shown << "\n" << r.err;
    EXPECT_EQ(first_line(r.err), c.first_line) << shown;
    EXPECT_TRUE(one_line(r.err)) << shown << "\n" << r.err;
    EXPECT_EQ(r.signal, 0) << shown;
  }
}

}  // namespace ptxbench::testing
