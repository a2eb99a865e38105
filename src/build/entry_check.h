#pragma once
// Whether a built object can be called as a candidate at all: it must export the entry point the
// solution names (ptxbench_entry_<symbol>) and its ABI version, and — when the export records its
// signature (kernel ABI version 2, PTXBENCH_EXPORT) — take exactly the task's tensors, with their
// dtypes. Read from the artifact's dynamic symbol table, so nothing of the candidate runs; a file
// that exports nothing (empty, a kernel without PTXBENCH_EXPORT) is caught before any GPU work.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "suite/definition.h"
#include "verdict/outcome.h"

namespace ptxbench::build {

/// What the object exports for one entry symbol.
struct entry_export {
  bool entry = false;        ///< ptxbench_entry_<symbol>
  bool abi_version = false;  ///< ptxbench_abi_version_<symbol>
  bool has_signature = false;
  int32_t signature_abi = 0;
  std::vector<int32_t> dtypes;  ///< from ptxbench_signature_<symbol>; -1 = not declared
};

/// Reads the exports of `symbol` from the object. Fails only for an unreadable or malformed file.
result<entry_export> read_entry_export(const std::filesystem::path& shared_object, const std::string& symbol);

/// Why the object cannot be the task's candidate: a missing export is compile_error (it cannot be
/// loaded), a different number of tensors incorrect_shape, a different dtype incorrect_dtype.
struct entry_problem {
  eval_outcome outcome = eval_outcome::compile_error;
  std::string message;  ///< one line for the model and the user
};

/// Checks the exports against the task's tensors (inputs, then outputs). nullopt: callable.
std::optional<entry_problem> check_entry_export(const entry_export& e, const std::string& symbol, const definition& def);

}  // namespace ptxbench::build
