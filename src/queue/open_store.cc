#include "queue/open_store.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "queue/pg_connection.h"
#include "queue/pg_listener.h"
#include "queue/schema.h"
#include "queue/sql_job_store.h"
#include "queue/sqlite_connection.h"

namespace ptxbench::queue {
namespace fs = std::filesystem;

bool is_postgresql_url(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0;
}

namespace {

using open_mode = store_options::open_mode;

// A mistyped --queue must not quietly become a new, empty queue: only `serve` (create) makes
// folders; a worker (join) makes the queue file only in a folder that exists; commands that only
// read (existing) need the queue file itself.
result<fs::path> sqlite_file(const std::string& where, open_mode mode) {
  std::string path = where.rfind("sqlite:", 0) == 0 ? where.substr(7) : where;
  if (path.empty()) return make_error("queue: empty path");
  fs::path p(path);
  std::error_code ec;
  bool as_dir = path.back() == '/' || fs::is_directory(p, ec);
  fs::path file = as_dir ? p / sqlite_queue_file : p;
  fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  switch (mode) {
    case open_mode::create:
      fs::create_directories(folder, ec);
      if (ec) return make_error(fmt::format("queue: cannot create {}: {}", folder.string(), ec.message()));
      break;
    case open_mode::join:
      if (!fs::is_directory(folder, ec))
        return make_error(fmt::format("queue {}: no such folder {} (`ptxbench serve --queue` creates a queue)", where,
                                      folder.string()));
      break;
    case open_mode::existing:
      if (!fs::is_regular_file(file, ec))
        return make_error(fmt::format("queue {}: no queue there ({} does not exist)", where, file.string()));
      break;
  }
  return file;
}

// A command that only reads needs a database that already holds a queue (and must not add one to a
// database that is something else).
status expect_schema(sql_connection& conn, const std::string& where, bool postgresql) {
  auto rows = conn.exec(postgresql ? "SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_version'"
                                   : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
                        {});
  if (!rows) return rows.err();
  if (rows->empty()) return make_error(fmt::format("queue {}: this database holds no PTXBench queue", where));
  return ok();
}

}  // namespace

result<std::unique_ptr<job_store>> open_job_store(const std::string& where, const store_options& options) {
  auto feed = std::make_unique<change_feed>();
  if (is_postgresql_url(where)) {
    auto conn = open_pg_connection(where, options.connect_timeout_s);
    if (!conn) return conn.err();
    if (options.mode == open_mode::existing)
      if (auto st = expect_schema(**conn, where, true); !st) return st.err();
    auto version = apply_migrations(**conn, pg_migrations());
    if (!version) return version.err();
    std::unique_ptr<feed_source> listener;
    if (options.use_notify) listener = start_pg_listener(where, options.connect_timeout_s, *feed);
    return std::unique_ptr<job_store>(
        std::make_unique<sql_job_store>(std::move(*conn), std::move(feed), std::move(listener), options));
  }
  auto file = sqlite_file(where, options.mode);
  if (!file) return file.err();
  auto conn = open_sqlite_connection(*file, options.busy_timeout_ms);
  if (!conn) return conn.err();
  if (options.mode == open_mode::existing)
    if (auto st = expect_schema(**conn, where, false); !st) return st.err();
  auto version = apply_migrations(**conn, sqlite_migrations());
  if (!version) return version.err().with_context(file->string());
  return std::unique_ptr<job_store>(
      std::make_unique<sql_job_store>(std::move(*conn), std::move(feed), nullptr, options));
}

}  // namespace ptxbench::queue
