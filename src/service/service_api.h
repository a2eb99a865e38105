#pragma once
// The evaluation service's HTTP API as plain functions from a request to a status and a JSON body,
// so the rules are testable without sockets (service/http_server.h only routes to these). Upstream
// FlashInfer-Bench's endpoints and fields, plus /metrics; docs/service.md is the reference.
//
// Errors are FastAPI's: 422 {"detail": [{type, loc, msg}, ...]} for a request that does not match the
// endpoint's schema, {"detail": "one line"} with 400 for one that cannot be served, 404 for an
// unknown definition, workload or task, 503 when the job store cannot be reached (retry later).

#include <string>
#include <string_view>

#include "core/json_check.h"
#include "service/queue_view.h"
#include "service/request_problem.h"
#include "service/store_pool.h"
#include "service/submission.h"
#include "queue/job_store.h"
#include "suite/task.h"

namespace ptxbench::service {

struct api_response {
  int status = 200;
  ordered_json body;         ///< JSON responses
  std::string text;          ///< non-JSON responses (Prometheus text)
  std::string content_type = "application/json";
};

api_response error_response(int status, const std::string& detail);
/// 400 with the one line, or 422 with the field list.
api_response refusal_response(const request_refusal& r);

struct api_settings {
  /// The target of a request that names none: set by `serve --target` or from the local GPU. ""
  /// when neither says: then the one target the live GPU workers serve, and a 400 asking for a
  /// "target" when they serve none or several.
  std::string default_target;
  submission_limits limits;
  double max_poll_s = 3600;  ///< upstream's limit on ?timeout=
};

class service_api {
 public:
  service_api(const suite& tasks, store_pool& stores, api_settings settings);

  api_response root() const;
  /// GET /docs: the API described for a person (upstream serves Swagger UI there).
  api_response docs() const;
  api_response health();
  api_response definitions() const;
  api_response definition(const std::string& name) const;
  api_response workloads(const std::string& name) const;
  api_response workload(const std::string& uuid) const;
  /// POST /evaluate, /sanitize, /profile, /debug: {task_id, normalized_solution_name}, at once.
  api_response submit(queue::job_kind kind, std::string_view body);
  /// GET /tasks/{id}?timeout=S: waits up to S seconds for the task to finish.
  api_response task(const std::string& id, const std::string& timeout_param);
  /// POST /tasks/batch {task_ids, timeout}: every task in input order, after waiting for all up to timeout.
  api_response batch(std::string_view body);
  api_response metrics();

 private:
  /// The TaskResponse for a job id after waiting until it is finished or the deadline passes.
  result<std::optional<ordered_json>> finished_or_current(const std::string& id,
                                                          std::chrono::steady_clock::time_point deadline);
  /// The environments that would evaluate a job of this target now: every registered CPU worker's
  /// and every registered GPU worker's of that target (for the result cache).
  result<std::vector<queue::run_environment>> current_environments(const std::string& target, bool check_only);
  /// The target for a request that names none (api_settings::default_target, else the one kind the
  /// live GPU workers serve); default_target_of decides it from workers already read.
  result<std::string> default_target();
  result<std::string> default_target_of(const std::vector<worker_view>& workers) const;

  const suite& m_tasks;
  store_pool& m_stores;
  api_settings m_settings;
};

}  // namespace ptxbench::service
