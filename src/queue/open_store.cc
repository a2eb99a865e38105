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

result<fs::path> sqlite_file(const std::string& where) {
  std::string path = where.rfind("sqlite:", 0) == 0 ? where.substr(7) : where;
  if (path.empty()) return make_error("queue: empty path");
  fs::path p(path);
  std::error_code ec;
  bool as_dir = path.back() == '/' || fs::is_directory(p, ec);
  fs::path file = as_dir ? p / sqlite_queue_file : p;
  if (!file.parent_path().empty()) {
    fs::create_directories(file.parent_path(), ec);
    if (ec) return make_error(fmt::format("queue: cannot create {}: {}", file.parent_path().string(), ec.message()));
  }
  return file;
}

}  // namespace

result<std::unique_ptr<job_store>> open_job_store(const std::string& where, const store_options& options) {
  auto feed = std::make_unique<change_feed>();
  if (is_postgresql_url(where)) {
    auto conn = open_pg_connection(where, options.connect_timeout_s);
    if (!conn) return conn.err();
    auto version = apply_migrations(**conn, pg_migrations());
    if (!version) return version.err();
    std::unique_ptr<feed_source> listener;
    if (options.use_notify) listener = start_pg_listener(where, options.connect_timeout_s, *feed);
    return std::unique_ptr<job_store>(
        std::make_unique<sql_job_store>(std::move(*conn), std::move(feed), std::move(listener), options));
  }
  auto file = sqlite_file(where);
  if (!file) return file.err();
  auto conn = open_sqlite_connection(*file, options.busy_timeout_ms);
  if (!conn) return conn.err();
  auto version = apply_migrations(**conn, sqlite_migrations());
  if (!version) return version.err().with_context(file->string());
  return std::unique_ptr<job_store>(
      std::make_unique<sql_job_store>(std::move(*conn), std::move(feed), nullptr, options));
}

}  // namespace ptxbench::queue
