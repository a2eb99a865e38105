#pragma once
// `ptxbench worker --queue URL --role cpu|gpu [--devices 0,1]`: one worker loop (service/worker_loop.h)
// per device (gpu) or per --jobs slot (cpu), each with its own store connection and a stable id
// (<host>/gpu<N>, <host>/cpu<N>) so a restarted worker replaces its registry row.

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "eval/pipeline.h"
#include "service/job_runner.h"
#include "queue/job_store.h"

namespace ptxbench::service {

struct worker_settings {
  std::string queue;
  queue::worker_role role = queue::worker_role::cpu;
  std::vector<int> devices = {0};     ///< gpu
  int jobs = 1;                       ///< cpu: loops in parallel
  std::vector<std::string> targets;   ///< gpu: GPU kinds served; empty = the suite target whose gpu_name the probe found
  std::string evaluator = "pipeline"; ///< or "fake" (tests; fake.gpu_name is the GPU it plays)
  fake_options fake;
  eval::pipeline_config pipeline;
  std::string id_prefix;              ///< default: the host name
  int64_t lease_ms = 30000;
  int max_sessions = 2;               ///< gpu: harnesses kept per device
  queue::store_options store;
  bool quiet = false;
};

/// Runs until stop is set; returns 0, or 2 for a configuration that cannot run (printed on stderr).
int run_workers(const worker_settings& settings, const suite& tasks, const std::atomic<bool>& stop);

/// The targets a GPU serves: `requested` (--targets) or, when empty, the one its name maps to
/// (suite::target_for_gpu). A requested target the GPU is known not to be (an H100 asked to serve
/// h200) is an error; a GPU the suite does not know may be told what it serves.
result<std::vector<std::string>> targets_for_gpu(const suite& tasks, const std::string& gpu_model,
                                                 const std::vector<std::string>& requested);

}  // namespace ptxbench::service
