#pragma once
// The source gate for Triton candidates, seen from C++. The rules live in triton_gate.py beside
// this file, because Python's own parser (`ast`) is the only exact reader of Python; this wrapper
// runs it as a child process (no shell, a timeout, isolated mode) and turns its JSON into
// findings. The gate reads the candidate's text and never imports or runs it.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxbench::triton_gate {

/// One rejection: the rule (see `triton_gate.py --rules` and docs/kernel-abi.md), where, and why.
struct finding {
  std::string rule;     ///< e.g. "torch-compute", "dynamic-attribute"; "syntax" when the file cannot be parsed
  int line = 0;         ///< 1-based; 0 when about the whole file
  int col = 0;          ///< 1-based, in characters; 0 when about the whole file
  std::string excerpt;  ///< the offending source line, stripped
  std::string message;  ///< one line for a person
};

struct gate_options {
  std::filesystem::path python;  ///< empty: `python3` from PATH
  std::filesystem::path script;  ///< empty: <PTXBENCH_ROOT or the source tree>/src/triton_gate/triton_gate.py
  std::string entry = "run";     ///< the entry function the harness calls
  /// Positions of the entry's scalar parameters in the task definition (every other parameter is
  /// then known to be a tensor); nullopt: the gate infers tensors from their use.
  std::optional<std::vector<int>> scalar_positions;
  /// How many positional arguments the harness passes the entry (the definition's inputs, then its
  /// outputs); an entry that cannot take them is a finding ("entry-signature"). nullopt: not checked.
  std::optional<int> arity;
  double timeout_s = 30;
};

/// Checks one Triton candidate file. Returns its findings (empty: the gate passed; a file Python
/// cannot parse is one finding with rule "syntax" and the line), or an error when the gate could
/// not do its job: the candidate file or python3 is missing, the gate timed out or crashed, or its
/// output is not what it prints.
result<std::vector<finding>> check_triton_source(const std::filesystem::path& kernel_py,
                                                 const gate_options& options = {});

/// Where the gate script lives under a PTXBench root (the folder holding src/, suite/, packs/).
std::filesystem::path gate_script_under(const std::filesystem::path& root);

/// The checkout the gate's scripts are read from: $PTXBENCH_ROOT, else the source tree this was built from.
std::filesystem::path scripts_root();

}  // namespace ptxbench::triton_gate
