#include "service/worker_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "build/toolchain.h"
#include "queue/open_store.h"
#include "service/environment.h"

namespace ptxbench::service {
namespace {

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

/// Opens a store, waiting out a database that is still starting (or restarting).
std::unique_ptr<queue::job_store> open_patiently(const worker_settings& s, const std::atomic<bool>& stop) {
  bool said = false;
  while (!stop) {
    auto opened = queue::open_job_store(s.queue, s.store);
    if (opened) return std::move(*opened);
    if (!said && !s.quiet) std::fprintf(stderr, "ptxbench worker: %s (retrying)\n", opened.err().message.c_str());
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return nullptr;
}

}  // namespace

result<std::vector<std::string>> targets_for_gpu(const suite& tasks, const std::string& gpu_model,
                                                 const std::vector<std::string>& requested) {
  auto own = tasks.target_for_gpu(gpu_model);
  if (requested.empty()) {
    if (!own) return make_error(own.err().message + "; pass --targets");
    return std::vector<std::string>{(*own)->name};
  }
  for (const auto& t : requested) {
    if (!tasks.find_target(t)) return make_error(fmt::format("--targets: unknown target '{}'", t));
    if (own && t != (*own)->name)
      return make_error(fmt::format("--targets {}: the GPU here is {} (target {}); it cannot serve {}",
                                    fmt::join(requested, ","), gpu_model, (*own)->name, t));
  }
  return requested;
}

int run_workers(const worker_settings& s, const suite& tasks, const std::atomic<bool>& stop) {
  const std::string prefix = s.id_prefix.empty() ? host_name() : s.id_prefix;
  std::mutex say_mutex;
  auto say = [&](const std::string& line) {
    if (s.quiet) return;
    std::lock_guard lock(say_mutex);
    std::fprintf(stderr, "%s\n", line.c_str());
  };

  struct slot {
    queue::worker_config config;
    queue::worker_callbacks callbacks;
    std::unique_ptr<gpu_job_runner> runner;
  };
  std::vector<slot> slots;
  if (s.role == queue::worker_role::cpu) {
    queue::run_environment env = s.evaluator == "fake" ? fake_cpu_environment() : queue::run_environment{};
    for (int i = 0; i < std::max(1, s.jobs); ++i) {
      slot sl;
      sl.callbacks = s.evaluator == "fake" ? fake_callbacks(tasks, s.fake) : pipeline_cpu_callbacks(tasks, s.pipeline);
      sl.config.id = fmt::format("{}/cpu{}", prefix, i);
      if (s.evaluator != "fake") {
        auto tc = build::find_toolchain(s.pipeline.cuda_root, s.pipeline.cache_dir);
        env = cpu_environment(tc ? tc->nvcc_version : std::string());
      }
      sl.config.info_json = ordered_json{{"device", "cpu"}, {"evaluator", s.evaluator}, {"environment", to_json(env)}}.dump();
      slots.push_back(std::move(sl));
    }
  } else {
    for (int device : s.devices) {
      slot sl;
      sl.config.id = fmt::format("{}/gpu{}", prefix, device);
      queue::run_environment env;
      if (s.evaluator == "fake") {
        sl.callbacks = fake_callbacks(tasks, s.fake);
        env = fake_gpu_environment(s.fake.gpu_name);
      } else {
        eval::pipeline_config config = s.pipeline;
        config.gpu.device = device;
        sl.runner = std::make_unique<gpu_job_runner>(tasks, config, s.max_sessions);
        auto probed = sl.runner->probe();
        if (!probed) {
          std::fprintf(stderr, "ptxbench worker: %s\n", probed.err().message.c_str());
          return 2;
        }
        env = *probed;
        sl.callbacks = sl.runner->callbacks();
      }
      auto served = targets_for_gpu(tasks, env.gpu_model, s.targets);
      if (!served) {
        std::fprintf(stderr, "ptxbench worker: %s\n", served.err().message.c_str());
        return 2;
      }
      sl.config.targets = *served;
      sl.config.info_json = ordered_json{{"device", fmt::format("cuda:{}", device)},
                                         {"evaluator", s.evaluator},
                                         {"environment", to_json(env)}}
                                .dump();
      say(fmt::format("ptxbench worker {}: {} serving {}", sl.config.id, env.gpu_model, fmt::join(sl.config.targets, ",")));
      slots.push_back(std::move(sl));
    }
  }
  for (auto& sl : slots) {
    sl.config.role = s.role;
    sl.config.host = host_name();
    sl.config.lease_ms = s.lease_ms;
    sl.config.idle_wait_ms = 1000;
    sl.callbacks.log = [say, id = sl.config.id](const std::string& line) { say(id + ": " + line); };
  }
  std::vector<std::thread> threads;
  for (auto& sl : slots)
    threads.emplace_back([&s, &stop, &sl, say] {
      auto store = open_patiently(s, stop);
      if (!store) return;
      auto summary = queue::run_worker(*store, sl.config, sl.callbacks, stop);
      if (!summary) say(fmt::format("{}: {}", sl.config.id, summary.err().message));
      else
        say(fmt::format("{}: stopped after {} leases ({} handed on, {} verdicts, {} infrastructure failures, {} given back)",
                        sl.config.id, summary->leased, summary->compiled, summary->completed, summary->infra_failures,
                        summary->released));
    });
  for (auto& t : threads) t.join();
  return 0;
}

}  // namespace ptxbench::service
