// `ptxbench notes`: repair notes for the supervision arms (docs/supervision.md).
//   notes collect PAIRS --model TEACHER --out NOTES.jsonl   a teacher writes one note per Fixit pair
//   notes check NOTES.jsonl                                  validates a notes file and summarises it
//   notes schema                                             prints the JSON Schema a note must fit
#include <atomic>

#include <fmt/format.h>

#include "cli/agent_setup.h"
#include "cli/commands.h"
#include "supervision/note_collect.h"
#include "supervision/note_schema.h"
#include "supervision/pairs_reader.h"
#include "supervision/retrieval.h"

namespace ptxbench::cli {
namespace {

struct notes_collect_args {
  std::string pairs, model, models_file, base_url, out;
  int max_attempts = 3, parallel = 4;
  bool retry_rejected = false, quiet = false;
  uint64_t seed = 0;
};

exit_status run_collect(const notes_collect_args& a, const context& ctx) {
  if (a.out.empty()) return report_error("--out: give the notes file to write (NOTES.jsonl)", exit_status::usage);
  auto pairs = supervision::read_pairs(a.pairs);
  if (!pairs) return report_error(pairs.err().message, exit_status::usage);
  auto resolved = resolve_model_choice({a.model, a.models_file, a.base_url, false}, ctx);
  if (!resolved) return report_error(resolved.err().message, exit_status::usage);
  const std::atomic<bool>* interrupted = install_interrupt_handler();
  auto teacher = model_provider(*resolved, interrupted);
  if (!teacher) return report_error(teacher.err().message, exit_status::usage);
  supervision::collect_options o;
  o.out = a.out;
  o.max_attempts = a.max_attempts;
  o.parallel = a.parallel;
  o.teacher = resolved->spec.name;
  o.retry_rejected = a.retry_rejected;
  o.seed = a.seed;
  supervision::collect_services s;
  s.teacher = teacher->get();
  s.interrupt = interrupted;
  s.log = a.quiet ? nullptr : stderr;
  auto out = supervision::collect_notes(pairs->pairs, pairs->task_prompts, o, s);
  if (!out) return report_error(out.err().message, exit_status::usage);
  if (!a.quiet)
    std::fprintf(stderr, "ptxbench: %s\n",
                 fmt::format("{} pairs: {} notes written now, {} already there, {} rejected now, {} rejected earlier{}; "
                             "{} teacher calls | {}",
                             out->pairs, out->written, out->already_done, out->rejected, out->already_rejected,
                             out->already_rejected > 0 && !a.retry_rejected ? " (--retry-rejected asks again)" : "",
                             out->teacher_calls, a.out)
                     .c_str());
  if (out->status != exit_status::ok) return report_error(out->message, out->status);
  return exit_status::ok;
}

exit_status run_check(const std::string& file) {
  auto set = supervision::read_note_set(file);
  if (!set) return report_error(set.err().message, exit_status::usage);
  supervision::note_corpus corpus(std::move(*set));
  std::map<std::string, int> tags, tasks;
  std::size_t instructions = 0;
  for (const auto& n : corpus.notes().notes) {
    instructions += n.instructions.size();
    ++tasks[n.pair.source.task];
    for (const auto& t : n.tags) ++tags[t];
  }
  fmt::print("{}: {} notes ({} instruction notes) over {} wrong kernels; sha256 {}\n", file, corpus.notes().notes.size(),
             instructions, corpus.groups().size(), corpus.notes().sha256);
  std::string line;
  for (const auto& [t, n] : tasks) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", t, n);
  fmt::print("tasks: {}\n", line);
  line.clear();
  for (const auto& [t, n] : tags) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", t, n);
  fmt::print("tags: {}\n", line);
  return exit_status::ok;
}

}  // namespace

void add_notes_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("notes", "repair notes for the supervision arms: collect from Fixit pairs, check, schema");
  cmd->require_subcommand(1);
  auto a = std::make_shared<notes_collect_args>();
  auto* collect = cmd->add_subcommand("collect", "a teacher model writes one structured repair note per wrong/fixed pair");
  collect->add_option("pairs", a->pairs, "Fixit pairs directory (ptxbench fixit pairs), or its pairs.jsonl")->required();
  collect->add_option("--model", a->model, "teacher: a name in the models file, replay:FILE, openai:ID, anthropic:ID or gemini:ID")
      ->required();
  collect->add_option("--out", a->out, "notes file to write (JSON lines; re-run the same command to resume)")->required();
  collect->add_option("--models-file", a->models_file, "models file (default: <root>/configs/models.json)");
  collect->add_option("--base-url", a->base_url, "override the teacher's API base URL");
  collect->add_option("--max-attempts", a->max_attempts, "teacher replies per pair (a reply that does not fit the schema is sent back)")
      ->capture_default_str()->check(CLI::Range(1, 20));
  collect->add_option("--parallel", a->parallel, "pairs in flight")->capture_default_str()->check(CLI::Range(1, 256));
  collect->add_flag("--retry-rejected", a->retry_rejected, "ask again for pairs an earlier run rejected");
  collect->add_option("--seed", a->seed, "base of each pair's teacher seed (sent where the model config has send_seed; "
                                         "recorded in every note)")
      ->capture_default_str();
  collect->add_flag("-q,--quiet", a->quiet, "no progress output");
  collect->callback([&ctx, a]() { ctx.exit = run_collect(*a, ctx); });

  auto file = std::make_shared<std::string>();
  auto* check = cmd->add_subcommand("check", "validate a notes file and summarise it (notes, wrong kernels, tasks, tags)");
  check->add_option("notes", *file, "notes file (NOTES.jsonl)")->required();
  check->callback([&ctx, file]() { ctx.exit = run_check(*file); });

  auto* schema = cmd->add_subcommand("schema", "print the JSON Schema a repair note must fit");
  schema->callback([&ctx]() {
    fmt::print("{}\n", supervision::repair_note_schema_text());
    ctx.exit = exit_status::ok;
  });
}

}  // namespace ptxbench::cli
