// `ptxbench prompt TASK --variant NAME [--target T]` renders the exact system and user messages a
// model receives, and the size of each part in characters and tokens (cl100k_base BPE when the
// ranks are installed, chars/4 otherwise, always labelled).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/prompt_source.h"
#include "core/file_io.h"
#include "agent/prompt.h"
#include "prompts/bpe_tokenizer.h"
#include "prompts/prompt_renderer.h"
#include "prompts/token_estimator.h"
#include "prompts/variant_manifest.h"
#include "suite/task.h"
#include "suite/unknown_target.h"

namespace ptxbench::cli {
namespace {

struct prompt_options {
  std::string task, variant = "base", target = "h200", ranks, out_dir, language = "cuda";
  bool sizes_only = false, json = false, list = false, all = false, out_given = false;
};

void print_sizes(const prompts::rendered_prompt& p, const prompts::prompt_sizes& s, std::FILE* to) {
  fmt::print(to, "prompt {} / {} / variant {} (pack {}, family {})\n", p.task, p.target, p.variant, p.pack, p.problem);
  fmt::print(to, "  {:<44} {:<12} {:>9} {:>8}\n", "PART", "KIND", "CHARS", "TOKENS");
  for (const auto& part : s.parts)
    fmt::print(to, "  {:<44} {:<12} {:>9} {:>8}\n", part.name, part.kind, part.chars, part.tokens);
  fmt::print(to, "  {:<44} {:<12} {:>9} {:>8}\n", "= system message", "", s.system_chars, s.system_tokens);
  fmt::print(to, "  {:<44} {:<12} {:>9} {:>8}\n", "= user message", "", s.user_chars, s.user_tokens);
  fmt::print(to, "  {:<44} {:<12} {:>9} {:>8}\n", "= total", "", s.system_chars + s.user_chars,
             s.system_tokens + s.user_tokens);
  fmt::print(to, "  tokens: {}\n", s.method);
}

ordered_json sizes_json(const prompts::prompt_sizes& s) {
  ordered_json parts = ordered_json::array();
  for (const auto& p : s.parts)
    parts.push_back({{"name", p.name}, {"kind", p.kind}, {"chars", p.chars}, {"tokens", p.tokens}});
  return {{"token_method", s.method},
          {"system", {{"chars", s.system_chars}, {"tokens", s.system_tokens}}},
          {"user", {{"chars", s.user_chars}, {"tokens", s.user_tokens}}},
          {"parts", parts}};
}

exit_status run_prompt(const context& ctx, const prompt_options& o) {
  if (o.out_given)
    if (auto st = check_output_dir(o.out_dir, "--out"); !st) return report_error(st.err().message, exit_status::usage);
  if (std::error_code ec; !o.ranks.empty() && !std::filesystem::is_regular_file(o.ranks, ec))
    return report_error(fmt::format("--ranks {}: no such file", o.ranks), exit_status::usage);
  auto s = load_suite(ctx.suite_dir());
  if (!s) return report_error(s.err().message, exit_status::usage);
  const task* t = s->find_task(o.task);
  if (!t) {
    std::vector<std::string> names;
    for (const auto& tk : s->tasks) names.push_back(tk.name);
    return report_error(unknown_name_message("task", o.task, names, "`ptxbench tasks` lists them"), exit_status::usage);
  }
  const target_info* ti = s->find_target(o.target);
  if (!ti) {
    return report_error(unknown_target_message(*s, o.target),
                        exit_status::usage);
  }
  auto manifest = prompts::load_variant_manifest(ctx.packs_dir());
  if (!manifest) return report_error(manifest.err().message, exit_status::usage);
  const prompts::pack_manifest* pack = manifest->pack_for(ti->pack, o.language);
  if (!pack)
    return report_error("packs/variants.json has no " + (o.language == "cuda" ? "pack '" + ti->pack + "'" : o.language + " pack"),
                        exit_status::usage);

  std::vector<std::string> variants;
  if (o.list || o.all) {
    if (const auto* fam = pack->family(t->problem))
      for (const auto& v : *fam) variants.push_back(v.name);
    for (const auto& a : pack->ablations) variants.push_back(a.name);
  }
  if (o.list) {
    fmt::print("variants of {} (family {}) for {} (pack {}):\n", t->name, t->problem, ti->name, pack->name);
    std::size_t i = 0;
    if (const auto* fam = pack->family(t->problem))
      for (const auto& v : *fam) fmt::print("  {} {:<22} {}\n", i++, v.name, v.description);
    for (const auto& a : pack->ablations) fmt::print("    {:<22} {}\n", a.name, a.description);
    fmt::print("    {:<22} {}\n", agent::k_builtin_variant, "the pack-free built-in prompt (ABI contract, target, task): a control arm");
    return exit_status::ok;
  }
  if (!o.all) {
    auto name = resolve_variant_name(*manifest, *t, *ti, o.variant, o.language);
    if (!name) return report_error(name.err().message, exit_status::usage);
    variants = {*name};
  }

  const char* env_ranks = std::getenv("PTXBENCH_TIKTOKEN_RANKS");
  const auto estimator = prompts::token_estimator::find(
      o.ranks.empty() ? prompts::default_ranks_candidates(env_ranks ? env_ranks : "", ctx.root, ctx.cache_dir)
                      : std::vector<std::filesystem::path>{o.ranks});
  // A ranks file named on the command line must load: falling back to chars/4 would hide the mistake.
  if (!o.ranks.empty() && !estimator.is_exact()) {
    auto tok = prompts::bpe_tokenizer::load(o.ranks);
    return report_error(fmt::format("--ranks {}: not a usable cl100k_base ranks file ({})", o.ranks,
                                    tok ? std::string("unknown reason") : tok.err().message),
                        exit_status::usage);
  }
  ordered_json all = ordered_json::array();
  for (const auto& name : variants) {
    auto p = render_task_prompt(*s, *t, name, *ti, ctx.packs_dir(), o.language);
    if (!p) return report_error(p.err().message, exit_status::usage);
    const auto sizes = prompts::measure_prompt(*p, estimator);
    if (o.out_given) {
      const auto dir = std::filesystem::path(o.out_dir) / (o.all ? p->variant : std::string());
      for (const auto& [file, text] : {std::pair{"system.md", p->system}, std::pair{"user.md", p->user}})
        if (auto st = write_file_atomic(dir / file, text); !st)
          return report_error(st.err().message, exit_status::infra);
    }
    if (o.json) {
      ordered_json j = {{"task", p->task},       {"target", p->target},   {"pack", p->pack},
                        {"problem", p->problem}, {"variant", p->variant}, {"sizes", sizes_json(sizes)}};
      if (!o.sizes_only) {
        j["system"] = p->system;
        j["user"] = p->user;
      }
      all.push_back(std::move(j));
      continue;
    }
    if (!o.sizes_only && !o.all) {
      fmt::print("===== system =====\n{}\n===== user =====\n{}", p->system, p->user);
      std::fflush(stdout);
    }
    print_sizes(*p, sizes, o.sizes_only || o.all ? stdout : stderr);
  }
  if (o.json) std::puts((o.all ? all : all.at(0)).dump(2).c_str());
  return exit_status::ok;
}

}  // namespace

void add_prompt_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("prompt", "render the exact system and user messages a model receives for a task");
  auto o = std::make_shared<prompt_options>();
  cmd->add_option("task", o->task, "task name (`ptxbench tasks` lists them)")->required();
  cmd->add_option("--variant", o->variant, "prompt variant: a name or an index from --list; builtin-minimal = the pack-free built-in prompt");
  cmd->add_option("--target", o->target, "target GPU from suite/targets.json");
  cmd->add_option("--language", o->language, "the candidates' language: cuda (CUDA-PTX packs) or triton (packs/triton)")
      ->check(CLI::IsMember({"cuda", "triton"}));
  cmd->add_flag("--list", o->list, "list the variants and ablation arms for the task's family and target");
  cmd->add_flag("--all", o->all, "render every variant and ablation arm (sizes only, unless --out or --json)");
  cmd->add_flag("--sizes", o->sizes_only, "print only the size table");
  cmd->add_flag("--json", o->json, "machine-readable output (messages and sizes)");
  cmd->add_option("--out", o->out_dir, "also write system.md and user.md into this folder (per variant with --all)")
      ->each([o](const std::string&) { o->out_given = true; });
  cmd->add_option("--ranks", o->ranks,
                  "cl100k_base ranks file (default: $PTXBENCH_TIKTOKEN_RANKS, then build/third_party)");
  cmd->callback([&ctx, o]() { ctx.exit = run_prompt(ctx, *o); });
}

}  // namespace ptxbench::cli
