#pragma once
// A few job_store connections for the server's request threads: each store serialises its calls on
// one connection, so one store would make every request wait for every other (a long-poll holds it
// only between checks, but a PostgreSQL restart holds it for a whole retry). Requests take the
// stores in turn.

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "core/result.h"
#include "queue/job_store.h"

namespace ptxbench::service {

class store_pool {
 public:
  using opener = std::function<result<std::unique_ptr<queue::job_store>>()>;
  /// Opens `count` stores (retrying until `open` succeeds: the database may be starting).
  static result<std::unique_ptr<store_pool>> open(const opener& open, int count);
  queue::job_store& next();

 private:
  std::vector<std::unique_ptr<queue::job_store>> m_stores;
  std::atomic<std::size_t> m_next{0};
};

}  // namespace ptxbench::service
