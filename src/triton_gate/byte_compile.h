#pragma once
// The "build" of a Triton candidate, seen from C++: byte_compile.py (beside this file) compiles
// kernel.py to bytecode with Python's own compiler, in a confined child process (resource limits,
// isolated mode, an empty working folder, a timeout), without importing or running it. Triton
// itself compiles the kernels later, on the GPU host (docs/kernel-abi.md, "Triton candidates").

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "triton_gate/triton_gate.h"

namespace ptxbench::triton_gate {

struct byte_compile_result {
  bool ok = false;
  int line = 0;                      ///< where the compiler stopped (1-based; 0 = not about a line)
  int col = 0;
  std::string kind;                  ///< "SyntaxError", "IndentationError", "size", ...
  std::string message;               ///< the compiler's message (empty when ok)
  std::string python_version;        ///< "3.12.3" (ok only)
  int code_objects = 0;              ///< module, functions, classes, comprehensions (ok only)
  std::vector<std::string> command;  ///< the argv that ran
  double seconds = 0;
};

/// Byte-compiles one candidate file. A candidate that does not compile is a result with ok=false
/// and the compiler's line and message; an error means the check could not run (python3 or the
/// script missing, timed out, output not understood). Uses options.python, .timeout_s and the
/// script folder of options.script (byte_compile.py beside triton_gate.py).
result<byte_compile_result> byte_compile(const std::filesystem::path& kernel_py, const gate_options& options = {});

/// Where the script lives under a PTXBench root.
std::filesystem::path byte_compile_script_under(const std::filesystem::path& root);

}  // namespace ptxbench::triton_gate
