#pragma once
// LISTEN/NOTIFY for the PostgreSQL store: a thread with its own connection that LISTENs on the
// queue's channel and bumps a change_feed for every notification, so an idle worker wakes within
// a round trip of an enqueue instead of at its next poll. It reconnects (and re-LISTENs) by itself
// after the server goes away; meanwhile the waiters' polling keeps everything moving.

#include <memory>
#include <string>

#include "queue/change_feed.h"

namespace ptxbench::queue {

/// Starts the listener thread; it stops (and closes its connection) when the result is destroyed.
std::unique_ptr<feed_source> start_pg_listener(const std::string& url, int connect_timeout_s, change_feed& feed);

}  // namespace ptxbench::queue
