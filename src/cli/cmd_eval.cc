// `ptxbench eval KERNEL.cu... --task NAME [--target h200]`: the whole pipeline on the local GPU —
// gate → build → link gate → static SASS → sanitize → correctness → timing → dynamic check (whose
// profiled calls run before timing and whose report is read while it runs).
#include "cli/candidate_command.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "verdict/gpu_options.h"

namespace ptxbench::cli {

void add_eval_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("eval", "run the whole pipeline on the local GPU (several kernels share one harness)");
  auto opts = std::make_shared<candidate_options>();
  add_candidate_options(*cmd, *opts);
  auto& g = opts->gpu;
  auto no_sanitize = std::make_shared<bool>(false), no_dynamic = std::make_shared<bool>(false),
       no_sandbox = std::make_shared<bool>(false);
  cmd->add_option("--device", g.device, "CUDA device ordinal")->check(whole_number(0, 1023));
  cmd->add_option("--warmup", g.warmup, "untimed (reference, candidate) pairs before timing")
      ->check(whole_number(0, 100000));
  cmd->add_option("--iterations", g.iterations,
                  "exactly this many timed (reference, candidate) pairs (default: adaptive, see --timing-ci)")
      ->check(whole_number(1, 100000))
      ->default_str("adaptive");
  cmd->add_option("--min-pairs", g.min_pairs, "adaptive timing: at least this many pairs")->check(whole_number(5, 100000));
  cmd->add_option("--timing-ci", g.timing_ci,
                  "adaptive timing: sample pairs until the median speedup's 95% interval is within ± this share of it")
      ->check(number_in(0.0001, 0.5));
  cmd->add_option("--timing-cap", g.timing_cap_s,
                  "adaptive timing: seconds of sampling before the verdict settles for the interval reached (it says so)")
      ->check(positive_number(3600, "a number of seconds"));
  cmd->add_option("--input-sets", g.input_sets, "rotating input sets (0: beyond 2x L2; 8 where 1/8 of GPU memory holds them; at least 3)")
      ->check(whole_number(0, 1000));
  cmd->add_option("--rule", g.rule, "correctness rule: allclose (|d| <= atol + rtol*|ref|) or upstream_and "
                                    "(fails only if |d| > atol and |d|/|ref| > rtol)")
      ->check(CLI::IsMember({"allclose", "upstream_and"}));
  cmd->add_flag("--no-sanitize", *no_sanitize, "skip the compute-sanitizer stage");
  cmd->add_option("--sanitizer-tools", g.sanitizer_tools, "comma list of memcheck, racecheck, synccheck, initcheck")
      ->check(comma_list_of(sanitizer_tool_names()));
  cmd->add_flag("--no-dynamic-check", *no_dynamic, "skip the runtime target-instruction count (Nsight Compute)");
  cmd->add_flag("--no-sandbox", *no_sandbox,
                "run candidates unconfined (to diagnose a GPU host only; every verdict records it)");
  cmd->add_option("--call-timeout", g.call_timeout_s, "seconds one candidate call may take")->check(timeout_seconds());
  cmd->add_option("--sanitize-timeout", g.sanitize_timeout_s, "seconds one call may take under compute-sanitizer")
      ->check(timeout_seconds());
  cmd->add_option("--profile-timeout", g.profile_timeout_s, "seconds the profiled call may take under Nsight Compute")
      ->check(timeout_seconds());
  cmd->add_option("--timing-channel", g.timing_channel,
                  "how the harness times a call: shared_memory (spin-polled shared page, tens of microseconds) or "
                  "socket (the older JSON round trip, ~1 ms)")
      ->check(CLI::IsMember({"shared_memory", "socket"}));
  auto no_tamper_check = std::make_shared<bool>(false);
  cmd->add_flag("--no-tamper-check", *no_tamper_check,
                "diagnosis: record the launch audit's findings instead of failing the call (\"measurement tampered\")");
  cmd->add_option("--seed", g.seed, "base seed for inputs (0: draw one; always recorded in the verdict)")
      ->check(seed_value());
  cmd->add_option("--harness", g.harness, "ptxbench-harness executable (default: beside ptxbench)");
  auto min_coverage = std::make_shared<double>(-1);
  cmd->add_option("--min-coverage", *min_coverage,
                  "target-correct also needs a required family to do this share of the task's work, e.g. 0.9 "
                  "(off by default: the paper's rule)")
      ->check(share())
      ->default_str("off");
  cmd->callback([&ctx, opts, no_sanitize, no_dynamic, no_sandbox, min_coverage, no_tamper_check]() {
    opts->gpu.sandbox = !*no_sandbox;
    opts->gpu.tamper_check = !*no_tamper_check;
    if (*min_coverage >= 0) opts->gpu.min_coverage = *min_coverage;
    opts->gpu.sanitize = !*no_sanitize;
    opts->gpu.dynamic_check = !*no_dynamic;
    ctx.exit = run_candidates(ctx, *opts, true);
  });
}

}  // namespace ptxbench::cli
