#pragma once
// Reading nvcc/ptxas output into fields (errors, warnings, per-kernel resource use). The verbatim
// text is kept as well: it is what a model reads as feedback.

#include <string>
#include <vector>

#include "verdict/verdict.h"

namespace ptxbench::build {

struct compiler_log {
  std::string text;                               ///< verbatim
  std::vector<std::string> errors;                ///< lines reporting an error
  std::vector<std::string> warnings;              ///< lines reporting a warning
  std::vector<kernel_resources> kernels;    ///< from `-Xptxas -v`
};

/// Parses nvcc output produced with `-Xptxas -v`. Never fails; unknown lines are ignored.
compiler_log parse_compiler_log(const std::string& text);

}  // namespace ptxbench::build
