#pragma once
// The expert-guidance arm (docs/supervision.md): a markdown document, distilled from error
// trajectories, added to the system prompt of the tasks it names. The file starts with a small
// front matter that says which tasks it is for:
//
//   ---
//   format: ptxbench.guidance/1
//   title: Hopper wgmma/TMA pitfalls
//   tasks: gemm_n7168_k5120, mha_fwd_d128
//   problems: mha_bwd
//   ---
//   # The guidance itself (markdown) ...
//
// `tasks` lists task names, `problems` problem families (a task's "problem" in suite/tasks.json);
// either may be "*" (every task), at least one must be given. The document's identity is the sha256
// of the whole file.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "suite/task.h"

namespace ptxbench::supervision {

inline constexpr const char* k_guidance_format = "ptxbench.guidance/1";
/// Largest guidance file accepted: the document goes into every prompt of its tasks.
inline constexpr std::size_t k_max_guidance_bytes = 256u << 10;

struct guidance_doc {
  std::filesystem::path file;
  std::string sha256;  ///< of the file's bytes
  std::string title;
  std::vector<std::string> tasks;     ///< task names, or {"*"}
  std::vector<std::string> problems;  ///< problem families, or {"*"}
  std::string body;                   ///< the markdown after the front matter, trimmed

  /// True when the document is for this task.
  [[nodiscard]] bool applies_to(const task& t) const;
  /// "guidance:<first 8 hex digits of the sha256>"
  [[nodiscard]] std::string arm() const;
};

/// Parses a guidance document's text (no file access); `what` names it in errors.
result<guidance_doc> parse_guidance(const std::string& text, const std::string& what);

/// Reads and parses a guidance file: text only (no NUL, valid UTF-8), at most k_max_guidance_bytes,
/// a well-formed front matter, a non-empty body, and names the suite knows (a misspelled task or
/// problem family fails with a "did you mean").
result<guidance_doc> read_guidance(const std::filesystem::path& file, const suite& s);

/// The system prompt with the guidance appended as its own section.
std::string system_prompt_with_guidance(const std::string& system, const guidance_doc& g);

}  // namespace ptxbench::supervision
