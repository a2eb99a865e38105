// `ptxbench serve --listen 127.0.0.1:PORT [--queue URL] [--local-workers]`: the evaluation service's
// HTTP API (upstream FlashInfer-Bench's endpoints; docs/service.md). Without --queue it keeps its
// job store in the service directory and starts its own workers: one command, a working single-host
// service. SIGTERM/SIGINT (or POST /shutdown): stop listening, stop the local workers (they give
// their jobs back), exit. Nothing is lost on SIGKILL either: the store is durable and every job is
// re-leased after its lease expires.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/service_options.h"
#include "queue/open_store.h"
#include "service/http_server.h"
#include "service/job_runner.h"
#include "service/local_workers.h"
#include "service/worker_command.h"

namespace ptxbench::cli {
namespace fs = std::filesystem;
namespace {

std::atomic<bool> g_stop_requested{false};
extern "C" void on_serve_signal(int) { g_stop_requested = true; }

struct serve_args {
  std::string listen = "127.0.0.1:8000", queue, service_dir, token_file, target, devices, evaluator = "pipeline";
  std::string harness;
  bool local_workers = false, no_local_workers = false;
  int cpu_workers = 1, gpu_workers_per_device = 1, worker_restart_ms = 1000, fake_gpus = 1, threads = 64;
  service::fake_options fake;
  std::size_t max_body_bytes = 4u << 20;
  double unserved_after_s = 10;
  queue_timing timing;
  std::string call_timeout, sanitize_timeout, max_sessions;  ///< passed to the local GPU workers when set
};

result<std::pair<std::string, int>> parse_listen(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) return make_error(fmt::format("--listen {}: expected HOST:PORT", text));
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  try {
    std::size_t used = 0;
    int port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || port < 0 || port > 65535) throw std::out_of_range("port");
    return std::make_pair(host, port);
  } catch (const std::exception&) {
    return make_error(fmt::format("--listen {}: the port must be a number from 0 to 65535", text));
  }
}

fs::path self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("ptxbench") : p;
}

/// The target for requests that name none, decided before listening: --target (checked against
/// the local GPUs when there are local GPU workers: an H100 cannot serve h200 jobs), else the one
/// target the local GPUs are. "" when nothing here decides it: the API then uses the one target the
/// live GPU workers serve (service_api::default_target).
result<std::string> choose_default_target(const serve_args& a, const suite& tasks, const context& ctx,
                                          const std::vector<int>& gpus) {
  if (!a.target.empty() && !tasks.find_target(a.target)) {
    std::vector<std::string> names;
    for (const auto& [name, t] : tasks.targets) names.push_back(name);
    return make_error("--target: " + unknown_name_message("target", a.target, names, "expected one of the suite's targets"));
  }
  std::set<std::string> here;  // the targets the local GPUs are
  for (int d : gpus) {
    std::string gpu = a.fake.gpu_name;
    if (a.evaluator != "fake") {
      eval::pipeline_config config;
      config.root = ctx.root;
      config.cache_dir = ctx.cache_dir;
      config.cuda_root = ctx.cuda_root;
      config.gpu.device = d;
      if (!a.harness.empty()) config.gpu.harness = a.harness;
      service::gpu_job_runner runner(tasks, config, 1);
      auto env = runner.probe();
      if (!env) {
        std::fprintf(stderr, "ptxbench serve: %s; the default target is left to the GPU workers that register\n",
                     env.err().message.c_str());
        return a.target;
      }
      gpu = env->gpu_model;
    }
    auto own = tasks.target_for_gpu(gpu);
    if (own && !a.target.empty() && (*own)->name != a.target)
      return make_error(fmt::format("--target {}: GPU {} here is {} (target {}); it cannot serve {} jobs", a.target, d, gpu,
                                    (*own)->name, a.target));
    if (own) here.insert((*own)->name);
  }
  if (!a.target.empty()) return a.target;
  return here.size() == 1 ? *here.begin() : std::string();
}

/// Opens the queue; a PostgreSQL server that is not up yet is waited for (as workers do), anything
/// else is an error now.
result<std::unique_ptr<service::store_pool>> open_stores(const std::string& queue, const queue::store_options& options) {
  bool said = false;
  for (;;) {
    auto stores = service::store_pool::open([&] { return queue::open_job_store(queue, options); }, 4);
    if (stores || !queue::is_postgresql_url(queue)) return stores;
    if (!said)
      std::fprintf(stderr, "ptxbench serve: %s (retrying until the database answers; Ctrl-C to stop)\n",
                   stores.err().message.c_str());
    said = true;
    for (int i = 0; i < 10 && !g_stop_requested; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (g_stop_requested) return stores.err();
  }
}

exit_status run_serve(const serve_args& a, const context& ctx) {
  auto listen = parse_listen(a.listen);
  if (!listen) return report_error(listen.err().message, exit_status::usage);
  auto tasks = load_suite(ctx.suite_dir());
  if (!tasks) return report_error(tasks.err().message, exit_status::usage);
  if (a.evaluator != "pipeline" && a.evaluator != "fake")
    return report_error("--evaluator: expected pipeline (or fake, for tests)", exit_status::usage);
  std::string token;
  if (!a.token_file.empty()) {
    auto t = read_token_file(a.token_file);
    if (!t) return report_error(t.err().message, exit_status::usage);
    token = *t;
  }
  fs::path service_dir = a.service_dir.empty() ? ctx.cache_dir / "service" : fs::path(a.service_dir);
  std::string queue = a.queue.empty() ? (service_dir / "").string() : a.queue;
  bool local = a.local_workers || (a.queue.empty() && !a.no_local_workers);

  std::vector<int> gpus;
  if (local) {
    if (!a.devices.empty()) {
      auto d = parse_devices(a.devices);
      if (!d) return report_error(d.err().message, exit_status::usage);
      gpus = *d;
    } else if (a.evaluator == "fake") {
      for (int i = 0; i < a.fake_gpus; ++i) gpus.push_back(i);
    } else {
      gpus = service::local_gpu_devices();
    }
  }
  auto default_target = choose_default_target(a, *tasks, ctx, gpus);
  if (!default_target) return report_error(default_target.err().message, exit_status::usage);
  if (a.evaluator == "fake")
    std::fprintf(stderr, "ptxbench serve: warning: --evaluator fake: every verdict this server gives is made up (for tests "
                         "of the service only)\n");

  std::signal(SIGTERM, on_serve_signal);
  std::signal(SIGINT, on_serve_signal);
  auto options = store_options_for(a.timing);
  auto stores = open_stores(queue, options);
  if (!stores) return report_error(stores.err().message, exit_status::infra);
  auto reaper = queue::open_job_store(queue, options);
  if (!reaper) return report_error(reaper.err().message, exit_status::infra);

  service::server_settings s;
  s.host = listen->first;
  s.port = listen->second;
  s.token = token;
  s.max_body_bytes = a.max_body_bytes;
  s.threads = a.threads;
  s.reap_interval_ms = a.timing.reap_ms;
  s.unserved_after_ms = static_cast<int64_t>(a.unserved_after_s * 1000);
  s.api.default_target = *default_target;
  auto server = service::http_server::create(s, *tasks, std::move(*stores), std::move(*reaper));
  if (!server) return report_error(server.err().message, exit_status::usage);

  std::unique_ptr<service::local_workers> workers;
  if (local) {
    std::vector<std::string> base = {self_exe().string(), "--root", ctx.root.string(), "--cache-dir", ctx.cache_dir.string(),
                                     "worker", "--queue", queue, "--evaluator", a.evaluator};
    for (const auto& arg : queue_timing_args(a.timing)) base.push_back(arg);
    if (a.evaluator == "fake")
      base.insert(base.end(), {"--fake-delay-ms", std::to_string(a.fake.delay_ms), "--fake-cpu-delay-ms",
                               std::to_string(a.fake.cpu_delay_ms), "--fake-gpu-name", a.fake.gpu_name});
    std::vector<service::local_worker> list;
    for (int i = 0; i < a.cpu_workers; ++i) {
      auto argv = base;
      argv.insert(argv.end(), {"--role", "cpu", "--id-prefix", fmt::format("local{}", i)});
      list.push_back({fmt::format("cpu{}", i), argv});
    }
    // Several GPU workers on one GPU (--gpu-workers-per-device) each hold their own harness: one
    // candidate's host-side stages (runner start, sanitizer) overlap another's timed calls, and a
    // worker that dies leaves a sibling on the same GPU to take its job once the lease expires.
    // The first keeps the id local/gpuN; the k-th is local<k>/gpuN.
    for (int d : gpus)
      for (int k = 0; k < a.gpu_workers_per_device; ++k) {
        auto argv = base;
        const std::string prefix = k == 0 ? "local" : fmt::format("local{}", k);
        argv.insert(argv.end(), {"--role", "gpu", "--devices", std::to_string(d), "--id-prefix", prefix});
        if (!a.call_timeout.empty()) argv.insert(argv.end(), {"--call-timeout", a.call_timeout});
        if (!a.sanitize_timeout.empty()) argv.insert(argv.end(), {"--sanitize-timeout", a.sanitize_timeout});
        if (!a.max_sessions.empty()) argv.insert(argv.end(), {"--max-sessions", a.max_sessions});
        if (!a.harness.empty()) argv.insert(argv.end(), {"--harness", a.harness});
        if (!a.target.empty()) argv.insert(argv.end(), {"--targets", a.target});
        list.push_back({k == 0 ? fmt::format("gpu{}", d) : fmt::format("gpu{}-{}", d, k), argv});
      }
    if (gpus.empty())
      std::fprintf(stderr, "ptxbench serve: no local GPU (/dev/nvidia*): jobs wait until a GPU worker joins this queue\n");
    workers = std::make_unique<service::local_workers>(std::move(list), service_dir / "logs", a.worker_restart_ms);
  }
  std::fprintf(stderr, "ptxbench serve: listening on http://%s:%d (queue %s%s%s; default target %s)\n", s.host.c_str(),
               (*server)->port(), queue.c_str(), local ? ", local workers" : "", token.empty() ? "" : ", bearer token required",
               default_target->empty() ? "the one the live GPU workers serve" : default_target->c_str());
  // The signal handler only sets a flag; this thread turns it into a clean stop of the server.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done) {
      if (g_stop_requested) {
        (*server)->stop();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  (*server)->run();
  done = true;
  watcher.join();
  workers.reset();  // SIGTERM: the workers give their jobs back
  return exit_status::ok;
}

}  // namespace

void add_serve_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("serve", "the evaluation service: upstream-compatible HTTP API over a durable job queue");
  auto a = std::make_shared<serve_args>();
  cmd->add_option("--listen", a->listen, "HOST:PORT to listen on (an address other than loopback needs --token-file)")
      ->capture_default_str();
  cmd->add_option("--queue", a->queue, "the job store: a directory or sqlite:PATH, or postgresql://... for many hosts "
                                       "(default: SQLite in the service directory, with local workers)");
  cmd->add_flag("--local-workers", a->local_workers, "start workers on this host (the default without --queue)");
  cmd->add_flag("--no-local-workers", a->no_local_workers, "start no workers (they run elsewhere)");
  cmd->add_option("--cpu-workers", a->cpu_workers, "local CPU workers")->capture_default_str()->check(whole_number(0, 64));
  cmd->add_option("--devices", a->devices, "local GPU workers: these GPU ordinals (default: every /dev/nvidiaN)");
  cmd->add_option("--gpu-workers-per-device", a->gpu_workers_per_device,
                  "local GPU workers per GPU, each with its own harness")
      ->capture_default_str()
      ->check(whole_number(1, 16));
  cmd->add_option("--call-timeout", a->call_timeout, "local GPU workers: seconds one candidate call may take")
      ->check(timeout_seconds());
  cmd->add_option("--sanitize-timeout", a->sanitize_timeout, "local GPU workers: seconds one call may take under "
                                                             "compute-sanitizer")
      ->check(timeout_seconds());
  cmd->add_option("--max-sessions", a->max_sessions, "local GPU workers: harnesses kept alive per GPU (one per task)")
      ->check(whole_number(1, 64));
  cmd->add_option("--target", a->target,
                  "the GPU kind a request that names none is evaluated for (default: the local GPU's suite target; "
                  "without local GPU workers, the one target the live GPU workers serve)");
  cmd->add_option("--unserved-after", a->unserved_after_s,
                  "seconds a job may wait with no live worker able to take it (no CPU worker, or none for its target) "
                  "before it is failed with the reason; 0: never")
      ->capture_default_str()
      ->check(number_in(0, 86400));
  cmd->add_option("--token-file", a->token_file, "a file holding the bearer token every request must carry");
  cmd->add_option("--max-body-bytes", a->max_body_bytes, "larger request bodies are refused (413)")
      ->capture_default_str()
      ->check(whole_number(1024, 1 << 30));
  cmd->add_option("--service-dir", a->service_dir, "where the default queue and the local workers' logs live "
                                                   "(default: <cache-dir>/service)");
  cmd->add_option("--worker-restart-ms", a->worker_restart_ms,
                  "local workers: milliseconds before one that exited is started again (doubling while it keeps dying)")
      ->capture_default_str()
      ->check(whole_number(0, 600'000));
  cmd->add_option("--threads", a->threads, "request threads (each long-poll holds one)")
      ->capture_default_str()
      ->check(whole_number(4, 1024))
      ->group("");
  add_queue_timing(*cmd, a->timing);
  cmd->add_option("--evaluator", a->evaluator, "local workers: pipeline, or fake (tests only)")->group("");
  cmd->add_option("--harness", a->harness, "local GPU workers and the GPU probe: the ptxbench-harness executable")->group("");
  cmd->add_option("--fake-gpus", a->fake_gpus, "fake evaluator: local GPU workers to start")
      ->check(whole_number(0, 64))
      ->group("");
  add_fake_evaluator_options(*cmd, a->fake);
  cmd->callback([&ctx, a]() { ctx.exit = run_serve(*a, ctx); });
}

}  // namespace ptxbench::cli
