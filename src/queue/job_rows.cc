#include "queue/job_rows.h"

#include <nlohmann/json.hpp>

namespace ptxbench::queue {

const char* const job_columns =
    "id, content_key, request_id, kind, task, target, solution, workloads, protocol, state, version, epoch, "
    "attempts, infra_failures, lost_leases, worker, lease_expires_ms, not_before_ms, submitted_ms, queued_ms, "
    "compiling_ms, compiled_ms, running_ms, finished_ms, artifact_sha256, verdict, failure, error, environment";

result<job> job_from_row(const sql_rows& rows, std::size_t r) {
  job j;
  std::size_t c = 0;
  auto text = [&] { return rows.text(r, c++); };
  auto integer = [&] { return rows.integer(r, c++); };
  j.id = text();
  j.content_key = text();
  j.request_id = text();
  auto kind = parse_job_kind(text());
  if (!kind) return kind.err().with_context("job " + j.id);
  j.spec.kind = *kind;
  j.spec.task = text();
  j.spec.target = text();
  j.spec.solution_json = text();
  j.spec.workloads = string_list_from_json(text());
  j.spec.protocol_json = text();
  auto state = parse_job_state(text());
  if (!state) return state.err().with_context("job " + j.id);
  j.state = *state;
  j.version = integer();
  j.epoch = integer();
  j.attempts = static_cast<int>(integer());
  j.infra_failures = static_cast<int>(integer());
  j.lost_leases = static_cast<int>(integer());
  j.worker = text();
  j.lease_expires_ms = integer();
  j.not_before_ms = integer();
  j.submitted_ms = integer();
  j.queued_ms = integer();
  j.compiling_ms = integer();
  j.compiled_ms = integer();
  j.running_ms = integer();
  j.finished_ms = integer();
  j.artifact_sha256 = text();
  j.verdict_json = text();
  auto failure = parse_failure_kind(text());
  if (!failure) return failure.err().with_context("job " + j.id);
  j.failure = *failure;
  j.error = text();
  j.environment_json = text();
  return j;
}

status write_job(sql_connection& conn, const job& j) {
  auto r = conn.exec(
      "UPDATE jobs SET state = $2, version = $3, epoch = $4, attempts = $5, infra_failures = $6, lost_leases = $7, "
      "worker = $8, lease_expires_ms = $9, not_before_ms = $10, queued_ms = $11, compiling_ms = $12, "
      "compiled_ms = $13, running_ms = $14, finished_ms = $15, artifact_sha256 = $16, verdict = $17, "
      "failure = $18, error = $19, environment = $20 WHERE id = $1",
      {j.id, std::string(to_string(j.state)), j.version, j.epoch, int64_t{j.attempts}, int64_t{j.infra_failures},
       int64_t{j.lost_leases}, j.worker, j.lease_expires_ms, j.not_before_ms, j.queued_ms, j.compiling_ms,
       j.compiled_ms, j.running_ms, j.finished_ms, j.artifact_sha256, j.verdict_json,
       std::string(to_string(j.failure)), j.error, j.environment_json});
  if (!r) return r.err();
  return ok();
}

status add_event(sql_connection& conn, const job& j, int64_t now_ms, const std::string& event,
                 const std::string& worker, int64_t epoch, const std::string& detail) {
  auto r = conn.exec(
      "INSERT INTO job_events (job_id, at_ms, event, state, worker, epoch, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      {j.id, now_ms, event, std::string(to_string(j.state)), worker, epoch, detail});
  if (!r) return r.err();
  return ok();
}

result<std::optional<job>> select_job_for_update(sql_connection& conn, const std::string& id) {
  auto rows = conn.exec(std::string("SELECT ") + job_columns + " FROM jobs WHERE id = $1" +
                            std::string(conn.for_update()),
                        {id});
  if (!rows) return rows.err();
  if (rows->empty()) return std::optional<job>{};
  auto j = job_from_row(*rows, 0);
  if (!j) return j.err();
  return std::optional<job>(std::move(*j));
}

std::string string_list_to_json(const std::vector<std::string>& workloads) { return nlohmann::json(workloads).dump(); }

std::vector<std::string> string_list_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& w : j)
    if (w.is_string()) out.push_back(w.get<std::string>());
  return out;
}

}  // namespace ptxbench::queue
