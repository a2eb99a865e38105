// sql_job_store: construction and the client side (enqueue, reads, long-poll, statistics, cache).
#include "queue/sql_job_store.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "queue/content_key.h"
#include "queue/job_rows.h"
#include "queue/sql_job_store_tx.h"
#include "queue/transitions.h"

namespace ptxbench::queue {

std::string random_hex_id() {
  // std::random_device reads the kernel's random source: ids cannot be guessed or collide by
  // seeding accident (two workers started in the same microsecond).
  thread_local std::random_device device;
  std::string out;
  for (int i = 0; i < 4; ++i) out += fmt::format("{:08x}", static_cast<uint32_t>(device()));
  return out;
}

sql_job_store::sql_job_store(std::unique_ptr<sql_connection> conn, std::unique_ptr<change_feed> feed,
                             std::unique_ptr<feed_source> listener, store_options options)
    : m_backend(conn->backend()),
      m_conn(std::move(conn)),
      m_feed(std::move(feed)),
      m_listener(std::move(listener)),
      m_options(options) {}

sql_job_store::~sql_job_store() = default;

namespace {

result<std::optional<job>> first_job(const result<sql_rows>& rows) {
  if (!rows) return rows.err();
  if (rows->empty()) return std::optional<job>{};
  auto j = job_from_row(*rows, 0);
  if (!j) return j.err();
  return std::optional<job>(std::move(*j));
}

status insert_job(sql_connection& conn, const job& j) {
  auto r = conn.exec(
      "INSERT INTO jobs (id, content_key, request_id, kind, task, target, solution, workloads, protocol, state, "
      "version, epoch, attempts, infra_failures, lost_leases, worker, lease_token, lease_expires_ms, not_before_ms, "
      "submitted_ms, queued_ms, compiling_ms, compiled_ms, running_ms, finished_ms, artifact_sha256, verdict, "
      "failure, error, environment) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued', 1, 0, 0, 0, 0, '', '', "
      "0, 0, $10, $10, 0, 0, 0, 0, '', '', '', '', '')",
      {j.id, j.content_key, j.request_id.empty() ? sql_value(nullptr) : sql_value(j.request_id),
       std::string(to_string(j.spec.kind)), j.spec.task, j.spec.target, j.spec.solution_json,
       string_list_to_json(j.spec.workloads), j.spec.protocol_json, j.submitted_ms});
  if (!r) return r.err();
  return ok();
}

// Fails a job nothing can serve, inside the caller's transaction: its row, its event (named by the
// failure kind) and the notification — for one refused at enqueue and one that waited in vain alike.
result<job> write_unserved(sql_connection& conn, job j, failure_kind why, const std::string& error, int64_t now) {
  job after = after_unserved(std::move(j), why, error, now);
  if (auto w = write_job(conn, after); !w) return w.err();
  if (auto e = add_event(conn, after, now, std::string(to_string(why)), "", after.epoch, error); !e) return e.err();
  if (auto n = conn.notify("failed:" + after.id); !n) return n.err();
  return after;
}

}  // namespace

result<enqueue_result> sql_job_store::enqueue(const enqueue_request& request) { return enqueue_job(request, {}); }

result<enqueue_result> sql_job_store::enqueue_cached(const enqueue_request& request, const cached_verdict& hit) {
  auto parsed = nlohmann::json::parse(hit.verdict_json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return make_error("enqueue cached: the verdict is not a JSON object");
  return enqueue_job(request, {&hit, failure_kind::none, ""});
}

result<enqueue_result> sql_job_store::enqueue_failed(const enqueue_request& request, failure_kind why,
                                                     const std::string& error) {
  if (why == failure_kind::none) return make_error("enqueue failed: no failure kind given");
  return enqueue_job(request, {nullptr, why, error});
}

result<bool> sql_job_store::fail_waiting(const std::string& id, job_state waiting, int64_t version, failure_kind why,
                                         const std::string& error) {
  return in_transaction<bool>("fail waiting job", [&](sql_connection& conn, int64_t now, int) -> result<bool> {
    auto j = select_job_for_update(conn, id);
    if (!j) return j.err();
    if (!*j || (**j).state != waiting || (**j).version != version) return false;
    auto failed = write_unserved(conn, std::move(**j), why, error, now);
    if (!failed) return failed.err();
    return true;
  });
}

result<enqueue_result> sql_job_store::enqueue_job(const enqueue_request& request, const instant_end& end) {
  const cached_verdict* hit = end.hit;
  auto key = content_key(request.spec);
  if (!key) return key.err();
  job fresh;
  fresh.id = random_hex_id();  // chosen once: a retry after an ambiguous commit finds its own row
  fresh.content_key = *key;
  fresh.request_id = request.request_id;
  fresh.spec = request.spec;
  if (fresh.spec.protocol_json.empty()) fresh.spec.protocol_json = "{}";
  std::sort(fresh.spec.workloads.begin(), fresh.spec.workloads.end());
  fresh.spec.workloads.erase(std::unique(fresh.spec.workloads.begin(), fresh.spec.workloads.end()),
                             fresh.spec.workloads.end());

  return in_transaction<enqueue_result>(
      "enqueue", [&](sql_connection& conn, int64_t now, int attempt) -> result<enqueue_result> {
        auto select = std::string("SELECT ") + job_columns + " FROM jobs WHERE ";
        if (attempt > 0) {
          auto mine = first_job(conn.exec(select + "id = $1", {fresh.id}));
          if (!mine) return mine.err();
          if (*mine) return enqueue_result{std::move(**mine), true};
        }
        if (!fresh.request_id.empty()) {
          if (auto l = conn.lock_name("request " + fresh.request_id); !l) return l.err();
          auto same = first_job(conn.exec(select + "request_id = $1", {fresh.request_id}));
          if (!same) return same.err();
          if (*same) {
            if ((*same)->content_key != fresh.content_key)
              return make_error(fmt::format("request id '{}' was already used for a different job", fresh.request_id));
            return enqueue_result{std::move(**same), false};
          }
        }
        if (request.join_active && !hit && end.failure == failure_kind::none) {
          if (auto l = conn.lock_name("key " + fresh.content_key); !l) return l.err();
          auto active = first_job(conn.exec(
              select + "content_key = $1 AND state NOT IN ('done', 'failed') ORDER BY seq DESC LIMIT 1",
              {fresh.content_key}));
          if (!active) return active.err();
          if (*active) return enqueue_result{std::move(**active), false};
        }
        job j = fresh;
        j.submitted_ms = j.queued_ms = now;
        j.version = 1;
        if (auto s = insert_job(conn, j); !s) return s.err();
        if (auto e = add_event(conn, j, now, "enqueued", "", 0, j.request_id); !e) return e.err();
        if (hit) {
          // Answered from the result cache: done at once, nothing for a worker to lease.
          j = after_completed(std::move(j), hit->verdict_json, hit->environment_json, now);
          if (auto w = write_job(conn, j); !w) return w.err();
          auto detail = nlohmann::json{{"job_id", hit->job_id}, {"evaluated_ms", hit->evaluated_ms}}.dump();
          if (auto e = add_event(conn, j, now, "cache_hit", "", 0, detail); !e) return e.err();
          if (auto n = conn.notify("done:" + j.id); !n) return n.err();
          return enqueue_result{std::move(j), true};
        }
        if (end.failure != failure_kind::none) {
          // Known at once to be impossible: failed before any worker sees it.
          auto failed = write_unserved(conn, std::move(j), end.failure, end.error, now);
          if (!failed) return failed.err();
          return enqueue_result{std::move(*failed), true};
        }
        if (auto n = conn.notify("queued:" + j.id); !n) return n.err();
        return enqueue_result{std::move(j), true};
      });
}

result<std::optional<job>> sql_job_store::get(const std::string& id) {
  return read<std::optional<job>>("get job", [&](sql_connection& conn) {
    return first_job(conn.exec(std::string("SELECT ") + job_columns + " FROM jobs WHERE id = $1", {id}));
  });
}

result<std::optional<job>> sql_job_store::find_by_key(const std::string& key) {
  return read<std::optional<job>>("find job by key", [&](sql_connection& conn) {
    return first_job(conn.exec(
        std::string("SELECT ") + job_columns + " FROM jobs WHERE content_key = $1 ORDER BY seq DESC LIMIT 1", {key}));
  });
}

result<std::optional<job>> sql_job_store::wait_for_change(const std::string& id, int64_t known_version,
                                                          int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0));
  for (;;) {
    uint64_t seen = m_feed->generation();  // before reading: a change after the read still wakes us
    auto j = get(id);
    if (!j || !*j || (*j)->version != known_version) return j;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return j;
    m_feed->wait(seen, std::min<int64_t>(left.count(), m_options.poll_interval_ms));
  }
}

result<std::vector<job_event>> sql_job_store::history(const std::string& id) {
  return read<std::vector<job_event>>("job history", [&](sql_connection& conn) -> result<std::vector<job_event>> {
    auto rows = conn.exec(
        "SELECT at_ms, event, state, worker, epoch, detail FROM job_events WHERE job_id = $1 ORDER BY seq", {id});
    if (!rows) return rows.err();
    std::vector<job_event> out;
    for (std::size_t r = 0; r < rows->size(); ++r) {
      job_event e;
      e.at_ms = rows->integer(r, 0);
      e.event = rows->text(r, 1);
      auto s = parse_job_state(rows->text(r, 2));
      if (!s) return s.err();
      e.state = *s;
      e.worker = rows->text(r, 3);
      e.epoch = rows->integer(r, 4);
      e.detail = rows->text(r, 5);
      out.push_back(std::move(e));
    }
    return out;
  });
}

result<queue_stats> sql_job_store::stats() {
  return read<queue_stats>("queue statistics", [&](sql_connection& conn) -> result<queue_stats> {
    queue_stats out;
    for (auto s : {job_state::queued, job_state::compiling, job_state::compiled, job_state::running, job_state::done,
                   job_state::failed})
      out.depth[s] = 0;
    auto counts = conn.exec("SELECT state, COUNT(*) FROM jobs GROUP BY state", {});
    if (!counts) return counts.err();
    for (std::size_t r = 0; r < counts->size(); ++r) {
      auto s = parse_job_state(counts->text(r, 0));
      if (!s) return s.err();
      out.depth[*s] = counts->integer(r, 1);
    }
    auto oldest = conn.exec(
        "SELECT id, CASE WHEN state = 'queued' THEN queued_ms ELSE compiled_ms END AS since FROM jobs "
        "WHERE state IN ('queued', 'compiled') ORDER BY since, seq LIMIT 1",
        {});
    if (!oldest) return oldest.err();
    if (!oldest->empty()) {
      out.oldest_waiting_id = oldest->text(0, 0);
      out.oldest_waiting_since_ms = oldest->integer(0, 1);
    }
    auto now = conn.now_ms();
    if (!now) return now.err();
    out.now_ms = *now;
    return out;
  });
}

result<std::optional<cached_verdict>> sql_job_store::cached(const std::string& key, const run_environment& env) {
  return read<std::optional<cached_verdict>>(
      "result cache", [&](sql_connection& conn) -> result<std::optional<cached_verdict>> {
        auto rows = conn.exec(
            "SELECT verdict, job_id, environment, evaluated_ms FROM result_cache WHERE content_key = $1 AND env_key = $2",
            {key, environment_key(env)});
        if (!rows) return rows.err();
        if (rows->empty()) return std::optional<cached_verdict>{};
        return std::optional<cached_verdict>(
            cached_verdict{rows->text(0, 0), rows->text(0, 1), rows->text(0, 2), rows->integer(0, 3)});
      });
}

}  // namespace ptxbench::queue

namespace ptxbench::queue {

result<std::vector<job_summary>> sql_job_store::summaries(int64_t finished_since_ms) {
  return read<std::vector<job_summary>>("job summaries", [&](sql_connection& conn) -> result<std::vector<job_summary>> {
    auto rows = conn.exec(
        "SELECT id, kind, task, target, state, failure, worker, attempts, submitted_ms, queued_ms, compiling_ms, "
        "compiled_ms, running_ms, finished_ms, version FROM jobs WHERE state NOT IN ('done', 'failed') OR finished_ms >= $1 "
        "ORDER BY seq",
        {finished_since_ms});
    if (!rows) return rows.err();
    std::vector<job_summary> out;
    out.reserve(rows->size());
    for (std::size_t r = 0; r < rows->size(); ++r) {
      job_summary s;
      s.id = rows->text(r, 0);
      auto kind = parse_job_kind(rows->text(r, 1));
      auto state = parse_job_state(rows->text(r, 4));
      auto failure = parse_failure_kind(rows->text(r, 5));
      if (!kind || !state || !failure) return make_error("job " + s.id + ": a stored kind, state or failure is unknown");
      s.kind = *kind;
      s.task = rows->text(r, 2);
      s.target = rows->text(r, 3);
      s.state = *state;
      s.failure = *failure;
      s.worker = rows->text(r, 6);
      s.attempts = static_cast<int>(rows->integer(r, 7));
      s.submitted_ms = rows->integer(r, 8);
      s.queued_ms = rows->integer(r, 9);
      s.compiling_ms = rows->integer(r, 10);
      s.compiled_ms = rows->integer(r, 11);
      s.running_ms = rows->integer(r, 12);
      s.finished_ms = rows->integer(r, 13);
      s.version = rows->integer(r, 14);
      out.push_back(std::move(s));
    }
    return out;
  });
}

}  // namespace ptxbench::queue
