#pragma once
// Solution: an implementation of a Definition (sources plus build spec). Field names follow
// FlashInfer-Bench's flashinfer_bench/data/solution.py (github.com/flashinfer-ai/flashinfer-bench). Source paths are relative and stay inside the build folder.

#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench {

struct source_file {
  std::string path;     ///< relative, no "..", unique within the solution
  std::string content;
};

struct build_spec {
  std::string language;                      ///< python | triton | cpp | cuda | tilelang
  std::vector<std::string> target_hardware;  ///< at least one
  std::string entry_point;                   ///< "file::symbol"
  std::vector<std::string> dependencies;
  bool destination_passing_style = true;
  std::optional<std::string> binding;        ///< upstream's "tvm-ffi" | "torch"; we use "ptxbench"
};

struct solution {
  std::string name;
  std::string definition;
  std::string author;
  build_spec spec;
  std::vector<source_file> sources;
  std::string description;

  [[nodiscard]] std::string entry_file() const;    ///< part of entry_point before "::"
  [[nodiscard]] std::string entry_symbol() const;  ///< part after "::"
  [[nodiscard]] const source_file* find_source(const std::string& path) const;
};

/// Checks that a source path is relative, has no ".." or empty component, no control characters and
/// no backslash. Returns the reason when it is unsafe.
std::optional<std::string> unsafe_source_path_reason(const std::string& path);

result<solution> solution_from_json(const ordered_json& j, const std::string& path = "solution");
ordered_json to_json(const solution& s);

}  // namespace ptxbench
