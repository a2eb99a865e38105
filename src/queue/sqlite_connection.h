#pragma once
// The SQLite side of sql_connection: one database file shared by many local processes. WAL mode so
// readers never block the writer, a busy timeout so writers queue instead of failing, and
// synchronous=NORMAL, which in WAL mode survives any process crash (kill -9); only a power loss can
// undo the last commits, and an undone commit is re-done, never doubled (see docs/service.md).

#include <filesystem>
#include <memory>

#include "core/result.h"
#include "queue/sql_connection.h"

namespace ptxbench::queue {

/// Opens (creating if needed) the database file and sets its pragmas.
result<std::unique_ptr<sql_connection>> open_sqlite_connection(const std::filesystem::path& file,
                                                                int busy_timeout_ms);

}  // namespace ptxbench::queue
