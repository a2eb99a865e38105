// `ptxbench serve` with its own workers, two GPU workers on one (fake) GPU: the GPU worker that holds
// a job is found through GET /health (its pid) and SIGKILLed mid-job, as bench/service/service_gpu.sh does
// on a real GPU. The job must finish exactly once, after one lost lease, on the sibling worker (the
// killed one is restarted only after --worker-restart-ms), with the verdict a fault-free run gives.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "child_process.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "service/local_workers.h"
#include "service_processes.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace {

namespace fs = std::filesystem;

ordered_json get_json(int port, const std::string& path, int read_timeout_s = 5) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(read_timeout_s + 30, 0);
  auto r = c.Get(path);
  if (!r || r->status != 200) return nullptr;
  return ordered_json::parse(r->body, nullptr, false);
}

std::string submit_kernel(int port, const std::string& code) {
  ordered_json sol = {{"name", "k"},
                      {"definition", "gemm_n7168_k5120"},
                      {"author", "test"},
                      {"spec", {{"language", "cuda"}, {"target_hardware", {"H200"}}, {"entry_point", "kernel.cu::run"}}},
                      {"sources", {{{"path", "kernel.cu"}, {"content", code}}}}};
  httplib::Client c("127.0.0.1", port);
  auto r = c.Post("/evaluate", ordered_json{{"solution", sol}, {"cache", "bypass"}}.dump(), "application/json");
  if (!r || r->status != 200) return "";
  return ordered_json::parse(r->body)["task_id"].get<std::string>();
}

// Issue 27, new-user probe 10: the restart delay doubles only while a worker keeps dying at once (a
// bad configuration); one that ran and was then killed comes back after the first delay, every time.
TEST(LocalWorkers, TheRestartDelayDoublesOnlyForWorkersThatDieAtOnce) {
  using std::chrono::milliseconds;
  EXPECT_EQ(service::restart_delay_ms(0, 300, milliseconds(100)), 300) << "the first exit";
  EXPECT_EQ(service::restart_delay_ms(300, 300, milliseconds(100)), 600);
  EXPECT_EQ(service::restart_delay_ms(600, 300, milliseconds(100)), 1200);
  EXPECT_EQ(service::restart_delay_ms(19200, 300, milliseconds(100)), 30000) << "capped at 30 s";
  EXPECT_EQ(service::restart_delay_ms(30000, 300, milliseconds(100)), 30000);
  // Ran for seconds (killed mid-job, say): the first delay again, however long the last one was.
  EXPECT_EQ(service::restart_delay_ms(300, 300, milliseconds(7000)), 300);
  EXPECT_EQ(service::restart_delay_ms(2400, 300, service::k_dies_at_once), 300);
  EXPECT_EQ(service::restart_delay_ms(0, 0, milliseconds(10)), 0) << "--worker-restart-ms 0: at once, every time";
}

TEST(LocalWorkers, AGpuWorkerKilledMidJobLeavesItsJobToItsSiblingOnTheSameGpu) {
  fs::path dir = make_temp_dir("local-workers");
  const int port = free_port();
  std::vector<std::string> serve = {(bin_dir() / "ptxbench").string(), "--root", repo_root().string(), "--cache-dir",
                                    (dir / "cache").string(), "serve", "--listen", fmt::format("127.0.0.1:{}", port),
                                    "--service-dir", (dir / "service").string(), "--evaluator", "fake", "--fake-gpus", "1",
                                    "--gpu-workers-per-device", "2", "--worker-restart-ms", "20000", "--fake-delay-ms",
                                    "1500", "--lease-ms", "600", "--reap-ms", "100", "--backoff-ms", "50"};
  pid_t server = spawn_process(serve, dir / "serve.log");

  // Both GPU workers register, with their own ids and processes.
  ordered_json health;
  std::map<std::string, int64_t> gpu_pids;
  for (int i = 0; i < 300 && gpu_pids.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    health = get_json(port, "/health");
    gpu_pids.clear();
    if (health.is_object())
      for (const auto& w : health["workers"])
        if (w["role"] == "gpu" && w["healthy"].get<bool>()) gpu_pids[w["id"].get<std::string>()] = w["pid"].get<int64_t>();
  }
  ASSERT_EQ(gpu_pids.size(), 2u) << health.dump();
  EXPECT_TRUE(gpu_pids.count("local/gpu0") && gpu_pids.count("local1/gpu0")) << health.dump();
  EXPECT_NE(gpu_pids["local/gpu0"], gpu_pids["local1/gpu0"]);
  for (const auto& [id, pid] : gpu_pids) EXPECT_GT(pid, 0) << id;

  const std::string id = submit_kernel(port, "// wgmma FAKE_SPEEDUP=1.25\n");
  ASSERT_FALSE(id.empty());
  // The GPU worker holding the job, while the job runs.
  std::string holder;
  int64_t holder_pid = 0;
  for (int i = 0; i < 400 && holder.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto h = get_json(port, "/health");
    auto t = get_json(port, "/tasks/" + id + "?timeout=0");
    if (!h.is_object() || !t.is_object() || t["ptxbench"]["state"] != "running") continue;
    for (const auto& w : h["workers"])
      if (w["role"] == "gpu" && w["current_job"] == id) {
        holder = w["id"].get<std::string>();
        holder_pid = w["pid"].get<int64_t>();
      }
  }
  ASSERT_FALSE(holder.empty()) << "no GPU worker was seen holding the running job";
  ASSERT_EQ(::kill(static_cast<pid_t>(holder_pid), SIGKILL), 0);

  auto t = get_json(port, "/tasks/" + id + "?timeout=30", 30);
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t["status"], "completed") << t.dump();
  EXPECT_EQ(t["ptxbench"]["state"], "done");
  EXPECT_EQ(t["ptxbench"]["lost_leases"], 1) << "the kill cost exactly one lease";
  EXPECT_EQ(t["ptxbench"]["attempts"], 3) << "leases: the CPU build, the killed GPU run, the sibling's";
  const std::string sibling = holder == "local/gpu0" ? "local1/gpu0" : "local/gpu0";
  EXPECT_EQ(t["ptxbench"]["workers"]["completed_by"], sibling) << "finished by the other worker on the GPU";
  ASSERT_TRUE(t.contains("traces")) << t.dump();
  EXPECT_EQ(t["traces"][0]["evaluation"]["status"], "PASSED");
  EXPECT_DOUBLE_EQ(t["traces"][0]["evaluation"]["performance"]["speedup_factor"].get<double>(), 1.25);
  // The killed worker is gone and has not been restarted yet (the restart waits 20 s).
  auto h = get_json(port, "/health");
  for (const auto& w : h["workers"]) {
    if (w["id"] == holder) {
      EXPECT_EQ(w["pid"].get<int64_t>(), holder_pid) << "restarted before --worker-restart-ms";
    }
  }

  kill_and_reap(server, SIGTERM);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::testing

namespace ptxbench::testing {
namespace {

// A candidate that takes down every GPU worker that runs it (the fake evaluator's FAKE_KILL_WORKER:
// the worker SIGKILLs itself mid-job) through `ptxbench serve` and `ptxbench worker` processes, the
// dead workers restarted as a supervisor would: after --max-lost-leases (3) workers it is failed as a
// poison pill — upstream's client sees a completed task whose trace is the candidate's RUNTIME_ERROR
// saying so, /metrics counts it — and it is never leased again, while an honest job submitted beside
// it finishes.
TEST(PoisonPill, ACandidateThatKillsItsWorkersIsFailedAfterThreeAndNotRetriedForever) {
  fs::path dir = make_temp_dir("poison-pill");
  process_options o;
  o.queue = (dir / "queue").string() + "/";
  o.dir = dir;
  o.timing = {"--lease-ms", "500", "--reap-ms", "100", "--backoff-ms", "50", "--max-lost-leases", "3"};
  o.worker_args = {"--allow-kill-self", "--fake-delay-ms", "100"};
  service_processes p(o);
  p.start_server();
  ASSERT_TRUE(p.wait_for_server());
  p.add_worker("cpu");
  std::size_t g0 = p.add_worker("gpu"), g1 = p.add_worker("gpu");

  const std::string pill = submit_kernel(p.port(), "// FAKE_KILL_WORKER\n");
  const std::string honest = submit_kernel(p.port(), "// wgmma FAKE_SPEEDUP=1.5\n");
  ASSERT_FALSE(pill.empty());
  ASSERT_FALSE(honest.empty());
  int deaths = 0;
  ordered_json t;
  for (int i = 0; i < 600; ++i) {  // up to 30 s
    for (std::size_t g : {g0, g1}) deaths += p.restart_if_exited(g) ? 1 : 0;
    t = get_json(p.port(), "/tasks/" + pill + "?timeout=0");
    if (t.is_object() && (t["ptxbench"]["state"] == "failed" || t["ptxbench"]["state"] == "done")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t["ptxbench"]["state"], "failed") << t.dump();
  EXPECT_EQ(t["ptxbench"]["failure"], "poison_pill");
  EXPECT_EQ(t["ptxbench"]["lost_leases"], 3);
  EXPECT_EQ(t["status"], "completed") << "a poison pill is the candidate's failure, not the service's";
  ASSERT_TRUE(t.contains("traces")) << t.dump();
  EXPECT_EQ(t["traces"][0]["evaluation"]["status"], "RUNTIME_ERROR");
  EXPECT_FALSE(t["traces"][0]["evaluation"]["log"].get<std::string>().empty());

  auto h = get_json(p.port(), "/tasks/" + honest + "?timeout=20", 20);
  ASSERT_TRUE(h.is_object());
  EXPECT_EQ(h["status"], "completed");
  EXPECT_EQ(h["traces"][0]["evaluation"]["status"], "PASSED");

  // Never leased again: no further worker dies in the next second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  for (std::size_t g : {g0, g1}) deaths += p.restart_if_exited(g) ? 1 : 0;
  EXPECT_EQ(deaths, 3) << "exactly the workers the limit allows";
  httplib::Client c("127.0.0.1", p.port());
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("ptxbench_jobs_finished_total{kind=\"evaluate\",result=\"poison_pill\"} 1"), std::string::npos)
      << m->body;
  p.stop_all();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::testing
