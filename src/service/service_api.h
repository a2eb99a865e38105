#pragma once
// The evaluation service's HTTP API as plain functions from a request to a status and a JSON body,
// so the rules are testable without sockets (serve/http_server.h only routes to these). Upstream
// FlashInfer-Bench's endpoints and fields, plus /metrics; docs/service.md is the reference.
//
// Errors are {"detail": "one line"}, FastAPI's shape, with 400 for a request that is wrong, 404 for
// an unknown definition, workload or task, 503 when the job store cannot be reached (retry later).

#include <string>
#include <string_view>

#include "core/json_check.h"
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

struct api_settings {
  std::string default_target = "h200";
  submission_limits limits;
  double max_poll_s = 3600;  ///< upstream's limit on ?timeout=
};

class service_api {
 public:
  service_api(const suite& tasks, store_pool& stores, api_settings settings);

  api_response root() const;
  api_response health();
  api_response definitions() const;
  api_response definition(const std::string& name) const;
  api_response workloads(const std::string& name) const;
  api_response workload(const std::string& uuid) const;
  /// POST /evaluate, /sanitize, /profile: {task_id, normalized_solution_name}, at once.
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

  const suite& m_tasks;
  store_pool& m_stores;
  api_settings m_settings;
};

}  // namespace ptxbench::service
