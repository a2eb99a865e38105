// `ptxbench jobs --queue URL [--json] [--slowest N]`: the evaluation service's queue as its store
// sees it: depth per state, the oldest waiting job, workers (alive, health, current job),
// throughput over the last 1, 5 and 15 minutes and the slowest jobs of the last hour.
#include <cstdio>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "service/queue_view.h"
#include "queue/open_store.h"

namespace ptxbench::cli {

void add_jobs_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("jobs", "the evaluation service's queue: depth, workers, throughput, slowest jobs");
  struct args {
    std::string queue;
    bool json = false;
    int slowest = 10;
  };
  auto a = std::make_shared<args>();
  cmd->add_option("--queue", a->queue, "the job store (as given to serve and worker)")->required();
  cmd->add_flag("--json", a->json, "print the report as JSON");
  cmd->add_option("--slowest", a->slowest, "how many of the slowest jobs to list")
      ->capture_default_str()
      ->check(whole_number(0, 1000));
  cmd->callback([&ctx, a]() {
    queue::store_options o;
    o.use_notify = false;
    o.mode = queue::store_options::open_mode::existing;  // reading never creates a queue
    auto store = queue::open_job_store(a->queue, o);
    if (!store) {
      // A SQLite queue that cannot be opened is the argument's fault (no such queue); a PostgreSQL
      // server that does not answer is not.
      ctx.exit = report_error(store.err().message,
                              queue::is_postgresql_url(a->queue) ? exit_status::infra : exit_status::usage);
      return;
    }
    auto stats = (*store)->stats();
    auto jobs = stats ? (*store)->summaries(stats->now_ms - 3600000) : result<std::vector<queue::job_summary>>(stats.err());
    auto workers = stats ? service::view_workers(**store, stats->now_ms)
                         : result<std::vector<service::worker_view>>(stats.err());
    if (!stats || !jobs || !workers) {
      ctx.exit = report_error((!stats ? stats.err() : !jobs ? jobs.err() : workers.err()).message, exit_status::infra);
      return;
    }
    auto report = service::queue_report(*stats, *jobs, *workers, a->slowest);
    if (a->json) std::puts(report.dump(2).c_str());
    else std::fputs(service::queue_report_text(report).c_str(), stdout);
    ctx.exit = exit_status::ok;
  });
}

}  // namespace ptxbench::cli
