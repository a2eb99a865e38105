#include "queue/worker_loop.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/sha256.h"

namespace ptxbench::queue {
namespace {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// Extends a lease in the background while the work runs; sets `cancelled` when the lease is lost or
/// the worker is asked to stop.
class lease_keeper {
 public:
  lease_keeper(job_store& store, lease_ref lease, int64_t lease_ms, int64_t every_ms, const std::atomic<bool>& stop)
      : m_store(store), m_lease(std::move(lease)), m_lease_ms(lease_ms), m_every_ms(every_ms), m_stop(stop),
        m_thread([this] { loop(); }) {}
  ~lease_keeper() {
    {
      std::lock_guard lock(m_mutex);
      m_done = true;
    }
    m_wake.notify_all();
    m_thread.join();
  }
  lease_keeper(const lease_keeper&) = delete;
  lease_keeper& operator=(const lease_keeper&) = delete;

  [[nodiscard]] const std::atomic<bool>& cancelled() const { return m_cancelled; }
  [[nodiscard]] bool lost() const { return m_lost; }

 private:
  void loop() {
    auto next = clock::now() + milliseconds(m_every_ms);
    std::unique_lock lock(m_mutex);
    while (!m_done) {
      m_wake.wait_for(lock, milliseconds(std::min<int64_t>(m_every_ms, 50)), [&] { return m_done; });
      if (m_done) break;
      if (m_stop) m_cancelled = true;
      if (clock::now() < next) continue;
      lock.unlock();
      auto r = m_store.heartbeat(m_lease, m_lease_ms);  // an error: try again next beat
      lock.lock();
      next = clock::now() + milliseconds(m_every_ms);
      if (r && *r == commit_outcome::stale) {
        m_lost = true;
        m_cancelled = true;
        break;
      }
    }
  }

  job_store& m_store;
  lease_ref m_lease;
  int64_t m_lease_ms, m_every_ms;
  const std::atomic<bool>& m_stop;
  std::atomic<bool> m_cancelled{false}, m_lost{false};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_done = false;
  std::thread m_thread;
};

class worker {
 public:
  worker(job_store& store, const worker_config& config, const worker_callbacks& callbacks, const std::atomic<bool>& stop)
      : m_store(store), m_config(config), m_callbacks(callbacks), m_stop(stop) {}

  worker_summary run() {
    register_self();
    lease_request request{m_config.id, m_config.role, m_config.targets, m_config.lease_ms};
    int finished = 0;
    while (!m_stop && (m_config.max_jobs == 0 || finished < m_config.max_jobs)) {
      std::string health = m_callbacks.health ? m_callbacks.health() : "ok";
      if (health != "ok") {
        beat(health, "", true);
        pause(m_config.idle_wait_ms);
        continue;
      }
      auto leased = m_store.lease(request);
      if (!leased) {
        store_error("lease", leased.err());
        continue;
      }
      m_error_pause_ms = 0;
      if (!*leased) {
        beat("ok", "", false);
        if (auto w = m_store.wait_for_work(request, m_config.idle_wait_ms); !w) store_error("wait for work", w.err());
        continue;
      }
      ++m_summary.leased;
      beat("ok", (*leased)->id, true);
      if (process(**leased)) ++finished;
      beat("ok", "", true);
    }
    return m_summary;
  }

 private:
  /// Runs one leased job to a report; true when a verdict or an artifact was accepted.
  bool process(const job& j) {
    lease_ref lease = ref_of(j);
    int64_t every = m_config.heartbeat_ms > 0 ? m_config.heartbeat_ms : std::max<int64_t>(m_config.lease_ms / 3, 1);
    if (m_config.role == worker_role::cpu) {
      result<compile_outcome> out = make_error("not run");
      {
        lease_keeper keeper(m_store, lease, m_config.lease_ms, every, m_stop);
        out = guarded([&] { return m_callbacks.compile(j, keeper.cancelled()); });
        if (keeper.lost()) return note_stale(j, "the lease was lost while compiling");
      }
      if (!out) return give_back_or_fail(lease, out.err().message, retry_from::same_stage);
      if (out->artifact) {
        std::string sha = sha256_hex(*out->artifact);
        if (!retry_until_done("store artifact", [&]() -> result<commit_outcome> {
              if (auto s = m_store.put_artifact(sha, *out->artifact); !s) return s.err();
              return commit_outcome::accepted;
            }))
          return false;
        return counted(submit("finish compile", [&] { return m_store.finish_compile(lease, sha); }), m_summary.compiled);
      }
      return finish(lease, out->verdict_json, out->environment);
    }

    auto artifact = fetch_artifact(j);
    if (!artifact) return false;
    if (!*artifact) return false;  // reported as an infrastructure failure already
    result<run_outcome> out = make_error("not run");
    {
      lease_keeper keeper(m_store, lease, m_config.lease_ms, every, m_stop);
      out = guarded([&] { return m_callbacks.run(j, **artifact, keeper.cancelled()); });
      if (keeper.lost()) return note_stale(j, "the lease was lost while running");
    }
    if (!out) return give_back_or_fail(lease, out.err().message, retry_from::same_stage);
    if (out->release_reason) {
      say(fmt::format("job {}: given back: {}", lease.job_id, *out->release_reason));
      counted(submit("release", [&] { return m_store.release(lease, *out->release_reason); }), m_summary.released);
      return false;
    }
    return finish(lease, out->verdict_json, out->environment);
  }

  /// The artifact, checked against its sha256; nullopt after sending the job back to be rebuilt;
  /// an error when the store could not be read (the lease will expire and the job be retried).
  result<std::optional<std::string>> fetch_artifact(const job& j) {
    for (int attempt = 0;; ++attempt) {
      auto bytes = m_store.get_artifact(j.artifact_sha256);
      if (bytes) {
        std::string problem;
        if (!*bytes) problem = "artifact " + j.artifact_sha256 + " is missing from the store";
        else if (sha256_hex(**bytes) != j.artifact_sha256) problem = "artifact " + j.artifact_sha256 + " is corrupt";
        if (problem.empty()) return bytes;
        give_back_or_fail(ref_of(j), problem, retry_from::build);
        return std::optional<std::string>{};
      }
      store_error("get artifact", bytes.err());
      if (m_stop || attempt > 20) return bytes.err();
    }
  }

  bool finish(const lease_ref& lease, const std::string& verdict, const std::optional<run_environment>& env) {
    auto parsed = nlohmann::json::parse(verdict, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object())
      return give_back_or_fail(lease, "the evaluator returned a verdict that is not a JSON object", retry_from::same_stage);
    return counted(submit("complete", [&] { return m_store.complete(lease, verdict, env); }), m_summary.completed);
  }

  bool give_back_or_fail(const lease_ref& lease, const std::string& why, retry_from from) {
    if (m_stop) {
      counted(submit("release", [&] { return m_store.release(lease, "worker stopping: " + why); }), m_summary.released);
      return false;
    }
    say(fmt::format("job {}: infrastructure failure: {}", lease.job_id, why));
    counted(submit("infrastructure failure", [&] { return m_store.fail_infra(lease, why, from); }),
            m_summary.infra_failures);
    return false;
  }

  /// Calls an evaluator callback; an exception becomes an infrastructure failure, never a crash.
  template <typename F>
  static auto guarded(F&& call) -> decltype(call()) {
    using out = decltype(call());
    try {
      return call();
    } catch (const std::exception& e) {
      return out(make_error(std::string("the evaluator threw: ") + e.what()));
    } catch (...) {
      return out(make_error("the evaluator threw a non-standard exception"));
    }
  }

  /// Repeats a report through store errors; the store's reports are idempotent. Gives up after
  /// twice the lease time: by then the lease has expired and the job will run again elsewhere.
  std::optional<commit_outcome> submit(const char* what, const std::function<result<commit_outcome>()>& call) {
    auto give_up = clock::now() + milliseconds(2 * m_config.lease_ms + 1000);
    for (;;) {
      auto r = call();
      if (r) {
        m_error_pause_ms = 0;
        return *r;
      }
      store_error(what, r.err());
      if (clock::now() > give_up) return std::nullopt;
    }
  }
  bool retry_until_done(const char* what, const std::function<result<commit_outcome>()>& call) {
    return submit(what, call).has_value();
  }

  bool counted(std::optional<commit_outcome> outcome, int& counter) {
    if (!outcome) return false;
    if (*outcome == commit_outcome::stale) {
      ++m_summary.stale_reports;
      say("a report was discarded: the lease had been given to another worker");
      return false;
    }
    ++counter;
    return true;
  }

  bool note_stale(const job& j, const std::string& why) {
    ++m_summary.stale_reports;
    say(fmt::format("job {}: {}", j.id, why));
    return false;
  }

  void register_self() {
    worker_info info{m_config.id, m_config.role, m_config.host, static_cast<int64_t>(::getpid()),
                     m_config.targets, "ok", "", 0, 0, m_config.info_json};
    while (!m_stop) {
      auto r = m_store.register_worker(info);
      if (r) return;
      store_error("register worker", r.err());
    }
  }

  /// Updates the registry: always when `force`, otherwise at most once a second.
  void beat(const std::string& health, const std::string& current, bool force) {
    auto now = clock::now();
    if (!force && now - m_last_beat < std::chrono::seconds(1)) return;
    m_last_beat = now;
    if (auto r = m_store.worker_heartbeat(m_config.id, health, current); !r) ++m_summary.store_errors;
  }

  void store_error(const char* what, const error& e) {
    ++m_summary.store_errors;
    say(fmt::format("{}: {}", what, e.message));
    m_error_pause_ms = std::min<int64_t>(std::max<int64_t>(m_error_pause_ms * 2, 50), m_config.max_error_pause_ms);
    pause(m_error_pause_ms);
  }

  void pause(int64_t ms) {
    for (auto until = clock::now() + milliseconds(ms); !m_stop && clock::now() < until;)
      std::this_thread::sleep_for(milliseconds(std::min<int64_t>(ms, 20)));
  }

  void say(const std::string& line) {
    if (m_callbacks.log) m_callbacks.log(line);
  }

  job_store& m_store;
  const worker_config& m_config;
  const worker_callbacks& m_callbacks;
  const std::atomic<bool>& m_stop;
  worker_summary m_summary;
  int64_t m_error_pause_ms = 0;
  clock::time_point m_last_beat{};
};

}  // namespace

result<worker_summary> run_worker(job_store& store, const worker_config& config, const worker_callbacks& callbacks,
                                  const std::atomic<bool>& stop) {
  if (config.id.empty()) return make_error("worker: an id is required");
  if (config.role == worker_role::cpu && !callbacks.compile) return make_error("worker: a cpu worker needs compile");
  if (config.role == worker_role::gpu && !callbacks.run) return make_error("worker: a gpu worker needs run");
  if (config.role == worker_role::gpu && config.targets.empty())
    return make_error("worker: a gpu worker needs at least one target");
  if (config.lease_ms <= 0) return make_error("worker: the lease time must be positive");
  return worker(store, config, callbacks, stop).run();
}

}  // namespace ptxbench::queue
