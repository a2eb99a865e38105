// The CI acceptance for the service, on both backends: `ptxbench serve` and CPU and GPU
// `ptxbench worker` processes (fake evaluator) over one queue, 200 distinct jobs (plus resubmissions
// of some) from 4 concurrent HTTP clients, while workers are SIGKILLed, paused past their lease and
// restarted and the server itself is SIGKILLed and restarted on the same port. Every job must finish
// exactly once (one accepted completion, or one cache hit, in its history) with the verdict of a
// run without faults, and every client must get it over HTTP.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "queue_backend.h"
#include "service/job_runner.h"
#include "service/service_client.h"
#include "service/submission.h"
#include "queue/content_key.h"
#include "service_fixture.h"
#include "service_processes.h"

namespace ptxbench::testing {
namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int k_jobs = 200, k_clients = 4, k_resubmitted = 8;

struct planned {
  std::string endpoint;
  ordered_json body;
};

/// Job i: distinct code whose fake-evaluator markers give every kind of outcome, some injected
/// infrastructure failures, some sanitize jobs and some CPU-only checks.
planned plan_job(int i) {
  std::string code = fmt::format("// candidate {}\n", i);
  if (i % 10 == 3) code += "// FAKE_WRONG\n";
  else if (i % 10 == 7) code += "#error does not build\n";
  else if (i % 17 == 5) code += "cublasLtMatmul(handle);\n";
  else code += fmt::format("// {} FAKE_SPEEDUP={:.2f}\n", i % 3 ? "wgmma" : "mma.sync", 0.5 + (i % 13) * 0.1);
  if (i % 6 == 1) code += "// FAKE_FLAKY_GPU\n";
  if (i % 8 == 2) code += "// FAKE_FLAKY_BUILD\n";
  planned p{i % 20 == 9 ? "/sanitize" : "/evaluate", {{"solution", gemm_solution(code, fmt::format("job{}", i))}}};
  if (i % 25 == 4) p.body["check_only"] = true;
  return p;
}

/// The verdict of a run without faults: the fake's two halves, run directly, nothing injected.
std::map<std::string, std::string> no_fault_verdicts() {
  std::map<std::string, std::string> out;
  auto cb = service::fake_callbacks(test_suite(), {.inject_faults = false});
  std::atomic<bool> no{false};
  for (int i = 0; i < k_jobs; ++i) {
    auto p = plan_job(i);
    auto kind = p.endpoint == "/sanitize" ? queue::job_kind::sanitize : queue::job_kind::evaluate;
    auto sub = service::parse_submission(p.body.dump(), kind, test_suite(), "h200");
    EXPECT_TRUE(sub) << sub.refusal.one_line();
    queue::job j;
    j.id = fmt::format("clean{}", i);
    j.spec = sub->spec;
    j.content_key = *queue::content_key(j.spec);
    auto built = cb.compile(j, no);
    EXPECT_TRUE(built) << built.err().message;
    if (!built->artifact) {
      out[j.content_key] = built->verdict_json;
      continue;
    }
    auto ran = cb.run(j, *built->artifact, no);
    EXPECT_TRUE(ran) << ran.err().message;
    out[j.content_key] = ran->verdict_json;
  }
  return out;
}

struct client_result {
  std::string task_id;
  ordered_json response;  ///< the finished TaskResponse as the client got it
};

/// One client: submits its share (request ids make a retried POST the same job), then long-polls
/// each task to the end, riding out server restarts.
void run_client(const std::string& url, int c, std::vector<client_result>& results, std::atomic<bool>& give_up) {
  service::client_settings cs;
  cs.url = url;
  cs.retry_for_s = 60;
  cs.cancel = &give_up;
  auto client = service::service_client::create(cs).value();
  std::vector<int> mine;
  for (int i = c; i < k_jobs; i += k_clients) mine.push_back(i);
  for (int k = 0; k < k_resubmitted / k_clients; ++k) mine.push_back((c + 1) % k_clients + k_clients * k);  // another client's job
  for (int i : mine) {
    auto p = plan_job(i);
    p.body["request_id"] = fmt::format("client{}-job{}-{}", c, i, results.size());
    auto r = client->post(p.endpoint, p.body, 30);
    if (!r || r->status != 200) {
      ADD_FAILURE() << "submission " << i << ": " << (r ? r->body.dump() : r.err().message);
      return;
    }
    results.push_back({r->body["task_id"].get<std::string>(), nullptr});
  }
  for (auto& res : results) {
    while (!give_up) {
      auto r = client->get("/tasks/" + res.task_id + "?timeout=5", 30);
      if (!r) break;
      ASSERT_EQ(r->status, 200) << r->body.dump();
      std::string st = r->body["status"];
      if (st == "completed" || st == "failed") {
        res.response = r->body;
        break;
      }
    }
  }
}

using ServiceChaos = QueueBackendTest;

TEST_P(ServiceChaos, TwoHundredJobsThroughKilledWorkersAndAKilledServerFinishExactlyOnce) {
  auto expected = no_fault_verdicts();
  ASSERT_EQ(expected.size(), static_cast<std::size_t>(k_jobs));

  process_options po;
  po.queue = m_where;
  po.dir = m_dir;
  po.timing = {"--lease-ms", "800", "--backoff-ms", "50", "--max-lost-leases", "50", "--reap-ms", "100", "--poll-ms", "20"};
  po.worker_args = {"--fake-delay-ms", "50", "--fake-cpu-delay-ms", "50"};  // each half takes a while: kills land mid-job
  service_processes procs(po);
  procs.start_server();
  ASSERT_TRUE(procs.wait_for_server()) << "serve did not come up";
  for (int i = 0; i < 2; ++i) procs.add_worker("cpu");
  for (int i = 0; i < 3; ++i) procs.add_worker("gpu");

  std::vector<std::vector<client_result>> results(k_clients);
  std::atomic<bool> give_up{false};
  std::atomic<int> finished{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < k_clients; ++c)
    clients.emplace_back([&, c] {
      run_client(procs.url(), c, results[static_cast<std::size_t>(c)], give_up);
      ++finished;
    });

  std::mt19937 rng(20261201);
  int worker_kills = 0, pauses = 0, server_kills = 0;
  auto next_server_kill = clock_type::now() + milliseconds(600);
  std::vector<std::pair<std::size_t, clock_type::time_point>> paused;
  auto deadline = clock_type::now() + std::chrono::seconds(150);
  auto t0 = clock_type::now();
  while (finished < k_clients && clock_type::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(120, 300)(rng)));
    for (auto it = paused.begin(); it != paused.end();) {
      if (clock_type::now() < it->second) {
        ++it;
        continue;
      }
      procs.resume_worker(it->first);  // presumed dead, comes back: its late reports are stale
      it = paused.erase(it);
    }
    std::size_t slot = std::uniform_int_distribution<std::size_t>(0, procs.workers() - 1)(rng);
    bool is_paused = std::any_of(paused.begin(), paused.end(), [&](auto& p) { return p.first == slot; });
    if (!is_paused) {
      if (std::uniform_int_distribution<int>(0, 5)(rng) == 0) {
        procs.pause_worker(slot);
        paused.emplace_back(slot, clock_type::now() + milliseconds(2000));
        ++pauses;
      } else {
        procs.kill_worker(slot);
        procs.start_worker(slot);
        ++worker_kills;
      }
    }
    if (clock_type::now() >= next_server_kill) {
      procs.kill_server();
      ++server_kills;
      std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(100, 400)(rng)));
      procs.start_server();
      next_server_kill = clock_type::now() + milliseconds(std::uniform_int_distribution<int>(700, 1300)(rng));
    }
  }
  double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  give_up = true;
  for (auto& t : clients) t.join();
  for (auto& p : paused) procs.resume_worker(p.first);
  procs.stop_all();

  EXPECT_GE(worker_kills, 5);
  EXPECT_GE(server_kills, 2);
  auto store = open();
  ASSERT_TRUE(store);
  std::set<std::string> distinct;
  int responses = 0, cache_hits = 0, joined = 0;
  std::map<std::string, int> events;
  for (const auto& per_client : results)
    for (const auto& r : per_client) {
      ++responses;
      ASSERT_TRUE(r.response.is_object()) << "task " << r.task_id << " never finished for its client";
      EXPECT_EQ(r.response["status"], "completed") << r.response.dump();
      if (!distinct.insert(r.task_id).second) {
        ++joined;
        continue;
      }
      auto j = store->get(r.task_id);
      ASSERT_TRUE(j && *j) << r.task_id;
      EXPECT_EQ((*j)->state, queue::job_state::done) << (*j)->error;
      EXPECT_EQ((*j)->verdict_json, expected[(*j)->content_key]) << "task " << r.task_id << " has another verdict";
      EXPECT_EQ(r.response["ptxbench"]["verdict"].dump(), ordered_json::parse(expected[(*j)->content_key]).dump())
          << "the client got that verdict over HTTP";
      auto h = store->history(r.task_id);
      ASSERT_TRUE(h);
      int completed = 0, hits = 0;
      for (const auto& e : *h) {
        completed += e.event == "completed";
        hits += e.event == "cache_hit";
        ++events[e.event];
      }
      EXPECT_EQ(completed + hits, 1) << "task " << r.task_id << ": " << completed << " completions, " << hits << " cache hits";
      cache_hits += hits;
    }
  EXPECT_EQ(responses, k_jobs + k_resubmitted);
  EXPECT_EQ(static_cast<int>(distinct.size()) + joined, k_jobs + k_resubmitted);
  EXPECT_GT(events["infra_failure"], 0) << "the injected infrastructure failures were retried";
  std::printf("[ service chaos ] %s: %d submissions in %.1f s; %d worker kills, %d pauses, %d server kills; "
              "%d resubmissions joined a running job, %d came from the cache; events: %d leased, %d lease_expired, "
              "%d infra_failure, %d stale_completed\n",
              GetParam().c_str(), responses, seconds, worker_kills, pauses, server_kills, joined, cache_hits,
              events["leased"], events["lease_expired"], events["infra_failure"], events["stale_completed"]);
}

INSTANTIATE_TEST_SUITE_P(Serve, ServiceChaos, ::testing::Values("sqlite", "postgresql"), backend_name);

}  // namespace
}  // namespace ptxbench::testing
