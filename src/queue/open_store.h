#pragma once
// Opens the job store a `--queue` value names:
//   postgresql://user@host:port/db?...  (or postgres://)  → PostgreSQL 15, many hosts
//   sqlite:PATH, or a plain PATH                          → SQLite; a directory (existing, or a path
//                                                            ending in '/') holds the file queue.db
// The schema is created or migrated on open. store_options::mode says what opening may create (a
// mistyped path must not become a new empty queue).

#include <memory>
#include <string>

#include "core/result.h"
#include "queue/job_store.h"

namespace ptxbench::queue {

/// The file name of the SQLite queue inside a service directory.
inline constexpr const char* sqlite_queue_file = "queue.db";

result<std::unique_ptr<job_store>> open_job_store(const std::string& where, const store_options& options = {});

/// True when `where` names a PostgreSQL server.
bool is_postgresql_url(const std::string& where);

}  // namespace ptxbench::queue
