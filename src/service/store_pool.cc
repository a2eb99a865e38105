#include "service/store_pool.h"

namespace ptxbench::service {

result<std::unique_ptr<store_pool>> store_pool::open(const opener& open, int count) {
  auto pool = std::make_unique<store_pool>();
  for (int i = 0; i < std::max(1, count); ++i) {
    auto s = open();
    if (!s) return s.err();
    pool->m_stores.push_back(std::move(*s));
  }
  return pool;
}

queue::job_store& store_pool::next() { return *m_stores[m_next++ % m_stores.size()]; }

}  // namespace ptxbench::service
