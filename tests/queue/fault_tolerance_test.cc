// The CI acceptance for the queue layer, on both backends: 200 jobs from 4 concurrent
// clients, CPU and GPU worker processes running the real worker loop with the fake evaluator,
// workers SIGKILLed, paused past their lease (and resumed: late reports) and restarted at random,
// and for PostgreSQL the server SIGKILLed and restarted. Every job must finish exactly once (one
// accepted completion in its history) with the verdict of a run without faults.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "fake_work.h"
#include "queue_backend.h"
#include "queue/open_store.h"
#include "worker_fleet.h"

namespace ptxbench::testing {
namespace {

using namespace queue;
using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int total_jobs = 200, clients = 4;

/// One client: submits its share (retrying through outages), then long-polls each job to the end.
void run_client(const std::string& where, int c, std::vector<std::string>& ids, std::atomic<bool>& give_up) {
  std::unique_ptr<job_store> store;
  while (!store && !give_up) {
    auto s = open_job_store(where, test_store_options());
    if (s) store = std::move(*s);
    else std::this_thread::sleep_for(milliseconds(50));
  }
  for (int i = c; i < total_jobs && !give_up; i += clients) {
    for (;;) {
      auto r = store->enqueue({fake_spec(i), fmt::format("client-{}/job-{}", c, i), true});
      if (r) {
        ids.push_back(r->queued.id);
        break;
      }
      if (give_up) return;
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  for (const auto& id : ids) {
    int64_t version = -1;
    while (!give_up) {
      auto j = store->wait_for_change(id, version, 500);
      if (!j || !*j) {
        std::this_thread::sleep_for(milliseconds(20));
        continue;
      }
      if (is_terminal((*j)->state)) break;
      version = (*j)->version;
    }
  }
}

/// Runs the clients to the end while `chaos` is called every few hundred ms; returns the job ids.
template <typename Chaos>
std::vector<std::string> run_clients(const std::string& where, Chaos&& chaos, int deadline_s) {
  std::vector<std::vector<std::string>> ids(clients);
  std::atomic<bool> give_up{false};
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      run_client(where, c, ids[static_cast<std::size_t>(c)], give_up);
      ++finished;
    });
  auto deadline = clock_type::now() + std::chrono::seconds(deadline_s);
  while (finished < clients && clock_type::now() < deadline) chaos();
  give_up = true;
  for (auto& t : threads) t.join();
  std::vector<std::string> all;
  for (auto& v : ids) all.insert(all.end(), v.begin(), v.end());
  return all;
}

/// The verdict of every job when nothing goes wrong: in-process workers, no kills.
std::map<std::string, std::string> no_fault_verdicts(const std::string& where) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      auto store = open_job_store(where, test_store_options());
      if (!store) return;
      worker_config wc;
      wc.id = fmt::format("clean-{}", w);
      wc.role = w < 2 ? worker_role::cpu : worker_role::gpu;
      wc.targets = {"h200"};
      wc.lease_ms = 2000;
      wc.idle_wait_ms = 100;
      (void)run_worker(**store, wc, fake_callbacks({}), stop);
    });
  auto ids = run_clients(where, [] { std::this_thread::sleep_for(milliseconds(50)); }, 60);
  stop = true;
  for (auto& t : workers) t.join();
  std::map<std::string, std::string> out;
  auto store = open_job_store(where, test_store_options());
  for (const auto& id : ids)
    if (auto j = (*store)->get(id); j && *j && (*j)->state == job_state::done) out[(*j)->content_key] = (*j)->verdict_json;
  return out;
}

using FaultTolerance = QueueBackendTest;

TEST_P(FaultTolerance, TwoHundredJobsFinishExactlyOnceThroughKilledWorkersAndServer) {
  const bool postgres = GetParam() == "postgresql";
  std::string clean_where = postgres ? *m_server->create_database(fmt::format("clean{}", ::getpid()))
                                     : (m_dir / "clean").string() + "/";
  auto expected = no_fault_verdicts(clean_where);
  ASSERT_EQ(expected.size(), static_cast<std::size_t>(total_jobs)) << "the no-fault run must finish every job";

  fleet_options fo;
  fo.queue = m_where;
  fo.log_dir = m_dir;
  worker_fleet fleet(fo);
  fleet.add(worker_role::cpu, 2);
  fleet.add(worker_role::gpu, 3);

  std::mt19937 rng(20240611);
  int worker_kills = 0, pauses = 0, server_kills = 0;
  auto next_server_kill = clock_type::now() + milliseconds(700);
  std::vector<std::pair<std::size_t, clock_type::time_point>> paused;
  auto chaos = [&] {
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(120, 300)(rng)));
    for (auto it = paused.begin(); it != paused.end();) {  // a worker presumed dead comes back
      if (clock_type::now() < it->second) { ++it; continue; }
      fleet.resume(it->first);
      it = paused.erase(it);
    }
    std::size_t slot = std::uniform_int_distribution<std::size_t>(0, fleet.size() - 1)(rng);
    bool is_paused = std::any_of(paused.begin(), paused.end(), [&](auto& p) { return p.first == slot; });
    if (!is_paused) {
      if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
        fleet.pause(slot);  // past its lease: the job goes to another worker, its late report is stale
        paused.emplace_back(slot, clock_type::now() + milliseconds(3 * fo.lease_ms));
        ++pauses;
      } else {
        fleet.kill(slot);
        fleet.restart(slot);
        ++worker_kills;
      }
    }
    if (postgres && clock_type::now() >= next_server_kill) {
      m_server->kill_hard();
      std::this_thread::sleep_for(milliseconds(200));
      EXPECT_TRUE(m_server->restart());
      ++server_kills;
      next_server_kill = clock_type::now() + milliseconds(1200);
    }
  };
  auto t0 = clock_type::now();
  auto ids = run_clients(m_where, chaos, 90);
  double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  for (auto& p : paused) fleet.resume(p.first);
  fleet.stop_all();

  ASSERT_EQ(ids.size(), static_cast<std::size_t>(total_jobs));
  EXPECT_GE(worker_kills, 5);
  if (postgres) {
    EXPECT_GE(server_kills, 2);
  }
  auto store = open(test_store_options());
  ASSERT_TRUE(store);
  std::map<std::string, int> totals;
  std::set<std::string> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), ids.size()) << "two submissions got the same job";
  for (const auto& id : ids) {
    auto j = store->get(id);
    ASSERT_TRUE(j && *j) << id;
    EXPECT_EQ((*j)->state, job_state::done) << id << " failed: " << (*j)->error;
    EXPECT_EQ((*j)->verdict_json, expected[(*j)->content_key]) << "job " << id << " has a different verdict";
    auto history = store->history(id);
    ASSERT_TRUE(history);
    int completed = 0;
    for (const auto& e : *history) {
      completed += e.event == "completed";
      ++totals[e.event];
    }
    EXPECT_EQ(completed, 1) << "job " << id << " was completed " << completed << " times";
  }
  EXPECT_GT(totals["infra_failure"], 0) << "the injected infrastructure failures were retried";
  std::printf("[ fault run ] %s: %d jobs in %.1f s; %d worker kills, %d pauses past the lease, %d server kills; "
              "events: %d leased, %d lease_expired, %d infra_failure, %d stale reports\n",
              GetParam().c_str(), total_jobs, seconds, worker_kills, pauses, server_kills, totals["leased"],
              totals["lease_expired"], totals["infra_failure"],
              totals["stale_completed"] + totals["stale_compiled"] + totals["stale_heartbeat"] +
                  totals["stale_infra_failure"] + totals["stale_released"]);
}

TEST_P(FaultTolerance, ACandidateThatKillsEveryWorkerBecomesAPoisonPill) {
  fleet_options fo;
  fo.queue = m_where;
  fo.log_dir = m_dir;
  fo.lease_ms = 300;
  fo.gpu_ms = 5;
  fo.max_lost_leases = 3;
  fo.extra_args = {"--allow-kill-self", "--no-infra"};
  worker_fleet fleet(fo);
  auto store = open();
  ASSERT_TRUE(store);
  auto pill = store->enqueue({fake_spec(0, "// FAKE_KILL_WORKER"), "", true});
  ASSERT_TRUE(pill);
  std::vector<std::string> good;
  for (int i = 1; i <= 20; ++i) good.push_back(store->enqueue({fake_spec(i), "", true})->queued.id);
  fleet.add(worker_role::cpu, 1);
  fleet.add(worker_role::gpu, 2);
  int deaths = 0;
  auto deadline = clock_type::now() + std::chrono::seconds(60);
  for (;;) {
    for (std::size_t slot : fleet.reap_exited()) {  // a supervisor (systemd) restarts dead workers
      ++deaths;
      fleet.restart(slot);
    }
    auto j = store->get(pill->queued.id);
    if ((j && *j && is_terminal((*j)->state)) || clock_type::now() > deadline) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  for (const auto& id : good) {
    auto j = store->wait_for_change(id, -1, 0);
    for (int i = 0; i < 500 && j && *j && !is_terminal((*j)->state); ++i) j = store->wait_for_change(id, (*j)->version, 100);
    ASSERT_TRUE(j && *j);
    EXPECT_EQ((*j)->state, job_state::done) << "an innocent job suffered: " << (*j)->error;
  }
  // A worker that leased the pill and was stalled past its lease (a loaded machine) dies of it only
  // after the pill was failed: counted here, while a fourth hand-out would still show as a fourth death.
  deaths += static_cast<int>(fleet.reap_exited().size());
  fleet.stop_all();
  auto j = store->get(pill->queued.id);
  ASSERT_TRUE(j && *j);
  EXPECT_EQ((*j)->state, job_state::failed);
  EXPECT_EQ((*j)->failure, failure_kind::poison_pill);
  EXPECT_EQ((*j)->lost_leases, 3);
  EXPECT_EQ(deaths, 3) << "three workers died, then the pill was never handed out again";
  EXPECT_TRUE((*j)->verdict_json.empty()) << "the queue writes no verdict; the service makes the runtime error";
  EXPECT_NE((*j)->error.find("stopped responding 3 times"), std::string::npos) << (*j)->error;
}

INSTANTIATE_TEST_SUITE_P(Queue, FaultTolerance, ::testing::Values("sqlite", "postgresql"), backend_name);

}  // namespace
}  // namespace ptxbench::testing
