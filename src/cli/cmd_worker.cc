// `ptxbench worker --queue URL --role cpu|gpu [--devices 0,1]`: a worker of the evaluation service
// (docs/service.md). CPU workers run the gate, the build, the link gate and the static SASS check
// and store the built object content-addressed; GPU workers run the GPU stages in a long-lived
// harness per task. SIGTERM/SIGINT: the current job is given back, then the worker exits.
#include <atomic>
#include <csignal>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/service_options.h"
#include "queue/open_store.h"
#include "service/worker_command.h"

namespace ptxbench::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop = true; }

}  // namespace

void add_worker_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("worker", "a worker of the evaluation service: CPU stages (--role cpu) or GPU stages (--role gpu)");
  struct args {
    std::string queue, role, devices = "0", targets, id_prefix, evaluator = "pipeline", harness;
    int jobs = 1, max_sessions = 2;
    service::fake_options fake;
    bool allow_kill_self = false, quiet = false;
    queue_timing timing;
    double call_timeout_s = 30, sanitize_timeout_s = 120;
  };
  auto a = std::make_shared<args>();
  cmd->add_option("--queue", a->queue, "the job store: a directory or sqlite:PATH (one host), postgresql://... (many)")
      ->required();
  cmd->add_option("--role", a->role, "cpu (gate, build, static SASS) or gpu (sanitize, correctness, timing, runtime check)")
      ->required()
      ->check(CLI::IsMember({"cpu", "gpu"}));
  cmd->add_option("--devices", a->devices, "gpu: the GPU ordinals to serve, one worker loop each")->capture_default_str();
  cmd->add_option("--jobs", a->jobs, "cpu: builds in parallel")->capture_default_str()->check(whole_number(1, 256));
  cmd->add_option("--targets", a->targets, "gpu: GPU kinds served, comma-separated (default: the kind the GPU is)");
  cmd->add_option("--id-prefix", a->id_prefix, "worker ids are PREFIX/cpuN, PREFIX/gpuN (default: the host name)");
  cmd->add_option("--max-sessions", a->max_sessions, "gpu: harnesses kept alive per GPU (one per task)")
      ->capture_default_str()
      ->check(whole_number(1, 64));
  cmd->add_option("--call-timeout", a->call_timeout_s, "gpu: seconds one candidate call may take (a request's timeout overrides)")
      ->capture_default_str()
      ->check(timeout_seconds());
  cmd->add_option("--sanitize-timeout", a->sanitize_timeout_s, "gpu: seconds one call may take under compute-sanitizer")
      ->capture_default_str()
      ->check(timeout_seconds());
  cmd->add_flag("-q,--quiet", a->quiet, "no progress lines on stderr");
  add_queue_timing(*cmd, a->timing);
  // Test-only: the fake evaluator (docs/service.md, "Testing").
  cmd->add_option("--evaluator", a->evaluator, "pipeline, or fake (tests only)")->group("");
  cmd->add_option("--harness", a->harness, "gpu: the ptxbench-harness executable (default: beside ptxbench)")->group("");
  add_fake_evaluator_options(*cmd, a->fake);
  cmd->add_flag("--allow-kill-self", a->allow_kill_self, "fake evaluator: FAKE_KILL_WORKER kills this worker")->group("");
  cmd->callback([&ctx, a]() {
    if (a->evaluator != "pipeline" && a->evaluator != "fake") {
      ctx.exit = report_error("--evaluator: expected pipeline (or fake, for tests)", exit_status::usage);
      return;
    }
    auto tasks = load_suite(ctx.suite_dir());
    if (!tasks) {
      ctx.exit = report_error(tasks.err().message, exit_status::usage);
      return;
    }
    service::worker_settings s;
    s.queue = a->queue;
    s.role = a->role == "gpu" ? queue::worker_role::gpu : queue::worker_role::cpu;
    if (s.role == queue::worker_role::gpu) {
      auto devices = parse_devices(a->devices);
      if (!devices) {
        ctx.exit = report_error(devices.err().message, exit_status::usage);
        return;
      }
      s.devices = *devices;
    }
    s.jobs = a->jobs;
    std::stringstream ss(a->targets);
    for (std::string t; std::getline(ss, t, ',');)
      if (!t.empty()) s.targets.push_back(t);
    for (const auto& t : s.targets)
      if (!tasks->find_target(t)) {
        ctx.exit = report_error(fmt::format("--targets: unknown target '{}'", t), exit_status::usage);
        return;
      }
    s.evaluator = a->evaluator;
    s.fake = a->fake;
    s.fake.allow_kill_self = a->allow_kill_self;
    s.pipeline.root = ctx.root;
    s.pipeline.cache_dir = ctx.cache_dir;
    s.pipeline.cuda_root = ctx.cuda_root;
    s.pipeline.gpu.call_timeout_s = a->call_timeout_s;
    s.pipeline.gpu.harness = a->harness;
    s.pipeline.gpu.sanitize_timeout_s = a->sanitize_timeout_s;
    s.id_prefix = a->id_prefix;
    s.lease_ms = a->timing.lease_ms;
    s.max_sessions = a->max_sessions;
    s.store = store_options_for(a->timing);
    s.store.mode = queue::store_options::open_mode::join;  // never a new queue in a mistyped folder
    s.quiet = a->quiet;
    // A queue the worker cannot open for a reason that will not pass (no such folder) is an error
    // now; a database that is down is waited for (run_workers retries).
    if (!queue::is_postgresql_url(s.queue))
      if (auto probe = queue::open_job_store(s.queue, s.store); !probe) {
        ctx.exit = report_error(probe.err().message, exit_status::usage);
        return;
      }
    std::signal(SIGTERM, on_stop_signal);
    std::signal(SIGINT, on_stop_signal);
    int rc = service::run_workers(s, *tasks, g_stop);
    ctx.exit = rc == 0 ? exit_status::ok : rc == 2 ? exit_status::usage : exit_status::infra;
  });
}

}  // namespace ptxbench::cli
