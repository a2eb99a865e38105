#include "queue/pg_connection.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include "queue/pg_connect.h"

namespace ptxbench::queue {
namespace {

constexpr Oid bytea_oid = 17;

/// Decodes PostgreSQL's text form of bytea ("\x" + hex digits).
std::string decode_bytea(const char* text, int length) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  std::string out;
  if (length < 2 || text[0] != '\\' || text[1] != 'x') return std::string(text, static_cast<std::size_t>(length));
  out.reserve(static_cast<std::size_t>(length - 2) / 2);
  for (int i = 2; i + 1 < length; i += 2) out += static_cast<char>(nibble(text[i]) << 4 | nibble(text[i + 1]));
  return out;
}

class pg_connection final : public sql_connection {
 public:
  pg_connection(std::string url, int connect_timeout_s, PGconn* conn)
      : m_url(std::move(url)), m_timeout_s(connect_timeout_s), m_conn(conn) {}
  ~pg_connection() override { PQfinish(m_conn); }
  pg_connection(const pg_connection&) = delete;
  pg_connection& operator=(const pg_connection&) = delete;

  [[nodiscard]] std::string_view backend() const override { return "postgresql"; }

  result<sql_rows> exec(std::string_view sql, const std::vector<sql_value>& params) override {
    if (!m_in_tx) {
      if (auto c = ensure_connected(); !c) return c.err();
    }
    std::vector<std::string> storage(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    std::vector<int> lengths(params.size(), 0), formats(params.size(), 0);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const sql_value& v = params[i];
      if (std::holds_alternative<std::nullptr_t>(v)) continue;
      if (auto* n = std::get_if<int64_t>(&v)) storage[i] = std::to_string(*n);
      else if (auto* t = std::get_if<std::string>(&v)) storage[i] = *t;
      else {
        storage[i] = std::get<sql_blob>(v).bytes;
        formats[i] = 1;  // binary: bytes go as they are
      }
      values[i] = storage[i].data();
      lengths[i] = static_cast<int>(storage[i].size());
    }
    std::string text(sql);
    PGresult* res = PQexecParams(m_conn, text.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                                 lengths.data(), formats.data(), 0);
    auto st = PQresultStatus(res);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      auto err = fail(res);
      PQclear(res);
      return err;
    }
    sql_rows out;
    int rows = PQntuples(res), cols = PQnfields(res);
    out.rows.reserve(static_cast<std::size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      std::vector<std::optional<std::string>> row(static_cast<std::size_t>(cols));
      for (int c = 0; c < cols; ++c) {
        if (PQgetisnull(res, r, c)) continue;
        const char* p = PQgetvalue(res, r, c);
        int n = PQgetlength(res, r, c);
        row[static_cast<std::size_t>(c)] =
            PQftype(res, c) == bytea_oid ? decode_bytea(p, n) : std::string(p, static_cast<std::size_t>(n));
      }
      out.rows.push_back(std::move(row));
    }
    PQclear(res);
    m_retryable = false;
    return out;
  }

  status exec_script(std::string_view sql) override {
    if (!m_in_tx) {
      if (auto c = ensure_connected(); !c) return c.err();
    }
    PGresult* res = PQexec(m_conn, std::string(sql).c_str());
    auto st = PQresultStatus(res);
    status out = ok();
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) out = fail(res);
    else m_retryable = false;
    PQclear(res);
    return out;
  }

  status begin_write() override {
    if (auto c = ensure_connected(); !c) return c;
    auto r = exec("BEGIN", {});
    if (!r) return r.err();
    m_in_tx = true;
    return ok();
  }
  status commit() override {
    auto r = exec("COMMIT", {});
    m_in_tx = false;
    if (!r) return r.err();
    return ok();
  }
  void rollback() override {
    if (m_in_tx && PQstatus(m_conn) == CONNECTION_OK) {
      bool keep = m_retryable;  // a rollback must not hide why the transaction failed
      (void)exec("ROLLBACK", {});
      m_retryable = keep;
    }
    m_in_tx = false;
  }
  status lock_name(std::string_view name) override {
    auto r = exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", {std::string(name)});
    if (!r) return r.err();
    return ok();
  }
  [[nodiscard]] std::string_view for_update() const override { return " FOR UPDATE"; }
  [[nodiscard]] std::string_view skip_locked() const override { return " FOR UPDATE SKIP LOCKED"; }
  result<int64_t> now_ms() override {
    auto r = exec("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint", {});
    if (!r) return r.err();
    return r->integer(0, 0);
  }
  status notify(std::string_view payload) override {
    auto r = exec("SELECT pg_notify($1, $2)", {std::string(pg_notify_channel), std::string(payload)});
    if (!r) return r.err();
    return ok();
  }
  [[nodiscard]] bool last_error_retryable() const override { return m_retryable; }

 private:
  status ensure_connected() {
    if (m_conn && PQstatus(m_conn) == CONNECTION_OK) return ok();
    PQfinish(m_conn);
    m_conn = nullptr;
    auto c = pg_connect(m_url, m_timeout_s);
    if (!c) {
      m_retryable = true;
      return c.err();
    }
    m_conn = *c;
    return ok();
  }

  error fail(PGresult* res) {
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    std::string code = state ? state : "";
    // Connection trouble (08), serialization/deadlock (40), server shutting down (57P), out of
    // connections (53); 23505 (unique violation) is two clients inserting the same request id at
    // once: the retry reads the winner's row.
    m_retryable = PQstatus(m_conn) != CONNECTION_OK || code.rfind("08", 0) == 0 || code.rfind("40", 0) == 0 ||
                  code.rfind("57P", 0) == 0 || code.rfind("53", 0) == 0 || code == "23505";
    std::string msg = res ? PQresultErrorMessage(res) : PQerrorMessage(m_conn);
    if (msg.empty()) msg = PQerrorMessage(m_conn);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg = msg.substr(0, nl);
    return make_error("postgresql: " + msg);
  }

  std::string m_url;
  int m_timeout_s;
  PGconn* m_conn;
  bool m_in_tx = false;
  bool m_retryable = false;
};

}  // namespace

result<std::unique_ptr<sql_connection>> open_pg_connection(const std::string& url, int connect_timeout_s) {
  auto c = pg_connect(url, connect_timeout_s);
  if (!c) return c.err();
  return std::unique_ptr<sql_connection>(std::make_unique<pg_connection>(url, connect_timeout_s, *c));
}

}  // namespace ptxbench::queue
