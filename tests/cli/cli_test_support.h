#pragma once
// Runs the real ptxbench binary as a black box, with a private build cache.

#include <string>
#include <vector>

#include "core/process.h"

namespace ptxbench::testing {

/// Runs build/bin/ptxbench with args; PTXBENCH_CACHE points at a per-process temp cache. `env`
/// adds variables or replaces these two.
process_result run_cli(const std::vector<std::string>& args, double timeout_s = 300,
                       const std::vector<std::pair<std::string, std::string>>& env = {});

/// The first line of text, without its newline.
std::string first_line(const std::string& text);

/// True when stderr is exactly one line (a clear error, no stack trace).
bool one_line(const std::string& text);

/// True when the CUDA toolkit the tests are configured with has an nvcc (the build stage can run).
bool have_nvcc();

/// A command that must fail (or succeed) with this exit code and exactly this first line on stderr.
struct cli_case {
  std::vector<std::string> args;
  int exit_code;
  std::string first_line;  ///< exact, without "\n"
};

/// Runs each case; its exit code and first line must match, stderr must be one line, no signal.
void expect_cases(const std::vector<cli_case>& cases, const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace ptxbench::testing
