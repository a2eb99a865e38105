#pragma once
// A private PostgreSQL server (15, Debian's postgresql-15; PTXBENCH_PG_BIN names another bin
// directory) for tests and benchmarks: its own data directory under the temp dir,
// its own port on 127.0.0.1, trust authentication for the user "ptxbench", stopped and removed
// when the object goes away. It can be killed with SIGKILL (postmaster and every backend, like a
// crashed host) and started again on the same data, which is what the fault-tolerance test does.
//
// The server runs the postgres binary directly (not through pg_ctl) in its own process group, so the
// test knows its pid and nothing is left behind. As root it runs as the "postgres" user (PostgreSQL
// refuses to run as root). initdb runs once per machine user into a cached template directory (under
// a file lock, so parallel ctest processes share it); each server starts from a copy (~0.3 s instead
// of ~1.5 s). fsync is off: a killed server still keeps every acknowledged commit (the OS has the
// WAL); only an OS crash could lose them, and tests don't crash the OS.

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/result.h"

namespace ptxbench::testing {

/// Why a test server cannot be run here (binaries missing, no unprivileged user), or nullopt.
std::optional<std::string> pg_unavailable_reason();

class pg_test_server {
 public:
  static result<std::unique_ptr<pg_test_server>> start();
  ~pg_test_server();
  pg_test_server(const pg_test_server&) = delete;
  pg_test_server& operator=(const pg_test_server&) = delete;

  /// postgresql://ptxbench@127.0.0.1:PORT/DB
  [[nodiscard]] std::string url(const std::string& database = "postgres") const;
  /// Creates an empty database and returns its URL.
  result<std::string> create_database(const std::string& name);
  /// SIGKILLs the postmaster and all its children and waits until they are gone.
  void kill_hard();
  /// Starts the server again on the same data directory and port (crash recovery runs).
  status restart();
  [[nodiscard]] pid_t pid() const { return m_pid; }

 private:
  pg_test_server(std::filesystem::path dir, int port) : m_dir(std::move(dir)), m_port(port) {}
  status launch();

  std::filesystem::path m_dir;
  int m_port;
  pid_t m_pid = -1;
};

}  // namespace ptxbench::testing
