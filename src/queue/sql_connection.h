#pragma once
// The little the job store needs from a SQL database, so one store implementation (sql_job_store)
// runs on SQLite and on PostgreSQL. Each backend says how it opens a write transaction, locks rows,
// tells time and wakes other processes; statements are written once, with $1..$N placeholders.
//
// Not thread-safe: the store serialises calls on one connection with its own mutex.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.h"

namespace ptxbench::queue {

/// Bytes bound as a BLOB / BYTEA (a std::string param is bound as text).
struct sql_blob {
  std::string bytes;
};
using sql_value = std::variant<std::nullptr_t, int64_t, std::string, sql_blob>;

/// A result set as text (numbers in decimal, BLOB/BYTEA as raw bytes); nullopt is SQL NULL.
struct sql_rows {
  std::vector<std::vector<std::optional<std::string>>> rows;

  [[nodiscard]] bool empty() const { return rows.empty(); }
  [[nodiscard]] std::size_t size() const { return rows.size(); }
  /// The cell's text, or "" for NULL.
  [[nodiscard]] std::string text(std::size_t row, std::size_t col) const;
  /// The cell as an integer, or 0 for NULL / not a number.
  [[nodiscard]] int64_t integer(std::size_t row, std::size_t col) const;
};

class sql_connection {
 public:
  virtual ~sql_connection() = default;
  [[nodiscard]] virtual std::string_view backend() const = 0;

  /// Runs one statement with $1..$N placeholders.
  virtual result<sql_rows> exec(std::string_view sql, const std::vector<sql_value>& params = {}) = 0;
  /// Runs several ;-separated statements without parameters (schema migrations).
  virtual status exec_script(std::string_view sql) = 0;

  /// Opens a transaction that will write: SQLite takes the write lock now (BEGIN IMMEDIATE), so two
  /// processes never deadlock upgrading a read; PostgreSQL locks rows as they are selected.
  virtual status begin_write() = 0;
  virtual status commit() = 0;
  virtual void rollback() = 0;

  /// Serialises transactions that use the same name until commit (PostgreSQL: an advisory
  /// transaction lock; SQLite: nothing, BEGIN IMMEDIATE already serialises every writer).
  virtual status lock_name(std::string_view name) = 0;
  /// Appended to a SELECT whose rows the transaction will update (" FOR UPDATE" or "").
  [[nodiscard]] virtual std::string_view for_update() const = 0;
  /// Appended to the SELECT that picks a job to lease (" FOR UPDATE SKIP LOCKED" or "").
  [[nodiscard]] virtual std::string_view skip_locked() const = 0;

  /// The clock every lease is measured by: PostgreSQL's (one clock for all hosts), SQLite's host's.
  virtual result<int64_t> now_ms() = 0;
  /// Wakes listeners in other processes when the open transaction commits (PostgreSQL NOTIFY).
  virtual status notify(std::string_view payload) = 0;

  /// Was the last error one that a retry may cure (busy, lock conflict, lost connection)?
  [[nodiscard]] virtual bool last_error_retryable() const = 0;
};

/// Rewrites $1..$N as ?1..?N for SQLite, leaving quoted text alone.
std::string sqlite_placeholders(std::string_view sql);

}  // namespace ptxbench::queue
