#include "cli/prompt_source.h"

#include <fmt/format.h>

#include "agent/prompt.h"

namespace ptxbench::cli {

result<std::string> resolve_variant_name(const prompts::variant_manifest& manifest, const task& t,
                                         const target_info& target, const std::string& spec,
                                         const std::string& language) {
  if (spec == agent::k_builtin_variant) {
    if (language != "cuda") return make_error("the built-in minimal prompt is for CUDA candidates only");
    return spec;
  }
  const auto* pack = manifest.pack_for(target.pack, language);
  if (!pack)
    return make_error(language == "cuda"
                          ? fmt::format("packs/variants.json has no pack '{}' for target {}", target.pack, target.name)
                          : fmt::format("packs/variants.json has no {} pack", language));
  auto v = prompts::find_variant(*pack, t.problem, spec);
  if (!v) return make_error(v.err().message + fmt::format(", or {} (no knowledge pack)", agent::k_builtin_variant));
  return v->name;
}

result<prompts::rendered_prompt> render_task_prompt(const suite& s, const task& t, const std::string& variant,
                                                    const target_info& target,
                                                    const std::filesystem::path& packs_dir,
                                                    const std::string& language) {
  if (variant != agent::k_builtin_variant) return prompts::render_prompt(s, t, variant, target, packs_dir, language);
  if (language != "cuda") return make_error("the built-in minimal prompt is for CUDA candidates only");
  auto p = agent::builtin_prompt(t, target, variant);
  if (!p) return p.err();
  prompts::rendered_prompt out{t.name, target.name, "none", t.problem, variant, p->system, p->user, {}};
  out.parts = {{"builtin instructions", "instructions", p->system}, {"task", "user", p->user}};
  return out;
}

}  // namespace ptxbench::cli
