#pragma once
// The job_store on top of a sql_connection: every operation is one short transaction whose
// decisions come from service/transitions.h. The two backends differ only in their connection
// (locking clause, clock, notifications) and their change feed, so they pass the same tests.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "queue/change_feed.h"
#include "queue/job_store.h"
#include "queue/sql_connection.h"

namespace ptxbench::queue {

class sql_job_store final : public job_store {
 public:
  /// `listener` (may be null) feeds `feed` from other processes; the store bumps it after its own commits.
  sql_job_store(std::unique_ptr<sql_connection> conn, std::unique_ptr<change_feed> feed,
                std::unique_ptr<feed_source> listener, store_options options);
  ~sql_job_store() override;

  [[nodiscard]] std::string_view backend() const override { return m_backend; }

  result<enqueue_result> enqueue(const enqueue_request& request) override;
  result<std::optional<job>> get(const std::string& id) override;
  result<std::optional<job>> find_by_key(const std::string& content_key) override;
  result<std::optional<job>> wait_for_change(const std::string& id, int64_t known_version, int64_t timeout_ms) override;
  result<std::vector<job_event>> history(const std::string& id) override;
  result<queue_stats> stats() override;
  result<std::optional<cached_verdict>> cached(const std::string& content_key, const run_environment& env) override;
  result<enqueue_result> enqueue_cached(const enqueue_request& request, const cached_verdict& hit) override;
  result<enqueue_result> enqueue_failed(const enqueue_request& request, failure_kind why,
                                        const std::string& error) override;
  result<bool> fail_waiting(const std::string& id, job_state waiting, int64_t version, failure_kind why,
                            const std::string& error) override;
  result<std::vector<job_summary>> summaries(int64_t finished_since_ms) override;

  result<std::optional<job>> lease(const lease_request& request) override;
  result<bool> wait_for_work(const lease_request& request, int64_t timeout_ms) override;
  result<commit_outcome> heartbeat(const lease_ref& lease, int64_t lease_ms) override;
  result<commit_outcome> finish_compile(const lease_ref& lease, const std::string& artifact_sha256) override;
  result<commit_outcome> complete(const lease_ref& lease, const std::string& verdict_json,
                                  const std::optional<run_environment>& env) override;
  result<commit_outcome> fail_infra(const lease_ref& lease, const std::string& error, retry_from from) override;
  result<commit_outcome> release(const lease_ref& lease, const std::string& reason) override;
  result<int> requeue_expired() override;

  status put_artifact(const std::string& sha256, const std::string& bytes) override;
  result<std::optional<std::string>> get_artifact(const std::string& sha256) override;

  status register_worker(const worker_info& info) override;
  status worker_heartbeat(const std::string& id, const std::string& health, const std::string& current_job) override;
  result<std::vector<worker_info>> workers() override;

 private:
  /// Runs body in a write transaction; retries (with a short back-off) when the database says a
  /// retry may help. body gets the store's clock and the attempt number (0 first) and must be
  /// idempotent: a repeat after an ambiguous commit must not apply twice.
  template <typename T>
  result<T> in_transaction(const char* what, const std::function<result<T>(sql_connection&, int64_t, int)>& body);
  /// Runs body on the connection outside a transaction, with the same retries.
  template <typename T>
  result<T> read(const char* what, const std::function<result<T>(sql_connection&)>& body);

  /// The common shape of every report a lease holder makes: fence check, transition, history.
  result<commit_outcome> report(const char* what, const lease_ref& lease, const std::string& event,
                                const std::string& detail,
                                const std::function<result<job>(sql_connection&, const job&, int64_t)>& apply);
  /// How a new job ends at once: answered from the cache (hit) or failed (failure != none).
  struct instant_end {
    const cached_verdict* hit = nullptr;
    failure_kind failure = failure_kind::none;
    std::string error;
  };
  /// enqueue, enqueue_cached and enqueue_failed: the same idempotency rules; `end` says whether the
  /// job is finished at once.
  result<enqueue_result> enqueue_job(const enqueue_request& request, const instant_end& end);
  result<std::optional<job>> lease_once(sql_connection& conn, const lease_request& request, const std::string& token,
                                        int64_t now, int attempt);
  result<int> requeue_expired_in(sql_connection& conn, int64_t now);

  /// Records whether an operation reached the database (after its retries): the outage bookkeeping
  /// requeue_expired_in consults.
  void note_reachable(bool reached);
  /// True while the database is unreachable or was regained less than outage_grace_ms ago.
  [[nodiscard]] bool in_outage_grace() const;

  std::string m_backend;
  std::mutex m_mutex;  // one connection, one statement at a time
  bool m_unreachable = false;
  std::chrono::steady_clock::time_point m_regained{};
  std::unique_ptr<sql_connection> m_conn;
  std::unique_ptr<change_feed> m_feed;
  std::unique_ptr<feed_source> m_listener;
  store_options m_options;
  int64_t m_last_reap_ms = 0;
};

/// 32 random hex digits (job ids, lease tokens).
std::string random_hex_id();

}  // namespace ptxbench::queue
