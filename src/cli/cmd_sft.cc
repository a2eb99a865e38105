// `ptxbench sft export | recipe`: SFT rows for train/, and the paper's recipes s0-s6 run end to end
// (docs/adaptation.md).
#include <unistd.h>

#include <fmt/format.h>

#include "adapt/kernelgen.h"
#include "adapt/mine.h"
#include "adapt/pairs.h"
#include "adapt/reason.h"
#include "adapt/recipe.h"
#include "adapt/repair.h"
#include "adapt/sft_export.h"
#include "adapt/staged_dir.h"
#include "agent/provider_factory.h"
#include "cli/option_checks.h"
#include "cli/commands.h"
#include "cli/fixit_common.h"
#include "core/file_io.h"
#include "prompts/token_estimator.h"

namespace ptxbench::cli {
namespace fs = std::filesystem;
namespace {

struct tokenizer_args {
  std::string tokenizer, chat_template = "auto";
};

std::vector<fs::path> cl100k_candidates(const context& ctx) {
  return prompts::default_ranks_candidates(env_value("PTXBENCH_TIKTOKEN_RANKS").value_or(""), ctx.root, ctx.cache_dir);
}

struct export_args {
  tokenizer_args tok;
  std::vector<std::string> reasoning;
  std::string format, out, kernel_fence = "cpp";
  bool no_normalize = false;
  std::size_t max_tokens = adapt::k_default_max_tokens;
  int64_t shuffle_seed = 42;
  bool no_shuffle = false, no_editor = false, stream = false;
  std::string editor_model, models_file;
};

// A model-driven stage's model (a teacher, the editor) named in a plan, with the teacher's sampling.
result<sampled_model> teacher(const std::string& model, const std::string& models_file, bool stream, const context& ctx,
                              const std::atomic<bool>* cancel,
                              const std::optional<adapt::teacher_sampling>& sampling = std::nullopt) {
  return sampled_model_provider({model, models_file, "", stream}, sampling, ctx, cancel);
}

// The editor's client, made on its first request (most exports need none): the model's provider with
// the teacher's sampling (upstream's stage 01 sent the synthesis config's temperature and top_p).
// Sets o.edit, and o.interrupted (true once Ctrl-C cancelled a call, so the export stops instead of
// dropping the row).
void lazy_editor(adapt::export_options& o, const std::string& model, const std::string& models_file, bool stream,
                 const adapt::teacher_sampling& sampling, const context& ctx) {
  struct client {
    std::optional<resolved_model> resolved;
    std::unique_ptr<agent::provider> llm;
    const std::atomic<bool>* cancel = nullptr;
  };
  auto c = std::make_shared<client>();
  o.interrupted = [c]() { return c->cancel != nullptr && c->cancel->load(); };
  o.edit = [c, model, models_file, stream, sampling, &ctx](const adapt::editor_call& call) -> result<std::string> {
    if (!c->llm) {
      c->cancel = install_interrupt_handler();
      auto t = teacher(model, models_file, stream, ctx, c->cancel, sampling);
      if (!t) return t.err().with_context("the editor model");
      c->resolved = std::move(t->resolved);
      c->llm = std::move(t->provider);
    }
    agent::completion_request req;
    req.messages = {{"system", call.system, ""}, {"user", call.user, ""}};
    req.turn = call.turn;
    agent::call_result r = c->llm->complete(req);
    if (!r.ok()) return make_error(fmt::format("{}: {}", model, r.failure.message));
    return r.reply->content;
  };
}

// The reasoning teacher named in a reasoning directory's manifest (upstream's editor was the
// synthesis model), or "".
std::string reasoning_teacher(const fs::path& dir) {
  auto m = adapt::read_manifest(dir, adapt::k_reasoning_format, "reasoning");
  return m ? m->value("model", "") : "";
}

void print_export(const ordered_json& m, const std::string& out) {
  const auto& c = m["counts"];
  std::string dropped;
  for (const auto& [k, v] : c["dropped"].items()) dropped += fmt::format("{}{} {}", dropped.empty() ? "" : ", ", v.get<int>(), k);
  const auto& t = m["length_stats"]["tokens_exported"];
  fmt::print("{} of {} rows exported{} -> {}\n", c["out"].get<int>(), c["in"].get<int>(),
             dropped.empty() ? "" : " (dropped: " + dropped + ")", (fs::path(out) / "sft.jsonl").string());
  fmt::print("tokens per row: min {} median {} max {} (limit {}; {}, template {})\n", t.value("min", 0),
             t.value("median", 0), t.value("max", 0), m["token_count"]["max_tokens"].get<std::size_t>(),
             m["token_count"]["method"].get<std::string>(), m["token_count"]["chat_template"].get<std::string>());
}

exit_status export_command(const export_args& a, const context& ctx, const std::vector<std::string>& argv) {
  adapt::export_options o;
  o.format = a.format;
  for (const auto& r : a.reasoning) o.reasoning_dirs.emplace_back(r);
  o.tokenizer = a.tok.tokenizer;
  o.chat_template = a.tok.chat_template;
  o.cl100k_candidates = cl100k_candidates(ctx);
  o.max_tokens = a.max_tokens;
  if (a.no_shuffle) o.shuffle_seed = std::nullopt;
  else o.shuffle_seed = static_cast<uint64_t>(a.shuffle_seed);
  if (a.no_editor) o.editor = false;
  if (!a.no_editor && !a.reasoning.empty()) {
    o.editor_model = a.editor_model.empty() ? reasoning_teacher(a.reasoning.front()) : a.editor_model;
    if (!o.editor_model.empty()) lazy_editor(o, o.editor_model, a.models_file, a.stream, {}, ctx);
  }
  o.kernel_fence = a.kernel_fence;
  o.normalize = !a.no_normalize;
  o.argv = argv;
  auto m = adapt::export_sft(o, a.out);
  if (!m) return report_error(m.err().message, exit_status::usage);
  print_export(*m, a.out);
  return exit_status::ok;
}

struct recipe_args {
  std::string name, out, repair_model, reason_model, models_file;
  std::vector<std::string> runs;
  tokenizer_args tok;
  evaluator_args eval;
  int parallel = 4;
  std::size_t max_tokens = 0;  ///< 0: the recipe's
  bool stream = false, list = false, quiet = false, allow_underfilled = false;
};

exit_status recipe_command(const recipe_args& a, const context& ctx) {
  fs::path dir = ctx.root / "configs" / "recipes";
  if (a.list) {
    for (const auto& n : adapt::list_recipes(dir)) {
      auto r = adapt::load_recipe(dir, n);
      if (!r) return report_error(r.err().message, exit_status::usage);
      fmt::print("{:<4} {:<10} {:<20} {:>5} rows  {}\n", r->name, r->row_format, r->problems_name,
                 r->paper["rows"].get<int>(), r->description);
    }
    return exit_status::ok;
  }
  if (a.name.empty() || a.out.empty() || a.runs.empty())
    return report_error("sft recipe needs NAME, --runs RUN_DIR... and --out DIR (or --list)", exit_status::usage);
  auto r = adapt::load_recipe(dir, a.name);
  if (!r) return report_error(r.err().message, exit_status::usage);
  fs::path out = a.out;
  ordered_json record = {{"format", "ptxbench.sft-recipe-run/1"}, {"recipe", r->json}, {"runs", a.runs},
                         {"repair_model", a.repair_model.empty() ? r->repair_model : a.repair_model},
                         {"reason_model", a.reason_model.empty() ? r->reason_model : a.reason_model},
                         {"evaluator", a.eval.evaluator}, {"cpu_only", a.eval.cpu_only},
                         {"allow_underfilled_definitions", a.allow_underfilled},
                         {"max_tokens", a.max_tokens ? ordered_json(a.max_tokens) : ordered_json(nullptr)}};
  std::error_code ec;
  if (fs::exists(out / "recipe.json", ec)) {
    auto have = parse_json(*read_text_file(out / "recipe.json", 1u << 24), (out / "recipe.json").string());
    if (!have) return report_error(have.err().message, exit_status::usage);
    for (const char* key : {"recipe", "runs", "repair_model", "reason_model", "evaluator", "cpu_only",
                            "allow_underfilled_definitions", "max_tokens"})
      if ((*have)[key] != record[key])
        return report_error(fmt::format("{} was made with a different {}; re-run the same command or choose a new --out",
                                        out.string(), key), exit_status::usage);
  } else if (fs::exists(out, ec) && !fs::is_empty(out, ec)) {
    return report_error(fmt::format("{} exists and is not a recipe directory; choose a new --out", out.string()),
                        exit_status::usage);
  } else if (auto w = write_file_atomic(out / "recipe.json", dump_pretty(record) + "\n"); !w) {
    return report_error(w.err().message, exit_status::usage);
  }
  auto tasks = load_suite(ctx.suite_dir());
  if (!tasks) return report_error(tasks.err().message, exit_status::usage);
  std::vector<fs::path> run_dirs(a.runs.begin(), a.runs.end());
  auto described = adapt::describe_runs(*r, run_dirs);
  if (!described) return report_error(described.err().message, exit_status::usage);
  adapt::recipe_run_facts facts = std::move(*described);
  facts.repair_model = record["repair_model"].get<std::string>();
  facts.reason_model = record["reason_model"].get<std::string>();
  facts.evaluator = a.eval.evaluator;
  facts.cpu_only = a.eval.cpu_only;
  facts.max_tokens = a.max_tokens ? a.max_tokens : r->max_tokens;
  const std::atomic<bool>* interrupted = install_interrupt_handler();
  ordered_json counts = ordered_json::object();
  auto say = [&](const std::string& s) {
    if (!a.quiet) std::fprintf(stderr, "ptxbench: recipe %s: %s\n", r->name.c_str(), s.c_str());
  };
  fs::path source;  // what the reasoning stage reads
  if (r->row_format == "fixit") {
    if (!fs::exists(out / "mined", ec)) {
      say("mining failed turns");
      adapt::mine_options m = r->mine;
      for (const auto& run : a.runs) m.run_dirs.emplace_back(run);
      m.tasks = r->tasks;
      if (a.allow_underfilled) m.cap.allow_underfilled = true;
      m.argv = {"ptxbench", "sft", "recipe", a.name};
      if (auto res = adapt::mine_failures(m, out / "mined"); !res) return report_error(res.err().message, exit_status::usage);
    }
    auto mined = adapt::read_manifest(out / "mined", adapt::k_mined_format, "mined");
    if (!mined) return report_error(mined.err().message, exit_status::usage);
    counts["mined"] = (*mined)["counts"]["selected"];
    for (const auto& t : (*mined)["counts"].value("underfilled_definitions", ordered_json::array()))
      facts.underfilled.push_back(t.get<std::string>());
    if (!fs::exists(out / "pairs", ec)) {
      say("repairing with " + record["repair_model"].get<std::string>());
      auto t = teacher(record["repair_model"].get<std::string>(), a.models_file, a.stream, ctx, interrupted);
      if (!t) return report_error(t.err().message, exit_status::usage);
      auto plan = adapt::plan_repairs(out / "mined", *tasks, "", 0);
      if (!plan) return report_error(plan.err().message, exit_status::usage);
      agent::sweep_options o;
      o.out_dir = out / "repairs";
      o.turns = r->repair_turns;
      o.target_speedup = r->repair_target_speedup;
      o.parallel = a.parallel;
      o.gpus = a.eval.gpus;
      o.run_on_gpu = !a.eval.cpu_only;
      o.eval_retries = a.eval.eval_retries;
      o.evaluator_name = a.eval.evaluator;
      o.quiet = a.quiet;
      o.progress_bar = isatty(STDERR_FILENO) != 0;
      if (auto c = clamp_turns_to_replay(t->resolved.spec, o.turns); !c) return report_error(c.err().message, exit_status::usage);
      if (auto gpu = check_gpu_for(a.eval.evaluator, o.run_on_gpu, tasks->find_target(plan->target)); !gpu)
        return report_error(gpu.err().message, exit_status::usage);
      auto factory = evaluator_factory_for(a.eval.evaluator, a.eval.fake_delay_ms, ctx);
      if (!factory) return report_error(factory.err().message, exit_status::usage);
      agent::sweep_services s;
      s.tasks = &*tasks;
      s.model = &t->resolved.spec;
      s.llm = t->provider.get();
      s.make_evaluator = *factory;
      s.prompts = [](const task&, const target_info&, const std::string&) -> result<agent::prompt_pair> {
        return make_error("internal: a repair trajectory without its prompts");
      };
      s.interrupt = interrupted;
      auto rep = adapt::run_repairs(*plan, o, s);
      if (!rep) return report_error(rep.err().message, exit_status::usage);
      if (rep->status != exit_status::ok) return report_error(rep->message, rep->status);
      say("pairing");
      adapt::pairs_options p = r->pairs;
      p.repair_dirs = {out / "repairs"};
      p.argv = {"ptxbench", "sft", "recipe", a.name};
      if (auto res = adapt::collect_pairs(p, out / "pairs"); !res) return report_error(res.err().message, exit_status::usage);
    }
    auto summary = parse_json(*read_text_file(out / "repairs" / "summary.json", 1u << 26), "summary");
    if (summary) counts["repaired"] = (*summary)["totals"]["correct_trajectories"];
    auto pairs = adapt::read_manifest(out / "pairs", adapt::k_pairs_format, "pairs");
    if (!pairs) return report_error(pairs.err().message, exit_status::usage);
    counts["pairs"] = (*pairs)["counts"]["pairs"];
    source = out / "pairs";
  } else {
    if (!fs::exists(out / "kernels", ec)) {
      say("collecting correct kernels");
      adapt::kernelgen_options k = r->collect;
      for (const auto& run : a.runs) k.run_dirs.emplace_back(run);
      k.tasks = r->tasks;
      k.argv = {"ptxbench", "sft", "recipe", a.name};
      if (auto res = adapt::collect_kernels(k, out / "kernels"); !res) return report_error(res.err().message, exit_status::usage);
    }
    auto kernels = adapt::read_manifest(out / "kernels", adapt::k_kernelgen_format, "kernels");
    if (!kernels) return report_error(kernels.err().message, exit_status::usage);
    counts["correct_turns"] = (*kernels)["counts"]["correct_turns"];
    counts["kernels"] = (*kernels)["counts"]["kernels"];
    source = out / "kernels";
  }
  if (!fs::exists(out / "sft", ec)) {
    say("writing rationales with " + record["reason_model"].get<std::string>());
    auto t = teacher(record["reason_model"].get<std::string>(), a.models_file, a.stream, ctx, interrupted, r->sampling);
    if (!t) return report_error(t.err().message, exit_status::usage);
    adapt::reason_options ro;
    ro.source_dir = source;
    ro.out_dir = out / "reasoning";
    ro.rules = r->rules;
    ro.sampling = r->sampling;
    ro.parallel = a.parallel;
    ro.quiet = a.quiet;
    ro.argv = {"ptxbench", "sft", "recipe", a.name};
    adapt::reason_services rs;
    rs.teacher = t->provider.get();
    rs.model = &t->resolved.spec;
    rs.interrupt = interrupted;
    auto reasoned = adapt::run_reasoning(ro, rs);
    if (!reasoned) return report_error(reasoned.err().message, exit_status::usage);
    if (reasoned->status != exit_status::ok) return report_error(reasoned->message, reasoned->status);
    say("exporting");
    adapt::export_options eo;
    eo.format = r->row_format;
    eo.reasoning_dirs = {out / "reasoning"};
    eo.tokenizer = a.tok.tokenizer;
    eo.chat_template = a.tok.chat_template == "auto" ? r->chat_template : a.tok.chat_template;
    eo.cl100k_candidates = cl100k_candidates(ctx);
    eo.max_tokens = facts.max_tokens;
    eo.kernel_fence = r->kernel_fence;
    eo.normalize = r->normalize;
    eo.recipe = r->json;
    eo.argv = {"ptxbench", "sft", "recipe", a.name};
    eo.editor_model = record["reason_model"].get<std::string>();
    lazy_editor(eo, eo.editor_model, a.models_file, a.stream, r->sampling, ctx);
    auto m = adapt::export_sft(eo, out / "sft");
    if (!m) return report_error(m.err().message, exit_status::usage);
    print_export(*m, (out / "sft").string());
  }
  auto reasoning = adapt::read_manifest(out / "reasoning", adapt::k_reasoning_format, "reasoning");
  if (reasoning) counts["rationales"] = (*reasoning)["counts"]["done"];
  auto sft = adapt::read_manifest(out / "sft", adapt::k_sft_export_format, "sft export");
  if (!sft) return report_error(sft.err().message, exit_status::usage);
  counts["rows"] = (*sft)["counts"]["out"];
  ordered_json comparison = adapt::compare_with_paper(*r, counts, facts);
  fmt::print("recipe {} ({}, {}): {}\n", r->name, r->upstream_tag, r->problems_name, r->description);
  fmt::print("  {:<30} {:>8} {:>8}\n", "stage", "ours", "paper");
  for (const auto& row : comparison["stages"]) {
    auto cell = [](const ordered_json& v) { return v.is_null() ? std::string("-") : v.dump(); };
    fmt::print("  {:<30} {:>8} {:>8}\n", row["stage"].get<std::string>(), cell(row["ours"]), cell(row["paper"]));
  }
  for (const auto& why : comparison["why_different"]) fmt::print("  differs: {}\n", why.get<std::string>());
  ordered_json report = {{"format", "ptxbench.sft-recipe-report/1"},
                         {"recipe", r->name},
                         {"counts", counts},
                         {"paper", r->paper},
                         {"comparison", comparison["stages"]},
                         {"why_different", comparison["why_different"]},
                         {"runs", {{"tasks_covered", facts.tasks_covered},
                                   {"variants", facts.variants},
                                   {"trajectories", facts.trajectories},
                                   {"max_turns", facts.max_turns}}},
                         {"teachers", {{"repair", r->row_format == "fixit" ? ordered_json(facts.repair_model) : ordered_json(nullptr)},
                                       {"reason", facts.reason_model}}},
                         {"sft", (out / "sft" / "sft.jsonl").string()}};
  if (auto w = write_file_atomic(out / "recipe_report.json", dump_pretty(report) + "\n"); !w)
    return report_error(w.err().message, exit_status::usage);
  return exit_status::ok;
}

}  // namespace

void add_sft_command(CLI::App& app, context& ctx) {
  auto* sft = app.add_subcommand("sft", "SFT rows for train/ and the paper's dataset recipes");
  sft->require_subcommand(1);
  auto ea = std::make_shared<export_args>();
  auto* ex = sft->add_subcommand("export", "JSONL rows {id, messages, metadata} from rationales (Fixit: 5 messages, KernelGen: 3)");
  ex->add_option("reasoning", ea->reasoning, "reasoning directories (`fixit reason` / `kernelgen reason` --out)")->required();
  ex->add_option("--format", ea->format, "fixit or kernelgen")->required();
  ex->add_option("--out", ea->out, "output directory: sft.jsonl and manifest.json (must not exist)")->required();
  ex->add_option("--tokenizer", ea->tok.tokenizer,
                 "the target model's tokenizer.json (byte-level BPE), or cl100k (a labelled, approximate fallback; the "
                 "default when none is given)");
  ex->add_option("--chat-template", ea->tok.chat_template,
                 "auto (from tokenizer_config.json beside the tokenizer, else chatml), chatml, qwen3 or llama3")
      ->capture_default_str();
  ex->add_option("--max-tokens", ea->max_tokens, "drop rows whose rendering is longer (never truncated)")
      ->check(whole_number(1, 1'000'000'000));
  ex->add_option("--kernel-fence", ea->kernel_fence, "the repaired kernel's fence in Fixit rows: cpp (upstream's) or cuda")
      ->check(one_of({"cpp", "cuda"}))
      ->capture_default_str();
  ex->add_flag("--no-normalize-with-chat-template", ea->no_normalize,
               "keep the messages as built instead of writing each as the chat template renders it (upstream's "
               "default normalisation: Qwen3 drops the reasoning of earlier assistant turns)");
  auto* seed = ex->add_option("--shuffle-seed", ea->shuffle_seed,
                               "shuffle the rows (sorted by id) as Python's random.Random(N).shuffle does; upstream's "
                               "seed 42")
                    ->check(whole_number(0, INT64_MAX))
                    ->capture_default_str();
  ex->add_flag("--no-shuffle", ea->no_shuffle, "write the rows in id order")->excludes(seed);
  auto* no_editor = ex->add_flag("--no-editor", ea->no_editor,
               "drop rows whose rationale holds the reasoning tags or whose rendering is over --max-tokens, instead "
               "of sending them once to the editor model (upstream's Fixit stage 01; KernelGen never edits)");
  ex->add_option("--editor-model", ea->editor_model,
                 "the editor model (default: the reasoning teacher named in the first reasoning directory)")
      ->excludes(no_editor);
  ex->add_option("--models-file", ea->models_file, "models file for the editor (default: <root>/configs/models.json)");
  ex->add_flag("--stream", ea->stream, "stream the editor's replies");
  ex->callback([&ctx, ea, ex]() { ctx.exit = export_command(*ea, ctx, command_line(*ex, {"ptxbench", "sft", "export"})); });

  auto ra = std::make_shared<recipe_args>();
  auto* rc = sft->add_subcommand("recipe", "build one of the paper's datasets s0-s6 (configs/recipes) and compare its counts");
  rc->add_option("name", ra->name, "recipe name (s0 ... s6)");
  rc->add_flag("--list", ra->list, "list the recipes");
  rc->add_option("--runs", ra->runs, "run directories: the student's (Fixit) or the teacher's (KernelGen)");
  rc->add_option("--out", ra->out, "recipe directory; re-run the same command to resume");
  rc->add_option("--repair-model", ra->repair_model, "repair teacher (default: the recipe's)");
  rc->add_option("--reason-model", ra->reason_model, "reasoning teacher (default: the recipe's)");
  rc->add_option("--models-file", ra->models_file, "models file (default: <root>/configs/models.json)");
  rc->add_flag("--stream", ra->stream, "stream the teachers' replies");
  rc->add_option("--tokenizer", ra->tok.tokenizer, "the target model's tokenizer.json (default: the cl100k fallback)");
  rc->add_option("--chat-template", ra->tok.chat_template, "override the recipe's chat template")->capture_default_str();
  add_evaluator_options(*rc, ra->eval);
  rc->add_flag("--allow-underfilled-definitions", ra->allow_underfilled,
               "mine tasks with fewer failed turns than the recipe's cap (small runs; the report names them)");
  rc->add_option("--max-tokens", ra->max_tokens,
                 "drop rows longer than this instead of the recipe's limit (a tokenizer other than the target's)")
      ->check(whole_number(1, 1'000'000'000))
      ->default_str("the recipe's");
  rc->add_option("--parallel", ra->parallel, "repairs / rationales at once")->check(whole_number(1, 1024));
  rc->add_flag("-q,--quiet", ra->quiet, "no progress output");
  rc->callback([&ctx, ra]() { ctx.exit = recipe_command(*ra, ctx); });
}

}  // namespace ptxbench::cli
