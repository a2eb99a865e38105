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

}  // namespace ptxbench::testing
