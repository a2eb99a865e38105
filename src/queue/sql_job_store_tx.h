#pragma once
// sql_job_store's retry wrappers (included only by its .cc files). A retryable failure (SQLite busy,
// a lost PostgreSQL connection, a serialization conflict) is retried a few times with a short
// back-off while the store's mutex is held; then the error goes to the caller, whose loop (a
// worker's, a client's) decides what to do. The whole body is repeated, so bodies are idempotent.

#include <chrono>
#include <thread>

#include "queue/sql_job_store.h"

namespace ptxbench::queue {

inline constexpr int sql_attempts = 5;

inline void sql_retry_pause(int attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(10 << attempt));  // 20, 40, 80, 160 ms
}

template <typename T>
result<T> sql_job_store::in_transaction(const char* what,
                                        const std::function<result<T>(sql_connection&, int64_t, int)>& body) {
  std::lock_guard lock(m_mutex);
  error last = make_error("no attempt");
  for (int attempt = 0; attempt < sql_attempts; ++attempt) {
    if (attempt > 0) sql_retry_pause(attempt);
    if (auto b = m_conn->begin_write(); !b) {
      last = b.err();
      if (m_conn->last_error_retryable()) continue;
      break;
    }
    auto now = m_conn->now_ms();
    result<T> out = now ? body(*m_conn, *now, attempt) : result<T>(now.err());
    if (!out) {
      last = out.err();
      bool retry = m_conn->last_error_retryable();
      m_conn->rollback();
      if (retry) continue;
      break;
    }
    if (auto c = m_conn->commit(); !c) {
      last = c.err();
      m_conn->rollback();
      if (m_conn->last_error_retryable()) continue;
      break;
    }
    m_feed->bump();
    note_reachable(true);
    return out;
  }
  note_reachable(!m_conn->last_error_retryable());
  return last.with_context(what);
}

template <typename T>
result<T> sql_job_store::read(const char* what, const std::function<result<T>(sql_connection&)>& body) {
  std::lock_guard lock(m_mutex);
  error last = make_error("no attempt");
  for (int attempt = 0; attempt < sql_attempts; ++attempt) {
    if (attempt > 0) sql_retry_pause(attempt);
    auto out = body(*m_conn);
    if (out) {
      note_reachable(true);
      return out;
    }
    last = out.err();
    if (!m_conn->last_error_retryable()) break;
  }
  note_reachable(!m_conn->last_error_retryable());
  return last.with_context(what);
}

}  // namespace ptxbench::queue
