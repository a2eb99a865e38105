#pragma once
// Opening a libpq connection the way every PTXBench connection is opened (the store's and the
// LISTEN thread's): a connect timeout, an application name, server notices silenced.

#include <string>

#include <libpq-fe.h>

#include "core/result.h"

namespace ptxbench::queue {

/// Connects or returns a one-line error (the password, if the URL has one, is never in it).
result<PGconn*> pg_connect(const std::string& url, int connect_timeout_s);

}  // namespace ptxbench::queue
