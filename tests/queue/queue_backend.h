#pragma once
// The parameter of every store test: "sqlite" (a fresh file in a temp dir) or "postgresql" (a
// fresh database on a private server started for this test process). The PostgreSQL variant skips
// visibly when PostgreSQL 15 is not installed here.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "pg_test_server.h"
#include "queue/job_store.h"

namespace ptxbench::testing {

/// Options for tests: short polls, reaping on every lease, 50 ms back-off.
queue::store_options test_store_options();

/// A fresh empty folder under the temp dir.
std::filesystem::path make_service_temp_dir(const std::string& tag);

/// This process's PostgreSQL test server (started on first use), or an error saying why not.
result<pg_test_server*> shared_pg_server();

class QueueBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  void TearDown() override;
  /// Opens another store on the same queue (another "process": its own connection).
  std::unique_ptr<queue::job_store> open(const queue::store_options& options = test_store_options());

  std::string m_where;  ///< the --queue value of this test's fresh queue
  std::filesystem::path m_dir;
  pg_test_server* m_server = nullptr;
};

/// Names the parameter in test names: Store/QueueBackendTest.X/sqlite.
std::string backend_name(const ::testing::TestParamInfo<std::string>& info);

}  // namespace ptxbench::testing
