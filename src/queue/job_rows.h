#pragma once
// How a job maps onto a row of the `jobs` table, shared by both backends: the column list every
// SELECT/RETURNING uses, the row → job conversion, the one UPDATE that writes a job's mutable state,
// and the history insert.

#include <string>
#include <vector>

#include "core/result.h"
#include "queue/job.h"
#include "queue/sql_connection.h"

namespace ptxbench::queue {

/// The columns job_from_row expects, in order (for "SELECT <job_columns> FROM jobs" and RETURNING).
extern const char* const job_columns;

result<job> job_from_row(const sql_rows& rows, std::size_t row);

/// Writes every mutable field of j (state, counters, lease, times, results) to its row.
status write_job(sql_connection& conn, const job& j);

/// Appends one line to the job's history.
status add_event(sql_connection& conn, const job& j, int64_t now_ms, const std::string& event,
                 const std::string& worker, int64_t epoch, const std::string& detail);

/// Reads one job by id inside the current transaction, locking its row where the backend can.
result<std::optional<job>> select_job_for_update(sql_connection& conn, const std::string& id);

/// A list of strings (workload uuids, worker targets) as a JSON array and back.
std::string string_list_to_json(const std::vector<std::string>& workloads);
std::vector<std::string> string_list_from_json(const std::string& text);

}  // namespace ptxbench::queue
