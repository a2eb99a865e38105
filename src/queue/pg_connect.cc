#include "queue/pg_connect.h"

namespace ptxbench::queue {

result<PGconn*> pg_connect(const std::string& url, int connect_timeout_s) {
  std::string timeout = std::to_string(connect_timeout_s);
  // Later keywords override earlier ones, and dbname is expanded in place: the URL's own
  // connect_timeout or application_name, if it has them, win over these defaults.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), "ptxbench", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 1);
  if (!conn) return make_error("postgresql: out of memory while connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    PQfinish(conn);
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg = msg.substr(0, nl);  // the first line says why
    return make_error("postgresql: cannot connect: " + msg);
  }
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);  // "already exists, skipping" etc.
  return conn;
}

}  // namespace ptxbench::queue
