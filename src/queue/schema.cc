#include "queue/schema.h"

#include <fmt/format.h>

namespace ptxbench::queue {
namespace {

// Version 1, written once per dialect. Times are integers (ms since the Unix epoch) in both, so the
// store's code reads them the same way; `seq` gives first-in-first-out order.
const char* const sqlite_v1 = R"sql(
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  content_key TEXT NOT NULL,
  request_id TEXT UNIQUE,
  kind TEXT NOT NULL, task TEXT NOT NULL, target TEXT NOT NULL,
  solution TEXT NOT NULL, workloads TEXT NOT NULL, protocol TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued','compiling','compiled','running','done','failed')),
  version INTEGER NOT NULL, epoch INTEGER NOT NULL,
  attempts INTEGER NOT NULL, infra_failures INTEGER NOT NULL, lost_leases INTEGER NOT NULL,
  worker TEXT NOT NULL, lease_token TEXT NOT NULL, lease_expires_ms INTEGER NOT NULL, not_before_ms INTEGER NOT NULL,
  submitted_ms INTEGER NOT NULL, queued_ms INTEGER NOT NULL, compiling_ms INTEGER NOT NULL,
  compiled_ms INTEGER NOT NULL, running_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL,
  artifact_sha256 TEXT NOT NULL, verdict TEXT NOT NULL, failure TEXT NOT NULL, error TEXT NOT NULL,
  environment TEXT NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE INDEX jobs_by_key ON jobs (content_key, seq);
CREATE INDEX jobs_by_lease ON jobs (state, lease_expires_ms);
CREATE TABLE job_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL REFERENCES jobs (id),
  at_ms INTEGER NOT NULL, event TEXT NOT NULL, state TEXT NOT NULL,
  worker TEXT NOT NULL, epoch INTEGER NOT NULL, detail TEXT NOT NULL
);
CREATE INDEX job_events_by_job ON job_events (job_id, seq);
CREATE TABLE workers (
  id TEXT PRIMARY KEY, role TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, targets TEXT NOT NULL,
  health TEXT NOT NULL, current_job TEXT NOT NULL, started_ms INTEGER NOT NULL, last_seen_ms INTEGER NOT NULL,
  info TEXT NOT NULL
);
CREATE TABLE artifacts (
  sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL, created_ms INTEGER NOT NULL
);
CREATE TABLE result_cache (
  content_key TEXT NOT NULL, env_key TEXT NOT NULL, environment TEXT NOT NULL, verdict TEXT NOT NULL,
  job_id TEXT NOT NULL, evaluated_ms INTEGER NOT NULL,
  PRIMARY KEY (content_key, env_key)
);
)sql";

const char* const pg_v1 = R"sql(
CREATE TABLE jobs (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  content_key TEXT NOT NULL,
  request_id TEXT UNIQUE,
  kind TEXT NOT NULL, task TEXT NOT NULL, target TEXT NOT NULL,
  solution TEXT NOT NULL, workloads TEXT NOT NULL, protocol TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued','compiling','compiled','running','done','failed')),
  version BIGINT NOT NULL, epoch BIGINT NOT NULL,
  attempts INTEGER NOT NULL, infra_failures INTEGER NOT NULL, lost_leases INTEGER NOT NULL,
  worker TEXT NOT NULL, lease_token TEXT NOT NULL, lease_expires_ms BIGINT NOT NULL, not_before_ms BIGINT NOT NULL,
  submitted_ms BIGINT NOT NULL, queued_ms BIGINT NOT NULL, compiling_ms BIGINT NOT NULL,
  compiled_ms BIGINT NOT NULL, running_ms BIGINT NOT NULL, finished_ms BIGINT NOT NULL,
  artifact_sha256 TEXT NOT NULL, verdict TEXT NOT NULL, failure TEXT NOT NULL, error TEXT NOT NULL,
  environment TEXT NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE INDEX jobs_by_key ON jobs (content_key, seq);
CREATE INDEX jobs_by_lease ON jobs (state, lease_expires_ms);
CREATE TABLE job_events (
  seq BIGSERIAL PRIMARY KEY,
  job_id TEXT NOT NULL REFERENCES jobs (id),
  at_ms BIGINT NOT NULL, event TEXT NOT NULL, state TEXT NOT NULL,
  worker TEXT NOT NULL, epoch BIGINT NOT NULL, detail TEXT NOT NULL
);
CREATE INDEX job_events_by_job ON job_events (job_id, seq);
CREATE TABLE workers (
  id TEXT PRIMARY KEY, role TEXT NOT NULL, host TEXT NOT NULL, pid BIGINT NOT NULL, targets TEXT NOT NULL,
  health TEXT NOT NULL, current_job TEXT NOT NULL, started_ms BIGINT NOT NULL, last_seen_ms BIGINT NOT NULL,
  info TEXT NOT NULL
);
CREATE TABLE artifacts (
  sha256 TEXT PRIMARY KEY, size BIGINT NOT NULL, data BYTEA NOT NULL, created_ms BIGINT NOT NULL
);
CREATE TABLE result_cache (
  content_key TEXT NOT NULL, env_key TEXT NOT NULL, environment TEXT NOT NULL, verdict TEXT NOT NULL,
  job_id TEXT NOT NULL, evaluated_ms BIGINT NOT NULL,
  PRIMARY KEY (content_key, env_key)
);
)sql";

}  // namespace

const std::vector<std::string>& sqlite_migrations() {
  static const std::vector<std::string> list{sqlite_v1};
  return list;
}

const std::vector<std::string>& pg_migrations() {
  static const std::vector<std::string> list{pg_v1};
  return list;
}

result<int> apply_migrations(sql_connection& conn, const std::vector<std::string>& migrations) {
  const int known = static_cast<int>(migrations.size());
  auto attempt = [&]() -> result<int> {
    if (auto b = conn.begin_write(); !b) return b.err();
    auto body = [&]() -> result<int> {
      if (auto l = conn.lock_name("ptxbench schema migration"); !l) return l.err();
      if (auto c = conn.exec_script("CREATE TABLE IF NOT EXISTS schema_version "
                                    "(version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)");
          !c)
        return c.err();
      auto v = conn.exec("SELECT COALESCE(MAX(version), 0) FROM schema_version", {});
      if (!v) return v.err();
      int current = static_cast<int>(v->integer(0, 0));
      if (current > known)
        return make_error(fmt::format("the queue database has schema version {}, newer than this PTXBench "
                                      "understands ({}); use a newer ptxbench",
                                      current, known));
      auto now = conn.now_ms();
      if (!now) return now.err();
      for (int i = current; i < known; ++i) {
        if (auto m = conn.exec_script(migrations[static_cast<std::size_t>(i)]); !m)
          return m.err().with_context(fmt::format("schema migration {}", i + 1));
        auto rec = conn.exec("INSERT INTO schema_version (version, applied_ms) VALUES ($1, $2)",
                             {int64_t{i + 1}, *now});
        if (!rec) return rec.err();
      }
      return known;
    };
    auto out = body();
    if (!out) {
      conn.rollback();
      return out;
    }
    if (auto c = conn.commit(); !c) return c.err();
    return out;
  };
  result<int> out = make_error("no attempt");
  for (int i = 0; i < 5; ++i) {
    out = attempt();
    if (out || !conn.last_error_retryable()) break;
  }
  return out;
}

}  // namespace ptxbench::queue
