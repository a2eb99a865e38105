#pragma once
// The queue's schema, versioned. Each backend has an ordered list of migrations (migration i takes
// the schema from version i to i+1); `schema_version` records which have been applied and when.
// Opening a store applies the missing ones in one transaction, under a lock, so several processes
// starting at once migrate exactly once; a database newer than this build is refused, not guessed at.

#include <string>
#include <vector>

#include "core/result.h"
#include "queue/sql_connection.h"

namespace ptxbench::queue {

const std::vector<std::string>& sqlite_migrations();
const std::vector<std::string>& pg_migrations();

/// Brings the database to the newest schema; returns the version it is at.
result<int> apply_migrations(sql_connection& conn, const std::vector<std::string>& migrations);

}  // namespace ptxbench::queue
