#include "service/remote_evaluator.h"

#include <set>

#include <chrono>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "suite/trace.h"
#include "verdict/verdict_json.h"

namespace ptxbench::service {
namespace {

std::string fresh_request_id() {
  std::random_device rd;
  return fmt::format("ptxbench-client-{:08x}{:08x}{:08x}", rd(), rd(), rd());
}

class remote_evaluator final : public evaluator {
 public:
  remote_evaluator(client_settings settings, remote_options options)
      : m_settings(std::move(settings)), m_options(std::move(options)) {}

  result<verdict> evaluate(const eval_request& request) override {
    auto client = service_client::create(m_settings);
    if (!client) return client.err();
    remote_options o = m_options;
    if (request.target) o.target = request.target->name;
    auto response = evaluate_remotely(**client, request.candidate, request.run_on_gpu, o);
    if (!response) return response.err();
    return verdict_of_response(*response);
  }

 private:
  client_settings m_settings;
  remote_options m_options;
};

}  // namespace

result<verdict> verdict_of_response(const ordered_json& r) {
  std::string status = r.value("status", "");
  const ordered_json extra = r.value("ptxbench", ordered_json::object());
  if (status == "failed")
    return make_error("the service could not evaluate it: " + r.value("error", std::string("no reason given")));
  if (status != "completed") return make_error(fmt::format("task {} is {}, not finished", r.value("task_id", ""), status));
  const ordered_json v = extra.value("verdict", ordered_json());
  if (!v.is_object()) return make_error(fmt::format("task {} is completed but carries no verdict", r.value("task_id", "")));
  return verdict_from_json(v);
}

result<ordered_json> evaluate_remotely(service_client& client, const solution& candidate, bool run_on_gpu,
                                       const remote_options& o, int* refused_status) {
  ordered_json body = {{"solution", to_json(candidate)}, {"request_id", fresh_request_id()}};
  if (!o.target.empty()) body["target"] = o.target;
  if (!run_on_gpu) body["check_only"] = true;
  if (o.bypass_cache) body["cache"] = "bypass";
  const std::string endpoint = "/" + std::string(queue::to_string(o.kind));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.max_wait_s);
  for (int submissions = 0; submissions < 5; ++submissions) {
    auto submitted = client.post(endpoint, body, 60);
    if (!submitted) return submitted.err();
    if (submitted->status != 200 || !submitted->body.is_object() || !submitted->body.contains("task_id")) {
      if (refused_status && submitted->status >= 400 && submitted->status < 500) *refused_status = submitted->status;
      return make_error("the service refused the submission: " + reply_detail(*submitted));
    }
    const std::string id = submitted->body["task_id"].get<std::string>();
    for (;;) {
      if (std::chrono::steady_clock::now() > deadline)
        return make_error(fmt::format("task {} did not finish within {:g} s", id, o.max_wait_s));
      auto polled = client.get(fmt::format("/tasks/{}?timeout={:g}", id, o.poll_slice_s), o.poll_slice_s + 30);
      if (!polled) return polled.err();
      if (polled->status == 404) break;  // the server lost the task (a reset store): submit again
      if (polled->status != 200 || !polled->body.is_object())
        return make_error(fmt::format("polling task {}: {}", id, reply_detail(*polled)));
      std::string status = polled->body.value("status", "");
      if (status == "completed" || status == "failed") return polled->body;
    }
  }
  return make_error("the service kept losing the task");
}

result<std::string> served_target(service_client& client) {
  auto reply = client.get("/health", 30);
  if (!reply) return reply.err().with_context("asking the service which GPUs it has");
  const ordered_json& doc = reply->body;
  if (reply->status != 200 || !doc.is_object() || !doc.contains("workers"))
    return make_error(fmt::format("the service's /health answered {} without a worker list", reply->status));
  // The service's own default (its --target, its local GPUs, or the one kind its live GPU workers
  // serve); a service that does not say is asked through its workers' kinds.
  if (doc.contains("default_target") && doc["default_target"].is_string()) return doc["default_target"].get<std::string>();
  std::set<std::string> kinds;
  for (const auto& w : doc["workers"])
    if (w.value("role", "") == "gpu" && w.value("alive", true))
      for (const auto& k : w.value("gpu_kinds", ordered_json::array()))
        if (k.is_string()) kinds.insert(k.get<std::string>());
  if (kinds.empty()) return make_error("the service has no live GPU worker to name a target; pass --target");
  if (kinds.size() > 1)
    return make_error(fmt::format("the service's GPU workers serve {}; pass --target", fmt::join(kinds, " and ")));
  return *kinds.begin();
}

std::unique_ptr<evaluator> make_remote_evaluator(client_settings settings, remote_options options) {
  return std::make_unique<remote_evaluator>(std::move(settings), std::move(options));
}

}  // namespace ptxbench::service
