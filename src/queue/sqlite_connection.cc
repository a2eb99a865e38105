#include "queue/sqlite_connection.h"

#include <map>

#include <fmt/format.h>
#include <sqlite3.h>

#include "queue/job.h"

namespace ptxbench::queue {
namespace {

class sqlite_connection final : public sql_connection {
 public:
  explicit sqlite_connection(sqlite3* db) : m_db(db) {}
  ~sqlite_connection() override {
    for (auto& [sql, stmt] : m_statements) sqlite3_finalize(stmt);
    sqlite3_close_v2(m_db);
  }
  sqlite_connection(const sqlite_connection&) = delete;
  sqlite_connection& operator=(const sqlite_connection&) = delete;

  [[nodiscard]] std::string_view backend() const override { return "sqlite"; }

  result<sql_rows> exec(std::string_view sql, const std::vector<sql_value>& params) override {
    auto stmt = prepare(sql);
    if (!stmt) return stmt.err();
    sqlite3_stmt* s = *stmt;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    for (std::size_t i = 0; i < params.size(); ++i) {
      int idx = static_cast<int>(i) + 1, rc = SQLITE_OK;
      const sql_value& v = params[i];
      if (std::holds_alternative<std::nullptr_t>(v)) rc = sqlite3_bind_null(s, idx);
      else if (auto* n = std::get_if<int64_t>(&v)) rc = sqlite3_bind_int64(s, idx, *n);
      else if (auto* t = std::get_if<std::string>(&v))
        rc = sqlite3_bind_text64(s, idx, t->data(), t->size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      else {
        const std::string& b = std::get<sql_blob>(v).bytes;
        rc = sqlite3_bind_blob64(s, idx, b.data(), b.size(), SQLITE_TRANSIENT);
      }
      if (rc != SQLITE_OK) return fail(rc, "bind");
    }
    sql_rows out;
    for (;;) {
      int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        auto err = fail(rc, "step");
        sqlite3_reset(s);
        return err;
      }
      int n = sqlite3_column_count(s);
      std::vector<std::optional<std::string>> row(static_cast<std::size_t>(n));
      for (int c = 0; c < n; ++c) {
        int type = sqlite3_column_type(s, c);
        if (type == SQLITE_NULL) continue;
        const void* p = type == SQLITE_BLOB ? sqlite3_column_blob(s, c) : sqlite3_column_text(s, c);
        int size = sqlite3_column_bytes(s, c);
        row[static_cast<std::size_t>(c)] = p ? std::string(static_cast<const char*>(p), static_cast<std::size_t>(size))
                                             : std::string();
      }
      out.rows.push_back(std::move(row));
    }
    sqlite3_reset(s);
    m_retryable = false;
    return out;
  }

  status exec_script(std::string_view sql) override {
    char* msg = nullptr;
    int rc = sqlite3_exec(m_db, std::string(sql).c_str(), nullptr, nullptr, &msg);
    std::string text = msg ? msg : "";
    sqlite3_free(msg);
    if (rc != SQLITE_OK) {
      m_retryable = rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
      return make_error("sqlite: " + text);
    }
    m_retryable = false;
    return ok();
  }

  status begin_write() override { return simple("BEGIN IMMEDIATE"); }
  status commit() override { return simple("COMMIT"); }
  void rollback() override {
    if (!sqlite3_get_autocommit(m_db)) (void)exec_script("ROLLBACK");
  }
  status lock_name(std::string_view) override { return ok(); }
  [[nodiscard]] std::string_view for_update() const override { return ""; }
  [[nodiscard]] std::string_view skip_locked() const override { return ""; }
  result<int64_t> now_ms() override { return wall_clock_ms(); }
  status notify(std::string_view) override { return ok(); }  // other processes poll the file
  [[nodiscard]] bool last_error_retryable() const override { return m_retryable; }

 private:
  status simple(std::string_view sql) {
    auto r = exec(sql, {});
    if (!r) return r.err();
    return ok();
  }

  // Statements are prepared once per connection: the lease and heartbeat statements run many times
  // a second with several workers.
  result<sqlite3_stmt*> prepare(std::string_view sql) {
    auto key = std::string(sql);
    if (auto it = m_statements.find(key); it != m_statements.end()) return it->second;
    std::string translated = sqlite_placeholders(sql);
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(m_db, translated.c_str(), static_cast<int>(translated.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return fail(rc, "prepare");
    }
    m_statements.emplace(std::move(key), stmt);
    return stmt;
  }

  error fail(int rc, const char* step) {
    int primary = rc & 0xff;
    m_retryable = primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
    return make_error(fmt::format("sqlite {}: {}", step, sqlite3_errmsg(m_db)));
  }

  sqlite3* m_db;
  std::map<std::string, sqlite3_stmt*> m_statements;
  bool m_retryable = false;
};

}  // namespace

result<std::unique_ptr<sql_connection>> open_sqlite_connection(const std::filesystem::path& file,
                                                                int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return make_error(fmt::format("cannot open the queue database {}: {}", file.string(), msg));
  }
  sqlite3_busy_timeout(db, busy_timeout_ms);
  auto conn = std::make_unique<sqlite_connection>(db);
  // journal_mode is persistent in the file; the others are per connection.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
    if (auto r = conn->exec(pragma, {}); !r)
      return r.err().with_context(fmt::format("queue database {}", file.string()));
  }
  return std::unique_ptr<sql_connection>(std::move(conn));
}

}  // namespace ptxbench::queue
