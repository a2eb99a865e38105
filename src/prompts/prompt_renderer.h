#pragma once
// Renders the exact messages a model receives for (task, variant, target): the system message
// (instructions and ABI contract from packs/system.md, the knowledge-pack parts of the variant,
// the ABI example) and the user message (packs/user.md with the task as the model sees it).
// Every trajectory of an experiment gets byte-identical context from this one function.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "prompts/token_estimator.h"
#include "suite/task.h"

namespace ptxbench::prompts {

/// One piece of the rendered prompt, in order.
struct prompt_part {
  std::string name;  ///< "instructions", "docs/params.md", "ptxkit/tma.cuh", "abi_example", "task"
  std::string kind;  ///< "instructions" | "doc" | "header" | "example" | "user"
  std::string text;  ///< exactly as it appears in the message
};

struct rendered_prompt {
  std::string task, target, pack, problem, variant;
  std::string system;  ///< the system message
  std::string user;    ///< the first user message
  std::vector<prompt_part> parts;
};

struct part_size {
  std::string name, kind;
  std::size_t chars = 0, tokens = 0;
};

struct prompt_sizes {
  std::vector<part_size> parts;
  std::size_t system_chars = 0, system_tokens = 0, user_chars = 0, user_tokens = 0;
  std::string method;  ///< how tokens were counted (token_estimator::method)
};

/// Renders the prompt. Fails (one line, naming the file or the variant) when the manifest or a
/// part is missing, the target is not one of the task's targets, or the variant does not exist
/// for the task's problem family in the target's pack. language "triton" renders the Triton pack
/// (packs/triton: its own templates, the Python entry and example) for the same task and target.
result<rendered_prompt> render_prompt(const suite& s, const task& t, const std::string& variant,
                                      const target_info& target, const std::filesystem::path& packs_dir,
                                      const std::string& language = "cuda");

/// Character and token counts of every part and of both messages.
prompt_sizes measure_prompt(const rendered_prompt& p, const token_estimator& estimator);

/// Drops every line whose first non-blank characters are "//" and squeezes blank-line runs: the
/// "templates without contracts" form of a header used by the ablation arms.
std::string code_only(const std::string& source);

/// The ABI lines for a task: the run() prototype and its PTXBENCH_EXPORT line.
std::string abi_signature(const definition& d);

/// The Triton entry for a task: `def run(<inputs>, <outputs>) -> None:` with torch.Tensor
/// annotations and a comment per tensor (shape and dtype; outputs marked).
std::string python_signature(const definition& d);

}  // namespace ptxbench::prompts
