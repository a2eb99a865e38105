// sql_job_store: content-addressed artifacts and the workers registry.
#include <fmt/format.h>

#include "core/sha256.h"
#include "queue/job_rows.h"
#include "queue/sql_job_store.h"
#include "queue/sql_job_store_tx.h"

namespace ptxbench::queue {

status sql_job_store::put_artifact(const std::string& sha256, const std::string& bytes) {
  // Checked here, once, so every reader can trust that the name is the content's hash.
  if (sha256_hex(bytes) != sha256) return make_error("put artifact: the bytes do not hash to " + sha256);
  auto r = in_transaction<ok_t>("put artifact", [&](sql_connection& conn, int64_t now, int) -> result<ok_t> {
    auto ins = conn.exec(
        "INSERT INTO artifacts (sha256, size, data, created_ms) VALUES ($1, $2, $3, $4) ON CONFLICT (sha256) DO NOTHING",
        {sha256, static_cast<int64_t>(bytes.size()), sql_blob{bytes}, now});
    if (!ins) return ins.err();
    return ok_t{};
  });
  if (!r) return r.err();
  return ok();
}

result<std::optional<std::string>> sql_job_store::get_artifact(const std::string& sha256) {
  return read<std::optional<std::string>>(
      "get artifact", [&](sql_connection& conn) -> result<std::optional<std::string>> {
        auto rows = conn.exec("SELECT data FROM artifacts WHERE sha256 = $1", {sha256});
        if (!rows) return rows.err();
        if (rows->empty()) return std::optional<std::string>{};
        return std::optional<std::string>(rows->text(0, 0));
      });
}

status sql_job_store::register_worker(const worker_info& info) {
  if (info.id.empty()) return make_error("register worker: empty id");
  auto r = in_transaction<ok_t>("register worker", [&](sql_connection& conn, int64_t now, int) -> result<ok_t> {
    auto ins = conn.exec(
        "INSERT INTO workers (id, role, host, pid, targets, health, current_job, started_ms, last_seen_ms, info) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO UPDATE SET role = excluded.role, "
        "host = excluded.host, pid = excluded.pid, targets = excluded.targets, health = excluded.health, "
        "current_job = excluded.current_job, started_ms = excluded.started_ms, last_seen_ms = excluded.last_seen_ms, "
        "info = excluded.info",
        {info.id, std::string(to_string(info.role)), info.host, info.pid, string_list_to_json(info.targets),
         info.health, info.current_job, info.started_ms ? info.started_ms : now, now,
         info.info_json.empty() ? std::string("{}") : info.info_json});
    if (!ins) return ins.err();
    return ok_t{};
  });
  if (!r) return r.err();
  return ok();
}

status sql_job_store::worker_heartbeat(const std::string& id, const std::string& health,
                                       const std::string& current_job) {
  auto r = in_transaction<ok_t>("worker heartbeat", [&](sql_connection& conn, int64_t now, int) -> result<ok_t> {
    auto upd = conn.exec(
        "UPDATE workers SET health = $2, current_job = $3, last_seen_ms = $4 WHERE id = $1 RETURNING id",
        {id, health, current_job, now});
    if (!upd) return upd.err();
    if (upd->empty()) return make_error(fmt::format("worker '{}' is not registered", id));
    return ok_t{};
  });
  if (!r) return r.err();
  return ok();
}

result<std::vector<worker_info>> sql_job_store::workers() {
  return read<std::vector<worker_info>>("list workers", [&](sql_connection& conn) -> result<std::vector<worker_info>> {
    auto rows = conn.exec(
        "SELECT id, role, host, pid, targets, health, current_job, started_ms, last_seen_ms, info FROM workers "
        "ORDER BY id",
        {});
    if (!rows) return rows.err();
    std::vector<worker_info> out;
    for (std::size_t r = 0; r < rows->size(); ++r) {
      worker_info w;
      w.id = rows->text(r, 0);
      auto role = parse_worker_role(rows->text(r, 1));
      if (!role) return role.err();
      w.role = *role;
      w.host = rows->text(r, 2);
      w.pid = rows->integer(r, 3);
      w.targets = string_list_from_json(rows->text(r, 4));
      w.health = rows->text(r, 5);
      w.current_job = rows->text(r, 6);
      w.started_ms = rows->integer(r, 7);
      w.last_seen_ms = rows->integer(r, 8);
      w.info_json = rows->text(r, 9);
      out.push_back(std::move(w));
    }
    return out;
  });
}

}  // namespace ptxbench::queue
