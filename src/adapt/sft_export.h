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
//
// The editor (upstream's Fixit stage 01, resynthesize_filtered_reasonings_openrouter.py; on by default
// for Fixit, which alone had it): a row whose rationale still holds <my_reasoning>/</my_reasoning> or
// whose rendering is over max_tokens is sent once to the editor model (rationale.h,
// make_editor_prompt); the edited rationale replaces it when it is free of the tags and markers and the
// row fits, else the row is dropped ("editor_failed"). Without the editor such rows are dropped as
// upstream's builder dropped them. Order: rows sorted by id, then shuffled as Python's
// random.Random(seed).shuffle does (seed 42, upstream's), or left by id.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_sft_export_format = "ptxbench.sft-export/1";
/// One checkpointed editor reply per line of OUT.editor.jsonl (beside OUT).
inline constexpr const char* k_editor_checkpoint_format = "ptxbench.sft-editor-reply/1";
inline constexpr std::size_t k_default_max_tokens = 65536;

inline constexpr std::size_t k_editor_safety_tokens = 1024;  ///< upstream's headroom under the limit
inline constexpr double k_editor_min_ratio = 0.95;            ///< upstream's lower bound of the asked length

/// One editor request: the system and user messages, and the replay turn (the row's synthesis attempts,
/// so a replay teacher answers with the reply after the accepted one).
struct editor_call {
  std::string row_id, system, user;
  int turn = 0;
};

/// The permutation Python's random.Random(seed).shuffle applies to a list of n items (CPython's
/// MT19937 seeded by init_by_array with the seed's 32-bit words, Fisher-Yates from the end with
/// _randbelow by getrandbits): item i of the result is the input's perm[i].
std::vector<std::size_t> python_shuffle_permutation(std::size_t n, uint64_t seed);

struct export_options {
  std::string format;                               ///< "fixit" or "kernelgen"
  std::vector<std::filesystem::path> reasoning_dirs;
  std::string tokenizer;                            ///< tokenizer.json path, "cl100k" or "" (fallback)
  std::string chat_template = "auto";
  std::vector<std::filesystem::path> cl100k_candidates;
  std::size_t max_tokens = k_default_max_tokens;
  std::optional<uint64_t> shuffle_seed = 42;        ///< nullopt: rows sorted by id; else Python's shuffle of that
  std::optional<bool> editor;                       ///< nullopt: on for fixit (upstream's stage 01), off for kernelgen
  std::string editor_model;                         ///< recorded in the manifest
  std::function<result<std::string>(const editor_call&)> edit;  ///< the editor's reply; needed when a row needs an edit
  /// True once the user asked to stop (Ctrl-C): a failed editor call then stops the export with
  /// nothing written instead of dropping its row. Empty: never.
  std::function<bool()> interrupted;
  std::string kernel_fence = "cpp";                 ///< the repaired kernel's fence in Fixit rows
  bool normalize = true;                            ///< chat-template normalisation (upstream's default)
  ordered_json recipe;                              ///< the recipe that made it, or null
  std::vector<std::string> argv;
};

/// Builds the rows and writes OUT/sft.jsonl and OUT/manifest.json (staged). Returns the manifest.
/// Each editor reply is appended (fsynced) to editor_checkpoint_path(out) right after its call, keyed
/// by row id, the original rationale's sha256, the editor model and the prompt's sha256; a later run
/// with the same OUT reuses a matching reply instead of asking again (a torn last line from a kill is
/// ignored, any other damage refused). A failed call is not recorded: its row is dropped
/// (editor_failed, counted under the manifest's editor.call_failed) and asked again on a re-run.
result<ordered_json> export_sft(const export_options& o, const std::filesystem::path& out);

/// OUT.editor.jsonl beside the export folder OUT (a trailing slash ignored).
std::filesystem::path editor_checkpoint_path(const std::filesystem::path& out);

/// Checks one exported row as train/data.py will: keys, roles for the format, the loss mask, a
/// closed <think> block and a closed code fence in the last message. Returns the problem, or "".
std::string validate_sft_row(const ordered_json& row, const std::string& format);

}  // namespace ptxbench::adapt
