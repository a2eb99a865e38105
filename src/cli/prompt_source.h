#pragma once
// Where a trajectory's first messages come from, one rule for `ptxbench prompt` and `ptxbench run`:
// the variant "builtin-minimal" is the pack-free built-in prompt (agent/prompt.h, the control arm);
// any other name, or an index within the task's family, is a knowledge-pack variant rendered by
// prompts/prompt_renderer.h. So `prompt --variant V` prints exactly what `run --variants V` sends.

#include <filesystem>
#include <string>

#include "core/result.h"
#include "prompts/prompt_renderer.h"
#include "prompts/variant_manifest.h"
#include "suite/task.h"

namespace ptxbench::cli {

/// The variant's recorded name: "builtin-minimal", or the pack variant a name or an index picks.
/// `language` picks the pack family: "cuda" (the target's CUDA-PTX pack) or "triton" (packs/triton);
/// the built-in prompt is for CUDA candidates only.
result<std::string> resolve_variant_name(const prompts::variant_manifest& manifest, const task& t,
                                         const target_info& target, const std::string& spec,
                                         const std::string& language = "cuda");

/// The rendered prompt for (task, variant, target); `variant` is a resolved name or index.
result<prompts::rendered_prompt> render_task_prompt(const suite& s, const task& t, const std::string& variant,
                                                    const target_info& target,
                                                    const std::filesystem::path& packs_dir,
                                                    const std::string& language = "cuda");

}  // namespace ptxbench::cli
