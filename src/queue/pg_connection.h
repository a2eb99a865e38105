#pragma once
// The PostgreSQL side of sql_connection, on plain libpq (libpq-dev). Not libpqxx: the store needs
// a dozen calls (connect, exec with parameters, notifications), libpqxx 6.4 in bookworm reports
// errors by exception, which the store would have to catch at every call to keep its no-exceptions
// contract, and it adds a shared library the GPU hosts would also need.
//
// A lost connection (the server restarted, the network blinked) is reported as a retryable error
// and re-established at the next transaction; statements are not prepared, so nothing is lost with it.

#include <memory>
#include <string>

#include "core/result.h"
#include "queue/sql_connection.h"

namespace ptxbench::queue {

/// Connects to `url` (postgresql://user@host:port/db?...). The first connection must succeed;
/// later losses are reconnected on demand.
result<std::unique_ptr<sql_connection>> open_pg_connection(const std::string& url, int connect_timeout_s);

/// The channel every job change is NOTIFYed on (payload "<state>:<job id>").
inline constexpr const char* pg_notify_channel = "ptxbench_queue";

}  // namespace ptxbench::queue
