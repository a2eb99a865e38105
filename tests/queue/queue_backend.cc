#include "queue_backend.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include <fmt/format.h>

#include "queue/open_store.h"

namespace ptxbench::testing {

queue::store_options test_store_options() {
  queue::store_options o;
  o.poll_interval_ms = 10;
  o.reap_interval_ms = 0;
  o.policy.backoff_base_ms = 50;
  o.policy.backoff_max_ms = 400;
  o.connect_timeout_s = 2;
  o.outage_grace_ms = 0;  // tests that want the post-outage grace set it
  return o;
}

std::filesystem::path make_service_temp_dir(const std::string& tag) {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() /
             fmt::format("ptxbench-service-{}-{:08x}{:08x}", tag, rd(), rd());
  std::filesystem::create_directories(dir);
  return dir;
}

result<pg_test_server*> shared_pg_server() {
  static std::unique_ptr<pg_test_server> server;
  static std::string failure;
  if (server) return server.get();
  if (!failure.empty()) return make_error(failure);
  auto started = pg_test_server::start();
  if (!started) {
    failure = started.err().message;
    return started.err();
  }
  server = std::move(*started);
  return server.get();
}

void QueueBackendTest::SetUp() {
  m_dir = make_service_temp_dir("store");
  if (GetParam() == "postgresql") {
    if (auto reason = pg_unavailable_reason()) GTEST_SKIP() << "PostgreSQL backend not tested: " << *reason;
    auto server = shared_pg_server();
    ASSERT_TRUE(server) << server.err().message;
    m_server = *server;
    static std::atomic<int> counter{0};
    auto url = m_server->create_database(fmt::format("t{}_{}", ::getpid(), counter++));
    ASSERT_TRUE(url) << url.err().message;
    m_where = *url;
  } else {
    m_where = (m_dir / "queue").string() + "/";
  }
}

void QueueBackendTest::TearDown() {
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
}

std::unique_ptr<queue::job_store> QueueBackendTest::open(const queue::store_options& options) {
  auto store = queue::open_job_store(m_where, options);
  EXPECT_TRUE(store) << (store ? "" : store.err().message);
  return store ? std::move(*store) : nullptr;
}

std::string backend_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

}  // namespace ptxbench::testing
