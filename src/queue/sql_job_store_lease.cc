// sql_job_store: the worker side (lease, wait for work, heartbeat, reports, expiry).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "queue/job_rows.h"
#include "queue/sql_job_store.h"
#include "queue/sql_job_store_tx.h"
#include "queue/transitions.h"

namespace ptxbench::queue {
namespace {

/// The state a role leases from and the state the lease puts the job in.
struct lease_states {
  const char* from;
  const char* to;
  const char* entered_column;
};
lease_states states_for(worker_role role) {
  return role == worker_role::cpu ? lease_states{"queued", "compiling", "compiling_ms"}
                                  : lease_states{"compiled", "running", "running_ms"};
}

/// " AND target IN ($k, $k+1, ...)" for a gpu worker's targets, appending them to params.
std::string target_filter(const lease_request& request, std::vector<sql_value>& params) {
  if (request.role != worker_role::gpu) return "";
  std::string sql = " AND target IN (";
  for (std::size_t i = 0; i < request.targets.size(); ++i) {
    params.emplace_back(request.targets[i]);
    sql += fmt::format("{}${}", i ? ", " : "", params.size());
  }
  return sql + ")";
}

}  // namespace

result<std::optional<job>> sql_job_store::lease_once(sql_connection& conn, const lease_request& request,
                                                     const std::string& token, int64_t now, int attempt) {
  auto states = states_for(request.role);
  if (attempt > 0) {  // the previous attempt may have committed: take back what it leased
    auto mine = conn.exec(std::string("SELECT ") + job_columns +
                              " FROM jobs WHERE lease_token = $1 AND worker = $2 AND state = $3",
                          {token, request.worker, std::string(states.to)});
    if (!mine) return mine.err();
    if (!mine->empty()) {
      auto j = job_from_row(*mine, 0);
      if (!j) return j.err();
      return std::optional<job>(std::move(*j));
    }
  }
  std::vector<sql_value> params{std::string(states.to), request.worker, token, now + request.lease_ms, now,
                                std::string(states.from)};
  std::string filter = target_filter(request, params);
  std::string sql = fmt::format(
      "UPDATE jobs SET state = $1, version = version + 1, epoch = epoch + 1, attempts = attempts + 1, worker = $2, "
      "lease_token = $3, lease_expires_ms = $4, {} = $5 "
      "WHERE id = (SELECT id FROM jobs WHERE state = $6 AND not_before_ms <= $5{} ORDER BY seq LIMIT 1{}) "
      "RETURNING {}",
      states.entered_column, filter, conn.skip_locked(), job_columns);
  auto rows = conn.exec(sql, params);
  if (!rows) return rows.err();
  if (rows->empty()) return std::optional<job>{};
  auto j = job_from_row(*rows, 0);
  if (!j) return j.err();
  if (auto e = add_event(conn, *j, now, "leased", j->worker, j->epoch, fmt::format("{} ms", request.lease_ms)); !e)
    return e.err();
  if (auto n = conn.notify(std::string(states.to) + ":" + j->id); !n) return n.err();
  return std::optional<job>(std::move(*j));
}

result<std::optional<job>> sql_job_store::lease(const lease_request& request) {
  if (request.worker.empty()) return make_error("lease: the worker has no id");
  if (request.role == worker_role::gpu && request.targets.empty())
    return make_error("lease: a gpu worker must serve at least one target");
  std::string token = random_hex_id();
  return in_transaction<std::optional<job>>(
      "lease", [&](sql_connection& conn, int64_t now, int attempt) -> result<std::optional<job>> {
        if (now - m_last_reap_ms >= m_options.reap_interval_ms) {
          auto reaped = requeue_expired_in(conn, now);
          if (!reaped) return reaped.err();
          m_last_reap_ms = now;
        }
        return lease_once(conn, request, token, now, attempt);
      });
}

result<bool> sql_job_store::wait_for_work(const lease_request& request, int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0));
  for (;;) {
    uint64_t seen = m_feed->generation();
    auto found = read<bool>("wait for work", [&](sql_connection& conn) -> result<bool> {
      auto now = conn.now_ms();
      if (!now) return now.err();
      std::vector<sql_value> params{std::string(states_for(request.role).from), *now};
      std::string filter = target_filter(request, params);
      auto rows = conn.exec("SELECT 1 FROM jobs WHERE state = $1 AND not_before_ms <= $2" + filter + " LIMIT 1", params);
      if (!rows) return rows.err();
      return !rows->empty();
    });
    if (!found || *found) return found;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    m_feed->wait(seen, std::min<int64_t>(left.count(), m_options.poll_interval_ms));
  }
}

result<commit_outcome> sql_job_store::heartbeat(const lease_ref& lease, int64_t lease_ms) {
  return in_transaction<commit_outcome>(
      "heartbeat", [&](sql_connection& conn, int64_t now, int) -> result<commit_outcome> {
        auto j = select_job_for_update(conn, lease.job_id);
        if (!j) return j.err();
        if (!*j) return make_error("heartbeat: no job " + lease.job_id);
        if (!holds(**j, lease)) {
          if (auto e = add_event(conn, **j, now, "stale_heartbeat", lease.worker, lease.epoch, ""); !e) return e.err();
          return commit_outcome::stale;
        }
        auto r = conn.exec("UPDATE jobs SET lease_expires_ms = $2 WHERE id = $1", {lease.job_id, now + lease_ms});
        if (!r) return r.err();
        return commit_outcome::accepted;
      });
}

result<commit_outcome> sql_job_store::report(
    const char* what, const lease_ref& lease, const std::string& event, const std::string& detail,
    const std::function<result<job>(sql_connection&, const job&, int64_t)>& apply) {
  return in_transaction<commit_outcome>(what, [&](sql_connection& conn, int64_t now, int) -> result<commit_outcome> {
    auto j = select_job_for_update(conn, lease.job_id);
    if (!j) return j.err();
    if (!*j) return make_error("no job " + lease.job_id);
    const job& before = **j;
    if (already_reported(before, lease)) return commit_outcome::accepted;  // a repeat of our own report
    if (!holds(before, lease)) {
      // A worker presumed dead reports late: discard it, but keep the evidence.
      auto why = fmt::format("epoch {} is stale: the job is {} at epoch {} (worker '{}')", lease.epoch,
                             to_string(before.state), before.epoch, before.worker);
      if (auto e = add_event(conn, before, now, "stale_" + event, lease.worker, lease.epoch, why); !e)
        return e.err();
      return commit_outcome::stale;
    }
    auto after = apply(conn, before, now);
    if (!after) return after.err();
    if (auto w = write_job(conn, *after); !w) return w.err();
    std::string name = after->state == job_state::failed ? "failed" : event;
    const std::string& said = after->state == job_state::failed ? after->error : detail;
    if (auto e = add_event(conn, *after, now, name, lease.worker, lease.epoch, said); !e) return e.err();
    if (auto n = conn.notify(std::string(to_string(after->state)) + ":" + after->id); !n) return n.err();
    return commit_outcome::accepted;
  });
}

result<commit_outcome> sql_job_store::finish_compile(const lease_ref& lease, const std::string& artifact_sha256) {
  return report("finish compile", lease, "compiled", artifact_sha256,
                [&](sql_connection& conn, const job& j, int64_t now) -> result<job> {
                  if (j.state != job_state::compiling) return make_error("finish compile: the job is not compiling");
                  auto stored = conn.exec("SELECT 1 FROM artifacts WHERE sha256 = $1", {artifact_sha256});
                  if (!stored) return stored.err();
                  if (stored->empty())
                    return make_error("finish compile: artifact " + artifact_sha256 + " is not stored");
                  return after_compiled(j, artifact_sha256, now);
                });
}

result<commit_outcome> sql_job_store::complete(const lease_ref& lease, const std::string& verdict_json,
                                               const std::optional<run_environment>& env) {
  auto parsed = nlohmann::json::parse(verdict_json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return make_error("complete: the verdict is not a JSON object");
  return report("complete", lease, "completed", "", [&](sql_connection& conn, const job& j, int64_t now) -> result<job> {
    job after = after_completed(j, verdict_json, env ? environment_json(*env) : "", now);
    if (env) {
      auto r = conn.exec(
          "INSERT INTO result_cache (content_key, env_key, environment, verdict, job_id, evaluated_ms) "
          "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (content_key, env_key) DO UPDATE SET "
          "environment = excluded.environment, verdict = excluded.verdict, job_id = excluded.job_id, "
          "evaluated_ms = excluded.evaluated_ms",
          {j.content_key, environment_key(*env), environment_json(*env), verdict_json, j.id, now});
      if (!r) return r.err();
    }
    return after;
  });
}

result<commit_outcome> sql_job_store::fail_infra(const lease_ref& lease, const std::string& error, retry_from from) {
  return report("infrastructure failure", lease, "infra_failure", error, [&](sql_connection&, const job& j, int64_t now) {
    return result<job>(after_infra_failure(j, m_options.policy, error, from, now));
  });
}

result<commit_outcome> sql_job_store::release(const lease_ref& lease, const std::string& reason) {
  return report("release", lease, "released", reason,
                [&](sql_connection&, const job& j, int64_t now) { return result<job>(after_release(j, now)); });
}

void sql_job_store::note_reachable(bool reached) {
  if (!reached) {
    m_unreachable = true;
  } else if (m_unreachable) {
    m_unreachable = false;
    m_regained = std::chrono::steady_clock::now();
  }
}

bool sql_job_store::in_outage_grace() const {
  if (m_unreachable) return true;
  if (m_regained == std::chrono::steady_clock::time_point{}) return false;
  return std::chrono::steady_clock::now() - m_regained < std::chrono::milliseconds(m_options.outage_grace_ms);
}

result<int> sql_job_store::requeue_expired_in(sql_connection& conn, int64_t now) {
  // A database outage cuts every worker off, not only this process: their heartbeats failed and
  // their leases ran out while they kept working. Expiring those leases now would count an outage
  // against honest jobs as lost workers (poison pills); wait one lease length for them to report.
  if (in_outage_grace()) return 0;
  auto rows = conn.exec(std::string("SELECT ") + job_columns +
                            " FROM jobs WHERE state IN ('compiling', 'running') AND lease_expires_ms < $1 "
                            "ORDER BY seq LIMIT 100" + std::string(conn.skip_locked()),
                        {now});
  if (!rows) return rows.err();
  for (std::size_t r = 0; r < rows->size(); ++r) {
    auto before = job_from_row(*rows, r);
    if (!before) return before.err();
    job after = after_expiry(*before, m_options.policy, now);
    if (auto w = write_job(conn, after); !w) return w.err();
    auto detail = fmt::format("the lease of worker '{}' expired while {} (workers lost: {})", before->worker,
                              to_string(before->state), after.lost_leases);
    if (auto e = add_event(conn, after, now, after.state == job_state::failed ? "poison_pill" : "lease_expired",
                           before->worker, before->epoch, detail);
        !e)
      return e.err();
    if (auto n = conn.notify(std::string(to_string(after.state)) + ":" + after.id); !n) return n.err();
  }
  return static_cast<int>(rows->size());
}

result<int> sql_job_store::requeue_expired() {
  return in_transaction<int>("requeue expired leases", [&](sql_connection& conn, int64_t now, int) {
    auto n = requeue_expired_in(conn, now);
    if (n) m_last_reap_ms = now;
    return n;
  });
}

}  // namespace ptxbench::queue
