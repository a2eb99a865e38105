#include "service/service_api.h"

#include <chrono>
#include <set>

#include <fmt/format.h>

#include "core/build_info.h"
#include "service/environment.h"
#include "service/queue_view.h"
#include "service/task_response.h"
#include "queue/content_key.h"

namespace ptxbench::service {
namespace {

using clock_type = std::chrono::steady_clock;

api_response json_response(ordered_json body, int status = 200) { return {status, std::move(body), "", "application/json"}; }

api_response store_unavailable(const error& e) {
  return error_response(503, "the job store is unavailable, retry later: " + e.message);
}

/// A task id is 32 lowercase hex digits; anything else is unknown without asking the store.
bool plausible_id(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

const ptxbench::task* task_named(const suite& s, const std::string& name) { return s.find_task(name); }

}  // namespace

api_response error_response(int status, const std::string& detail) {
  std::string one_line = detail;
  for (char& c : one_line)
    if (c == '\n' || c == '\r') c = ' ';
  return json_response({{"detail", one_line}}, status);
}

service_api::service_api(const suite& tasks, store_pool& stores, api_settings settings)
    : m_tasks(tasks), m_stores(stores), m_settings(std::move(settings)) {}

api_response service_api::root() const {
  auto b = this_build();
  ordered_json endpoints = ordered_json::array();
  for (auto [method, path, what] : std::initializer_list<std::tuple<const char*, const char*, const char*>>{
           {"GET", "/", "server info and endpoint discovery"},
           {"GET", "/health", "workers, queue depth per state, oldest waiting job"},
           {"GET", "/definitions", "every definition (task)"},
           {"GET", "/definitions/{name}", "one definition"},
           {"GET", "/definitions/{name}/workloads", "a definition's workloads"},
           {"GET", "/workloads/{uuid}", "one workload"},
           {"POST", "/evaluate", "submit a solution for evaluation"},
           {"POST", "/sanitize", "submit a solution for the sanitizer stage"},
           {"POST", "/profile", "submit a solution for the runtime instruction profile"},
           {"GET", "/tasks/{task_id}", "task status and results (?timeout= long-polls)"},
           {"POST", "/tasks/batch", "several tasks at once"},
           {"GET", "/metrics", "Prometheus metrics"}})
    endpoints.push_back({{"method", method}, {"path", path}, {"description", what}});
  return json_response({{"name", "PTXBench evaluation service"},
                        {"version", b.version},
                        {"commit", b.git_commit},
                        {"endpoints", endpoints}});
}

api_response service_api::health() {
  auto& store = m_stores.next();
  auto stats = store.stats();
  if (!stats) return store_unavailable(stats.err());
  auto workers = view_workers(store, stats->now_ms);
  if (!workers) return store_unavailable(workers.err());
  ordered_json ws = ordered_json::array();
  for (const auto& w : *workers)
    ws.push_back({{"device", w.device},
                  {"healthy", w.healthy},
                  {"id", w.info.id},
                  {"role", std::string(queue::to_string(w.info.role))},
                  {"host", w.info.host},
                  {"pid", w.info.pid},
                  {"gpu_kinds", w.info.targets},
                  {"health", w.info.health},
                  {"alive", w.alive},
                  {"current_job", w.info.current_job},
                  {"last_seen_s", w.last_seen_s}});
  ordered_json depth = ordered_json::object();
  for (const auto& [state, n] : stats->depth) depth[std::string(queue::to_string(state))] = n;
  int64_t waiting = stats->depth[queue::job_state::queued] + stats->depth[queue::job_state::compiled];
  ordered_json oldest = nullptr;
  if (!stats->oldest_waiting_id.empty())
    oldest = {{"task_id", stats->oldest_waiting_id},
              {"waiting_s", (stats->now_ms - stats->oldest_waiting_since_ms) / 1000.0}};
  return json_response({{"status", "ok"},
                        {"workers", ws},
                        {"queue_size", waiting},
                        {"queue", depth},
                        {"oldest_waiting", oldest},
                        {"backend", std::string(store.backend())}});
}

api_response service_api::definitions() const {
  ordered_json out = ordered_json::array();
  for (const auto& t : m_tasks.tasks) out.push_back({{"name", t.name}, {"description", t.def.description}});
  return json_response(out);
}

api_response service_api::definition(const std::string& name) const {
  const ptxbench::task* t = task_named(m_tasks, name);
  if (!t) return error_response(404, "Definition not found: " + name);
  return json_response(to_json(t->def));
}

api_response service_api::workloads(const std::string& name) const {
  const ptxbench::task* t = task_named(m_tasks, name);
  if (!t) return error_response(404, "Definition not found: " + name);
  return json_response(ordered_json::array({to_json(t->wl)}));
}

api_response service_api::workload(const std::string& uuid) const {
  for (const auto& t : m_tasks.tasks)
    if (t.wl.uuid == uuid) return json_response(to_json(t.wl));
  return error_response(404, "Workload not found: " + uuid);
}

result<std::vector<queue::run_environment>> service_api::current_environments(const std::string& target,
                                                                                bool check_only) {
  auto workers = m_stores.next().workers();
  if (!workers) return workers.err();
  std::vector<queue::run_environment> out;
  std::set<std::string> seen;
  for (const auto& w : *workers) {
    if (w.role == queue::worker_role::gpu &&
        (check_only || std::find(w.targets.begin(), w.targets.end(), target) == w.targets.end()))
      continue;
    auto info = ordered_json::parse(w.info_json, nullptr, false);
    if (!info.is_object() || !info.contains("environment")) continue;
    auto env = environment_from_json(info["environment"]);
    if (env && seen.insert(queue::environment_key(*env)).second) out.push_back(*env);
  }
  return out;
}

api_response service_api::submit(queue::job_kind kind, std::string_view body) {
  auto sub = parse_submission(body, kind, m_tasks, m_settings.default_target, m_settings.limits);
  if (!sub) return error_response(400, sub.err().message);
  auto& store = m_stores.next();
  queue::enqueue_request request{sub->spec, sub->request_id, !sub->bypass_cache};
  result<queue::enqueue_result> queued = make_error("not submitted");
  std::optional<queue::cached_verdict> hit;
  if (!sub->bypass_cache) {
    auto key = queue::content_key(sub->spec);
    if (!key) return error_response(400, key.err().message);
    auto protocol = read_protocol(sub->spec.protocol_json);
    auto envs = current_environments(sub->spec.target, protocol && protocol->check_only);
    if (!envs) return store_unavailable(envs.err());
    for (const auto& env : *envs) {
      auto c = store.cached(*key, env);
      if (!c) return store_unavailable(c.err());
      if (*c && (!hit || (*c)->evaluated_ms > hit->evaluated_ms)) hit = **c;
    }
  }
  queued = hit ? store.enqueue_cached(request, *hit) : store.enqueue(request);
  if (!queued) {
    // A request id reused for other content is the client's mistake; anything else is the store.
    if (queued.err().message.find("already used") != std::string::npos) return error_response(400, queued.err().message);
    return store_unavailable(queued.err());
  }
  return json_response({{"task_id", queued->queued.id}, {"normalized_solution_name", sub->normalized_solution_name}});
}

result<std::optional<ordered_json>> service_api::finished_or_current(const std::string& id,
                                                                     clock_type::time_point deadline) {
  auto& store = m_stores.next();
  auto j = store.get(id);
  if (!j) return j.err();
  while (*j && !is_terminal((**j).state)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
    if (left <= 0) break;
    j = store.wait_for_change(id, (**j).version, std::min<int64_t>(left, 1000));
    if (!j) return j.err();
  }
  if (!*j) return std::optional<ordered_json>{};
  auto history = store.history(id);
  if (!history) return history.err();
  return std::optional<ordered_json>(task_response(**j, *history, m_tasks.find_task((**j).spec.task)));
}

api_response service_api::task(const std::string& id, const std::string& timeout_param) {
  double timeout = 0;
  if (!timeout_param.empty()) {
    try {
      std::size_t used = 0;
      timeout = std::stod(timeout_param, &used);
      if (used != timeout_param.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      return error_response(400, "timeout: expected a number of seconds, got '" + timeout_param + "'");
    }
    if (!(timeout >= 0) || timeout > m_settings.max_poll_s)
      return error_response(400, fmt::format("timeout: expected 0 to {:g} seconds", m_settings.max_poll_s));
  }
  if (!plausible_id(id)) return error_response(404, "Task not found: " + id);
  auto deadline = clock_type::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
  auto r = finished_or_current(id, deadline);
  if (!r) return store_unavailable(r.err());
  if (!*r) return error_response(404, "Task not found: " + id);
  return json_response(std::move(**r));
}

api_response service_api::batch(std::string_view body) {
  auto doc = ordered_json::parse(body, nullptr, false);
  if (doc.is_discarded()) return error_response(400, "the request body is not valid JSON");
  if (!doc.is_object() || !doc.contains("task_ids") || !doc["task_ids"].is_array())
    return error_response(400, "task_ids: expected an array of task ids");
  double timeout = 0;
  if (doc.contains("timeout") && !doc["timeout"].is_null()) {
    if (!doc["timeout"].is_number()) return error_response(400, "timeout: expected a number of seconds");
    timeout = doc["timeout"].get<double>();
    if (!(timeout >= 0) || timeout > m_settings.max_poll_s)
      return error_response(400, fmt::format("timeout: expected 0 to {:g} seconds", m_settings.max_poll_s));
  }
  std::vector<std::string> ids;
  for (const auto& id : doc["task_ids"]) {
    if (!id.is_string()) return error_response(400, "task_ids: expected an array of strings");
    ids.push_back(id.get<std::string>());
  }
  if (ids.size() > 10000) return error_response(400, "task_ids: more than 10000 ids in one batch");
  // Unknown ids first (upstream answers 404 before waiting).
  auto& store = m_stores.next();
  for (const auto& id : ids) {
    if (!plausible_id(id)) return error_response(404, "Task not found: " + id);
    auto j = store.get(id);
    if (!j) return store_unavailable(j.err());
    if (!*j) return error_response(404, "Task not found: " + id);
  }
  auto deadline = clock_type::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
  ordered_json out = ordered_json::array();
  for (const auto& id : ids) {
    auto r = finished_or_current(id, deadline);
    if (!r) return store_unavailable(r.err());
    if (!*r) return error_response(404, "Task not found: " + id);
    out.push_back(std::move(**r));
  }
  return json_response(out);
}

api_response service_api::metrics() {
  auto& store = m_stores.next();
  auto stats = store.stats();
  if (!stats) return store_unavailable(stats.err());
  auto jobs = store.summaries(0);
  if (!jobs) return store_unavailable(jobs.err());
  auto workers = view_workers(store, stats->now_ms);
  if (!workers) return store_unavailable(workers.err());
  api_response r;
  r.text = prometheus_metrics(*stats, *jobs, *workers);
  r.content_type = "text/plain; version=0.0.4";
  return r;
}

}  // namespace ptxbench::service
