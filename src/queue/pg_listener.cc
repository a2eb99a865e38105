#include "queue/pg_listener.h"

#include <poll.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <libpq-fe.h>

#include "queue/pg_connect.h"
#include "queue/pg_connection.h"

namespace ptxbench::queue {
namespace {

class pg_listener final : public feed_source {
 public:
  pg_listener(std::string url, int timeout_s, change_feed& feed)
      : m_url(std::move(url)), m_timeout_s(timeout_s), m_feed(feed), m_thread([this] { run(); }) {}
  ~pg_listener() override {
    m_stop = true;
    m_thread.join();
  }
  pg_listener(const pg_listener&) = delete;
  pg_listener& operator=(const pg_listener&) = delete;

 private:
  void run() {
    int retry_ms = 50;
    while (!m_stop) {
      PGconn* conn = listen();
      if (!conn) {
        sleep_unless_stopped(retry_ms);
        retry_ms = std::min(retry_ms * 2, 1000);
        continue;
      }
      retry_ms = 50;
      m_feed.bump();  // notifications may have been missed while disconnected: let waiters re-check
      pump(conn);
      PQfinish(conn);
    }
  }

  PGconn* listen() {
    auto c = pg_connect(m_url, m_timeout_s);
    if (!c) return nullptr;
    PGresult* res = PQexec(*c, (std::string("LISTEN ") + pg_notify_channel).c_str());
    bool listening = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    if (!listening) {
      PQfinish(*c);
      return nullptr;
    }
    return *c;
  }

  /// Delivers notifications until the connection breaks or the listener is stopped.
  void pump(PGconn* conn) {
    while (!m_stop) {
      pollfd fd{PQsocket(conn), POLLIN, 0};
      if (fd.fd < 0) return;
      int ready = ::poll(&fd, 1, 100);  // wakes regularly to notice m_stop
      if (ready < 0) continue;
      if (ready == 0) continue;
      if (!PQconsumeInput(conn)) return;  // the server went away
      bool any = false;
      while (PGnotify* n = PQnotifies(conn)) {
        any = true;
        PQfreemem(n);
      }
      if (any) m_feed.bump();
      if (PQstatus(conn) != CONNECTION_OK) return;
    }
  }

  void sleep_unless_stopped(int ms) {
    for (int waited = 0; waited < ms && !m_stop; waited += 10) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  std::string m_url;
  int m_timeout_s;
  change_feed& m_feed;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

}  // namespace

std::unique_ptr<feed_source> start_pg_listener(const std::string& url, int connect_timeout_s, change_feed& feed) {
  return std::make_unique<pg_listener>(url, connect_timeout_s, feed);
}

}  // namespace ptxbench::queue
