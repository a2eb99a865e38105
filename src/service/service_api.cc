#include "service/service_api.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/build_info.h"
#include "core/text.h"
#include "service/environment.h"
#include "service/queue_view.h"
#include "queue/content_key.h"
#include "service/task_response.h"
#include "service/unserved_jobs.h"

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
  return json_response({{"detail", ptxbench::one_line(detail)}}, status);
}

api_response refusal_response(const request_refusal& r) {
  if (r.status != 422) return error_response(r.status, r.detail);
  return json_response(r.body(), 422);
}

service_api::service_api(const suite& tasks, store_pool& stores, api_settings settings)
    : m_tasks(tasks), m_stores(stores), m_settings(std::move(settings)) {}

namespace {

struct endpoint {
  const char* method;
  const char* path;
  const char* description;
};

// Upstream's endpoints (FlashInfer-Bench's serve app) and PTXBench's additions.
const std::vector<endpoint>& endpoints() {
  static const std::vector<endpoint> list = {
      {"GET", "/", "Server info and endpoint discovery"},
      {"GET", "/docs", "The API described for a person"},
      {"GET", "/health", "Server health, worker status, queue depth per state, oldest waiting job"},
      {"GET", "/definitions", "List all loaded definitions"},
      {"GET", "/definitions/{name}", "Get a definition by name"},
      {"GET", "/definitions/{name}/workloads", "List workloads for a definition"},
      {"GET", "/workloads/{uuid}", "Get a workload by UUID"},
      {"POST", "/evaluate", "Submit a solution for evaluation (returns task_id; poll /tasks/{task_id})"},
      {"POST", "/profile", "Submit a solution for the runtime instruction profile (returns task_id; poll /tasks/{task_id})"},
      {"POST", "/sanitize", "Submit a solution for compute-sanitizer checks (returns task_id; poll /tasks/{task_id})"},
      {"POST", "/debug", "Submit a solution for a source-line-focused debug report (returns task_id; poll /tasks/{task_id})"},
      {"GET", "/tasks/{task_id}", "Get task status and results (?timeout= long-polls, 0 to 3600 s)"},
      {"POST", "/tasks/batch", "Batch get multiple tasks"},
      {"GET", "/metrics", "Prometheus metrics"},
      {"POST", "/shutdown", "Stop this server (its local workers give their jobs back)"}};
  return list;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

api_response service_api::root() const {
  auto b = this_build();
  ordered_json list = ordered_json::array();
  for (const auto& e : endpoints()) list.push_back({{"method", e.method}, {"path", e.path}, {"description", e.description}});
  return json_response({{"name", "PTXBench evaluation service"},
                        {"version", b.version},
                        {"commit", b.git_commit},
                        {"upstream", "https://github.com/zhang677/PTXBench"},
                        {"docs", "/docs"},
                        {"endpoints", list}});
}

api_response service_api::docs() const {
  // A static page (upstream's Swagger UI loads its scripts from a CDN, which a GPU host often cannot
  // reach); docs/service.md is the full reference.
  std::string rows;
  for (const auto& e : endpoints())
    rows += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>\n", e.method,
                        html_escape(e.path), html_escape(e.description));
  api_response r;
  r.content_type = "text/html; charset=utf-8";
  r.text = fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>PTXBench evaluation service</title></head><body>\n"
      "<h1>PTXBench evaluation service</h1>\n<p>Upstream PTXBench's profiling-service API (FlashInfer-Bench's serve "
      "app): submit a FlashInfer Solution to an endpoint below, then long-poll <code>/tasks/{{task_id}}</code>. "
      "Requests that do not match the schema are answered 422 with a list of field problems; requests that cannot "
      "be served 400 with one line. The reference is docs/service.md in the PTXBench repository.</p>\n"
      "<table>\n<tr><th>method</th><th>path</th><th>what</th></tr>\n{}</table>\n</body></html>\n",
      rows);
  return r;
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
  // The target a submission that names none is evaluated for (null: none can be decided now), so a
  // client (`eval --remote` without --target) builds for the same one.
  auto fallback = default_target_of(*workers);  // the workers just read, not a second query
  return json_response({{"status", "ok"},
                        {"workers", ws},
                        {"queue_size", waiting},
                        {"queue", depth},
                        {"oldest_waiting", oldest},
                        {"default_target", fallback ? ordered_json(*fallback) : ordered_json(nullptr)},
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

result<std::string> service_api::default_target() {
  if (!m_settings.default_target.empty()) return m_settings.default_target;
  auto& store = m_stores.next();
  auto stats = store.stats();
  if (!stats) return stats.err();
  auto workers = view_workers(store, stats->now_ms);
  if (!workers) return workers.err();
  return default_target_of(*workers);
}

result<std::string> service_api::default_target_of(const std::vector<worker_view>& workers) const {
  if (!m_settings.default_target.empty()) return m_settings.default_target;
  auto targets = served_targets(workers);
  if (targets.size() == 1) return targets.front();
  if (targets.empty())
    return make_error("the request names no target and no live GPU worker serves this queue, so there is no default: "
                      "name one (\"target\": \"h100\") or start serve with --target");
  return make_error(fmt::format("the request names no target and the live GPU workers serve {}: name one", fmt::join(targets, ", ")));
}

api_response service_api::submit(queue::job_kind kind, std::string_view body) {
  auto sub = parse_submission(body, kind, m_tasks, [this] { return default_target(); }, m_settings.limits);
  if (!sub) return refusal_response(sub.refusal);
  auto& store = m_stores.next();
  queue::enqueue_request request{sub->spec, sub->request_id, !sub->bypass_cache};
  result<queue::enqueue_result> queued = make_error("not submitted");
  std::optional<queue::cached_verdict> hit;
  if (!sub->bypass_cache && sub->no_workloads.empty()) {
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
  if (!sub->no_workloads.empty())  // upstream accepts it and fails the task: so does this service
    queued = store.enqueue_failed(request, queue::failure_kind::no_workloads, sub->no_workloads);
  else
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
  return std::optional<ordered_json>(task_response(**j, *history, m_tasks));
}

api_response service_api::task(const std::string& id, const std::string& timeout_param) {
  // Upstream's query parameter: a number from 0 to 3600 (FastAPI answers anything else with 422).
  double timeout = 0;
  if (!timeout_param.empty()) {
    auto at = [](std::string msg, const char* type) {
      return refusal_response(request_refusal::invalid(field_problem{ordered_json::array({"query", "timeout"}), std::move(msg), type}));
    };
    try {
      std::size_t used = 0;
      timeout = std::stod(timeout_param, &used);
      if (used != timeout_param.size() || !std::isfinite(timeout)) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      return at("Input should be a valid number, unable to parse string as a number", "float_parsing");
    }
    if (timeout < 0) return at("Input should be greater than or equal to 0", "greater_than_equal");
    if (timeout > m_settings.max_poll_s)
      return at(fmt::format("Input should be less than or equal to {:g}", m_settings.max_poll_s), "less_than_equal");
  }
  if (!plausible_id(id)) return error_response(404, "Task not found: " + id);
  auto deadline = clock_type::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
  auto r = finished_or_current(id, deadline);
  if (!r) return store_unavailable(r.err());
  if (!*r) return error_response(404, "Task not found: " + id);
  return json_response(std::move(**r));
}

api_response service_api::batch(std::string_view body) {
  const std::string text(body);
  auto doc = ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded()) return refusal_response(request_refusal::invalid(invalid_json(text)));
  if (!doc.is_object()) return refusal_response(request_refusal::invalid(not_an_object()));
  std::vector<field_problem> problems;
  std::vector<std::string> ids;
  if (!doc.contains("task_ids") || doc["task_ids"].is_null()) {
    problems.push_back({ordered_json::array({"body", "task_ids"}), "Field required", "missing"});
  } else if (!doc["task_ids"].is_array()) {
    problems.push_back({ordered_json::array({"body", "task_ids"}), "Input should be a valid list", "list_type"});
  } else {
    for (std::size_t i = 0; i < doc["task_ids"].size(); ++i) {
      const auto& id = doc["task_ids"][i];
      if (!id.is_string()) {
        problems.push_back({ordered_json::array({"body", "task_ids", i}), "Input should be a valid string", "string_type"});
        continue;
      }
      ids.push_back(id.get<std::string>());
    }
  }
  // Upstream's timeout is any number: zero or less answers at once, and no limit is checked (this
  // service waits at most max_poll_s).
  double timeout = 0;
  if (doc.contains("timeout") && !doc["timeout"].is_null()) {
    if (!doc["timeout"].is_number())
      problems.push_back({ordered_json::array({"body", "timeout"}), "Input should be a valid number", "float_type"});
    else
      timeout = std::clamp(doc["timeout"].get<double>(), 0.0, m_settings.max_poll_s);
  }
  if (!problems.empty()) return refusal_response(request_refusal::invalid(std::move(problems)));
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
