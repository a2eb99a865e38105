#pragma once
// Running the CUDA disassemblers (cuobjdump -sass, nvdisasm -c) on a built artifact. A missing tool
// is its own state, so the pipeline can record the static check as "deferred to the GPU host"
// instead of failing the candidate; a tool that ran and failed carries its stderr.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::sass {

enum class disassembler_tool {
  cuobjdump,  ///< `cuobjdump -sass FILE`: executables, shared objects, fatbins, cubins
  nvdisasm,   ///< `nvdisasm -c FILE`: a single cubin only
};

/// Returns "cuobjdump" or "nvdisasm".
std::string_view tool_name(disassembler_tool t);

enum class disassembly_state {
  ok,            ///< the tool exited 0; text holds its stdout
  tool_missing,  ///< the tool is not installed here (not on PATH, not in <cuda_root>/bin)
  bad_input,     ///< the file to disassemble does not exist or is not a regular file
  tool_failed,   ///< the tool ran and failed, timed out or printed more than the cap
};

/// Returns "ok", "tool_missing", "bad_input" or "tool_failed".
std::string_view state_name(disassembly_state s);

struct disassembler_options {
  disassembler_tool tool = disassembler_tool::cuobjdump;
  std::filesystem::path cuda_root;  ///< its bin/ is searched after PATH; empty: PATH only
  bool search_path = true;          ///< false: only <cuda_root>/bin (tests use this)
  double timeout_s = 120;
  std::size_t max_output_bytes = 64u << 20;
};

struct disassembly {
  disassembly_state state = disassembly_state::tool_missing;
  std::filesystem::path tool_path;   ///< the executable that ran (empty when missing)
  std::vector<std::string> command;  ///< argv that ran
  std::string text;                  ///< stdout when ok
  std::string message;               ///< why it is not ok (tool_failed: exit description and stderr); ok: stderr, if any
  double seconds = 0;

  [[nodiscard]] bool ok() const { return state == disassembly_state::ok; }
};

/// Finds the disassembler: on PATH (when search_path), then in <cuda_root>/bin. Returns nullopt when
/// neither has it.
std::optional<std::filesystem::path> find_disassembler(const disassembler_options& options);

/// Disassembles file with the chosen tool (argv, no shell, options.timeout_s). Never throws; every
/// failure is a state in the result.
disassembly disassemble(const std::filesystem::path& file, const disassembler_options& options);

}  // namespace ptxbench::sass
