// `ptxbench fixit reason` and `ptxbench kernelgen reason`: a first-person rationale per row from a
// reasoning teacher, resumable (docs/adaptation.md, "Rationales").
#include <unistd.h>

#include <fmt/format.h>

#include "adapt/reason.h"
#include "agent/provider_factory.h"
#include "cli/option_checks.h"
#include "cli/commands.h"
#include "cli/fixit_common.h"

namespace ptxbench::cli {
namespace {

struct reason_args {
  model_args model;
  std::string source, out;
  adapt::rationale_rules rules;
  adapt::teacher_sampling sampling;
  double temperature = 1.0, top_p = 0.95;
  bool sampling_from_models_file = false;
  std::vector<std::string> forbid;
  int parallel = 4;
  bool quiet = false;
};

exit_status reason_command(reason_args a, const context& ctx, const std::string& command) {
  // The source first: a kernels directory given to `fixit reason` (or pairs to `kernelgen reason`)
  // would be written up as the wrong kind of rationale.
  if (auto st = adapt::check_reason_source(a.source, command); !st) return report_error(st.err().message, exit_status::usage);
  if (a.rules.min_chars > a.rules.max_chars)
    return report_error("--min-chars is larger than --max-chars", exit_status::usage);
  if (a.sampling_from_models_file) a.sampling = {std::nullopt, std::nullopt};
  else a.sampling = {a.temperature, a.top_p};
  const std::atomic<bool>* interrupted = install_interrupt_handler();
  auto teacher = sampled_model_provider(a.model.choice(), a.sampling, ctx, interrupted);
  if (!teacher) return report_error(teacher.err().message, exit_status::usage);
  adapt::reason_options o;
  o.source_dir = a.source;
  o.out_dir = a.out;
  o.kind = command;  // fixit reason reads pairs, kernelgen reason kernels
  o.rules = a.rules;
  o.sampling = a.sampling;
  for (const auto& f : split_list(a.forbid)) o.rules.forbidden.push_back(f);
  o.parallel = a.parallel;
  o.quiet = a.quiet;
  o.argv = {"ptxbench", command, "reason", a.source, "--model", a.model.model, "--out", a.out};
  append_model_argv(a.model, o.argv);
  adapt::reason_services s;
  s.teacher = teacher->provider.get();
  s.model = &teacher->resolved.spec;
  s.interrupt = interrupted;
  auto out = adapt::run_reasoning(o, s);
  if (!out) return report_error(out.err().message, exit_status::usage);
  if (!a.quiet)
    std::fprintf(stderr, "ptxbench: rationales: %d accepted, %d failed (attempts used up), %d pending | %s\n", out->done,
                 out->failed, out->pending, (o.out_dir / (out->pending ? "rows" : "manifest.json")).c_str());
  if (out->status != exit_status::ok) return report_error(out->message, out->status);
  return exit_status::ok;
}

}  // namespace

void add_reason_subcommand(CLI::App& parent, context& ctx, const std::string& command, const std::string& source_help) {
  auto a = std::make_shared<reason_args>();
  // Upstream's bounds: the Fixit downstream accepted 2,000-190,000 characters, the KernelGen synthesis
  // config 200-190,000.
  if (command == "kernelgen") a->rules.min_chars = 200;
  // Fixit: a rationale that still holds the reasoning tags is kept for the editor of `sft export`
  // (upstream's stage 01); KernelGen had no editor, so such a reply is asked for again.
  a->rules.tags_left_to_editor = command == "fixit";
  auto* cmd = parent.add_subcommand("reason", "a first-person rationale per row from a reasoning teacher (resumable)");
  cmd->add_option("source", a->source, source_help)->required();
  cmd->add_option("--out", a->out, "output directory; re-run the same command to resume")->required();
  add_model_options(*cmd, a->model);
  cmd->add_option("--min-chars", a->rules.min_chars, "shortest rationale accepted, in characters")
      ->check(whole_number(0, 100'000'000))
      ->capture_default_str();
  cmd->add_option("--max-chars", a->rules.max_chars, "longest rationale accepted, in characters")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  cmd->add_option("--target-chars", a->rules.target_chars, "the length the prompt asks the teacher for, in characters")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  cmd->add_option("--max-attempts", a->rules.max_attempts, "replies asked for per row, retries included")
      ->check(whole_number(1, 100))
      ->capture_default_str();
  cmd->add_option("--temperature", a->temperature, "the teacher's sampling temperature")
      ->check(number_in(0, 2))
      ->capture_default_str();
  cmd->add_option("--top-p", a->top_p, "the teacher's nucleus sampling bound")->check(number_in(0, 1))->capture_default_str();
  cmd->add_flag("--sampling-from-models-file", a->sampling_from_models_file,
                "send the models file's temperature and top_p instead of --temperature and --top-p");
  cmd->add_flag("--require-block", a->rules.require_block,
                "refuse a reply without a <my_reasoning> block (upstream took the whole reply then)");
  cmd->add_flag("--no-code", a->rules.no_code, "ask for no code and refuse a rationale with a code fence");
  cmd->add_option("--max-quoted-lines", a->rules.max_quoted_lines,
                  "refuse a rationale that repeats more than N distinctive lines of the working kernel verbatim")
      ->check(whole_number(0, 1'000'000))
      ->default_str("off");
  cmd->add_flag("--name-problems", a->rules.name_problems,
                "tell the teacher on a retry what was wrong with its last reply (upstream asked again unchanged)");
  if (command == "fixit")
    cmd->add_flag_callback(
        "--no-editor", [a]() { a->rules.tags_left_to_editor = false; },
        "ask again for a rationale that still holds <my_reasoning>/</my_reasoning> instead of keeping it for the "
        "editor of `sft export` (upstream's stage 01)");
  cmd->add_option("--forbid", a->forbid, "more strings a rationale must not contain (comma-separated)");
  cmd->add_option("--parallel", a->parallel, "rows at once")->check(whole_number(1, 1024));
  cmd->add_flag("-q,--quiet", a->quiet, "no progress output");
  cmd->callback([&ctx, a, command]() { ctx.exit = reason_command(*a, ctx, command); });
}

}  // namespace ptxbench::cli
