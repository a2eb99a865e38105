#pragma once
// `ptxbench sft export`: SFT rows for train/ (docs/training.md reads them as they are), JSON Lines
// `{id, messages, metadata}`, built as upstream's builders built them (build_sft_dataset_fixit.py,
// build_sft_dataset_kernelgen.py; upstream-ptxbench.md §9.1 stage 02):
//
//   Fixit (5 messages): system — the student's system prompt; user — its first task prompt;
//   assistant — the wrong turn, verbatim; user — the feedback it received, verbatim; assistant —
//   "<think>\n{rationale}\n</think>\n\n```cpp\n{repaired kernel, stripped}\n```" (the fence upstream's
//   student prompt asks for and its extraction reads; `kernel_fence` "cuda" is an option). Loss mask
//   (step_loss_mask) 0,0,0,0,1.
//   KernelGen (3 messages): system; user — the first task prompt; assistant —
//   "<think>\n{rationale}\n</think>\n{the teacher's whole reply, stripped}". Mask 0,0,1.
//
// Then, by default, every row is normalised through the chat template (each message as the template
// writes it, prompts::template_contents: Qwen3 drops the reasoning of earlier assistant turns), as
// upstream's builders did; `normalize = false` keeps the messages as built. Rows whose rendering is
// longer than max_tokens (counted with the target's tokenizer and chat template, token_counter.h)
// are dropped, never truncated; so are rows with no accepted rationale and rows whose text contains
// a reserved marker of the template or tokenizer. Lengths in characters are Unicode code points. The
// manifest counts rows in and out per reason, per task and per error type, with hashes, the recipe
// and length statistics.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_sft_export_format = "ptxbench.sft-export/1";
inline constexpr std::size_t k_default_max_tokens = 65536;

struct export_options {
  std::string format;                               ///< "fixit" or "kernelgen"
  std::vector<std::filesystem::path> reasoning_dirs;
  std::string tokenizer;                            ///< tokenizer.json path, "cl100k" or "" (fallback)
  std::string chat_template = "auto";
  std::vector<std::filesystem::path> cl100k_candidates;
  std::size_t max_tokens = k_default_max_tokens;
  std::optional<uint64_t> shuffle_seed;             ///< nullopt: rows sorted by id
  std::string kernel_fence = "cpp";                 ///< the repaired kernel's fence in Fixit rows
  bool normalize = true;                            ///< chat-template normalisation (upstream's default)
  ordered_json recipe;                              ///< the recipe that made it, or null
  std::vector<std::string> argv;
};

/// Builds the rows and writes OUT/sft.jsonl and OUT/manifest.json (staged). Returns the manifest.
result<ordered_json> export_sft(const export_options& o, const std::filesystem::path& out);

/// Checks one exported row as train/data.py will: keys, roles for the format, the loss mask, a
/// closed <think> block and a closed code fence in the last message. Returns the problem, or "".
std::string validate_sft_row(const ordered_json& row, const std::string& format);

}  // namespace ptxbench::adapt
