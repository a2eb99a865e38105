// The HTTP API end to end in one process (serve/http_server.h over a SQLite queue, fake-evaluator
// worker loops): upstream's endpoints and field names, long-poll and batch, the result cache, and
// every kind of bad request answered with its documented error while the queue stays unchanged.
#include <gtest/gtest.h>

#include <unistd.h>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "service/task_response.h"
#include "service_fixture.h"

namespace ptxbench::testing {
namespace {

using service::http_reply;

http_reply post_raw(const std::string& url_port, const std::string& path, const std::string& body,
                    const std::string& token = "") {
  httplib::Client cli("127.0.0.1", std::stoi(url_port));
  cli.set_read_timeout(30);
  if (!token.empty()) cli.set_bearer_token_auth(token);
  auto res = cli.Post(path.c_str(), body, "application/json");
  http_reply r;
  if (!res) return r;
  r.status = res->status;
  r.body = ordered_json::parse(res->body, nullptr, false);
  return r;
}

http_reply get_raw(int port, const std::string& path, const std::string& token = "") {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(30);
  if (!token.empty()) cli.set_bearer_token_auth(token);
  auto res = cli.Get(path.c_str());
  http_reply r;
  if (!res) return r;
  r.status = res->status;
  r.body = ordered_json::parse(res->body, nullptr, false);
  return r;
}

std::string submit(service::service_client& c, const ordered_json& body, const std::string& endpoint = "/evaluate") {
  auto r = c.post(endpoint, body);
  EXPECT_TRUE(r && r->status == 200) << (r ? r->body.dump() : r.err().message);
  if (!r || r->status != 200) return "";
  EXPECT_EQ(r->body.size(), 2u) << "exactly {task_id, normalized_solution_name}";
  return r->body["task_id"].get<std::string>();
}

ordered_json wait(service::service_client& c, const std::string& id) {
  auto r = c.get("/tasks/" + id + "?timeout=20", 40);
  EXPECT_TRUE(r && r->status == 200);
  return r ? r->body : ordered_json();
}

/// Upstream's TaskResponse keys, and the trace's, with the status rule for correctness/performance.
void expect_upstream_shape(const ordered_json& t) {
  static const std::set<std::string> allowed = {"task_id", "kind", "status", "definition", "solution",
                                                "traces", "logs", "error", "ptxbench"};
  for (const auto& [k, v] : t.items()) {
    EXPECT_TRUE(allowed.count(k)) << "unexpected field " << k;
    EXPECT_FALSE(v.is_null()) << k << ": null fields are left out";
  }
  for (const char* k : {"task_id", "kind", "status", "definition", "solution"}) EXPECT_TRUE(t.contains(k)) << k;
  if (!t.contains("traces")) return;
  for (const auto& tr : t["traces"]) {
    for (const char* k : {"definition", "workload", "solution", "evaluation"}) EXPECT_TRUE(tr.contains(k)) << k;
    const auto& e = tr["evaluation"];
    for (const char* k : {"status", "environment", "timestamp", "log"}) EXPECT_TRUE(e.contains(k)) << k;
    std::string st = e["status"];
    // Upstream writes absent blocks as null inside a trace (pydantic's model_dump), so: non-null exactly when due.
    auto present = [&](const char* k) { return e.contains(k) && !e[k].is_null(); };
    EXPECT_EQ(present("correctness"), st == "PASSED" || st == "INCORRECT_NUMERICAL") << st;
    EXPECT_EQ(present("performance"), st == "PASSED") << st;
    if (st == "PASSED") {
      for (const char* k : {"latency_ms", "reference_latency_ms", "speedup_factor"}) EXPECT_TRUE(e["performance"].contains(k));
    }
  }
}

TEST(ServeApi, SubmitLongPollAndBatchSpeakUpstreamsApi) {
  in_process_service svc;
  auto c = svc.client();
  std::string passed = submit(*c, {{"solution", gemm_solution("// wgmma FAKE_SPEEDUP=1.4\n", "good")}});
  std::string wrong = submit(*c, {{"solution", gemm_solution("// FAKE_WRONG\n", "wrong")}});
  std::string broken = submit(*c, {{"solution", gemm_solution("#error nope\n", "broken")}});
  auto t = wait(*c, passed);
  expect_upstream_shape(t);
  EXPECT_EQ(t["status"], "completed");
  EXPECT_EQ(t["kind"], "evaluate");
  EXPECT_EQ(t["definition"], "gemm_n7168_k5120");
  EXPECT_EQ(t["solution"].get<std::string>().rfind("good_", 0), 0u);
  ASSERT_EQ(t["traces"].size(), 1u);
  EXPECT_EQ(t["traces"][0]["evaluation"]["status"], "PASSED");
  EXPECT_EQ(t["traces"][0]["evaluation"]["performance"]["speedup_factor"], 1.4);
  EXPECT_EQ(t["traces"][0]["solution"], t["solution"]);
  const auto& x = t["ptxbench"];
  EXPECT_EQ(x["verdict"]["format"], "ptxbench.verdict/1") << "PTXBench's full verdict rides along";
  EXPECT_EQ(x["cached"], false);
  EXPECT_EQ(x["workers"]["built_by"], "cpu-0");
  EXPECT_EQ(x["workers"]["completed_by"], "gpu-1");
  for (const char* k : {"queue_s", "compile_s", "gpu_wait_s", "gpu_run_s", "total_s"}) EXPECT_TRUE(x["times"][k].is_number()) << k;

  auto batch = c->post("/tasks/batch", {{"task_ids", {broken, wrong, passed}}, {"timeout", 20}}, 40);
  ASSERT_TRUE(batch && batch->status == 200);
  ASSERT_EQ(batch->body.size(), 3u);
  EXPECT_EQ(batch->body[0]["task_id"], broken) << "input order";
  EXPECT_EQ(batch->body[0]["traces"][0]["evaluation"]["status"], "COMPILE_ERROR");
  EXPECT_TRUE(batch->body[0]["ptxbench"]["workers"]["built_by"].is_null()) << "decided on the CPU: nothing was built";
  EXPECT_EQ(batch->body[1]["traces"][0]["evaluation"]["status"], "INCORRECT_NUMERICAL");
  for (const auto& r : batch->body) expect_upstream_shape(r);
}

TEST(ServeApi, SanitizeAndProfileAnswerWithLogs) {
  in_process_service svc;
  auto c = svc.client();
  auto s = wait(*c, submit(*c, {{"solution", gemm_solution("// wgmma\n")}, {"sanitizer_types", {"memcheck"}}}, "/sanitize"));
  expect_upstream_shape(s);
  EXPECT_EQ(s["kind"], "sanitize");
  EXPECT_FALSE(s.contains("traces"));
  ASSERT_EQ(s["logs"].size(), 1u);
  for (const char* k : {"definition", "workload", "solution", "log"}) EXPECT_TRUE(s["logs"][0].contains(k)) << k;
  EXPECT_NE(s["logs"][0]["log"].get<std::string>().find("sanitize: passed"), std::string::npos) << s["logs"][0]["log"];
  auto p = wait(*c, submit(*c, {{"solution", gemm_solution("// wgmma\n")}}, "/profile"));
  EXPECT_EQ(p["kind"], "profile");
  EXPECT_NE(p["logs"][0]["log"].get<std::string>().find("target instructions: executed"), std::string::npos);
}

TEST(ServeApi, ARepeatedSubmissionIsAnsweredFromTheCacheUnlessBypassed) {
  in_process_service svc;
  auto c = svc.client();
  auto body = ordered_json{{"solution", gemm_solution("// wgmma FAKE_SPEEDUP=1.1\n", "first")}};
  auto first = wait(*c, submit(*c, body));
  ASSERT_EQ(first["status"], "completed");
  body["solution"]["name"] = "second";  // the name is not part of the content
  std::string again = submit(*c, body);
  EXPECT_NE(again, first["task_id"]) << "every submission gets its own task";
  auto second = c->get("/tasks/" + again);  // no waiting: it is finished at once
  ASSERT_TRUE(second && second->status == 200);
  EXPECT_EQ(second->body["status"], "completed");
  EXPECT_EQ(second->body["ptxbench"]["cached"], true);
  EXPECT_EQ(second->body["ptxbench"]["measured_by_job"], first["task_id"]);
  EXPECT_EQ(second->body["ptxbench"]["evaluated_at"], first["ptxbench"]["evaluated_at"]) << "the original evaluation time";
  EXPECT_EQ(second->body["traces"][0]["solution"].get<std::string>().rfind("second_", 0), 0u);
  EXPECT_EQ(second->body["traces"][0]["evaluation"], first["traces"][0]["evaluation"]);
  body["cache"] = "bypass";
  auto third = wait(*c, submit(*c, body));
  EXPECT_EQ(third["ptxbench"]["cached"], false);
  EXPECT_GT(third["ptxbench"]["attempts"].get<int>(), 0) << "evaluated again";
}

TEST(ServeApi, AnInfrastructureFailurePastTheRetriesIsAFailedTaskWithItsError) {
  in_process_service svc;
  auto c = svc.client();
  auto t = wait(*c, submit(*c, {{"solution", gemm_solution("// FAKE_INFRA_ERROR\n")}}));
  expect_upstream_shape(t);
  EXPECT_EQ(t["status"], "failed");
  EXPECT_NE(t["error"].get<std::string>().find("infrastructure failure 3 times"), std::string::npos) << t["error"];
  EXPECT_FALSE(t.contains("traces"));
  auto flaky = wait(*c, submit(*c, {{"solution", gemm_solution("// wgmma FAKE_FLAKY_GPU\n")}}));
  EXPECT_EQ(flaky["status"], "completed") << "one injected failure is retried and then evaluates";
  EXPECT_EQ(flaky["ptxbench"]["infra_failures"], 1);
}

TEST(ServeApi, BadRequestsGetTheirDocumentedErrorAndChangeNothing) {
  in_process_service svc("", 1, 1, 64u << 10);
  const std::string port = std::to_string(svc.port());
  auto expect_error = [&](const http_reply& r, int status, const std::string& fragment) {
    EXPECT_EQ(r.status, status) << r.body.dump();
    ASSERT_TRUE(r.body.is_object() && r.body.contains("detail") && r.body["detail"].is_string()) << r.body.dump();
    EXPECT_EQ(r.body.size(), 1u);
    std::string d = r.body["detail"];
    EXPECT_NE(d.find(fragment), std::string::npos) << d;
    EXPECT_EQ(d.find('\n'), std::string::npos);
  };
  // 422: FastAPI's field list, the first entry's message holding the fragment.
  auto expect_invalid = [&](const http_reply& r, const std::string& fragment) {
    EXPECT_EQ(r.status, 422) << r.body.dump();
    ASSERT_TRUE(r.body.is_object() && r.body.contains("detail") && r.body["detail"].is_array() && !r.body["detail"].empty())
        << r.body.dump();
    const auto& first = r.body["detail"][0];
    EXPECT_TRUE(first.contains("loc") && first.contains("msg") && first.contains("type")) << first.dump();
    EXPECT_NE(first["msg"].get<std::string>().find(fragment), std::string::npos) << first.dump();
  };
  expect_invalid(post_raw(port, "/evaluate", "{\"solution\": "), "JSON decode error");
  auto unknown = gemm_solution("// k\n");
  unknown["definition"] = "nope";
  expect_error(post_raw(port, "/evaluate", ordered_json{{"solution", unknown}}.dump()), 400, "Definition not found: nope");
  auto dotdot = gemm_solution("// k\n");
  dotdot["sources"][0]["path"] = "../../etc/cron.d/x";
  expect_invalid(post_raw(port, "/evaluate", ordered_json{{"solution", dotdot}}.dump()), "'..' in path");
  auto binary = gemm_solution(std::string("\x7f" "ELF\x01\x01", 6));
  expect_error(post_raw(port, "/sanitize", ordered_json{{"solution", binary}}.dump()), 400, "is binary");
  auto torch = gemm_solution("// k\n");
  torch["spec"]["binding"] = "torch";
  expect_error(post_raw(port, "/profile", ordered_json{{"solution", torch}}.dump()), 400, "not supported");
  expect_error(post_raw(port, "/evaluate", ordered_json{{"solution", gemm_solution(std::string(100 << 10, 'x'))}}.dump()),
               413, "larger than 65536 bytes");
  expect_error(get_raw(svc.port(), "/tasks/0123456789abcdef0123456789abcdef"), 404, "Task not found");
  expect_error(get_raw(svc.port(), "/tasks/..%2F..%2Fetc%2Fpasswd"), 404, "Not Found");
  expect_invalid(get_raw(svc.port(), "/tasks/0123456789abcdef0123456789abcdef?timeout=lots"), "valid number");
  expect_error(post_raw(port, "/tasks/batch", R"({"task_ids": ["0123456789abcdef0123456789abcdef"]})"), 404, "Task not found");
  expect_invalid(post_raw(port, "/tasks/batch", R"({"task_ids": 3})"), "valid list");
  expect_error(get_raw(svc.port(), "/definitions/nope"), 404, "Definition not found: nope");
  expect_error(get_raw(svc.port(), "/no/such/endpoint"), 404, "Not Found");
  EXPECT_EQ(svc.jobs_in_queue(), 0) << "no bad request queued anything";
}

TEST(ServeApi, WithATokenEveryRequestMustCarryIt) {
  const std::string token = "s3cret-token-of-enough-length";
  in_process_service svc(token);
  for (const std::string& presented : {std::string(), std::string("wrong-token-of-enough-length!"), token + "x"}) {
    auto r = post_raw(std::to_string(svc.port()), "/evaluate", ordered_json{{"solution", gemm_solution("// k\n")}}.dump(),
                      presented);
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(r.body["detail"], "missing or wrong bearer token");
    EXPECT_EQ(get_raw(svc.port(), "/health", presented).status, 401) << "reads need it too";
  }
  EXPECT_EQ(svc.jobs_in_queue(), 0);
  EXPECT_EQ(get_raw(svc.port(), "/health", token).status, 200);
  auto c = svc.client(token);
  auto t = wait(*c, submit(*c, {{"solution", gemm_solution("// wgmma\n")}}));
  EXPECT_EQ(t["status"], "completed");
}

TEST(ServeApi, ListeningBeyondLoopbackNeedsAToken) {
  EXPECT_TRUE(service::is_loopback("127.0.0.1"));
  EXPECT_TRUE(service::is_loopback("127.8.9.1"));
  EXPECT_TRUE(service::is_loopback("::1"));
  EXPECT_FALSE(service::is_loopback("0.0.0.0"));
  EXPECT_FALSE(service::is_loopback("10.0.0.7"));
  service::server_settings s;
  s.host = "0.0.0.0";
  s.port = 0;
  auto server = service::http_server::create(s, test_suite(), nullptr, nullptr);
  ASSERT_FALSE(server);
  EXPECT_NE(server.err().message.find("needs --token-file"), std::string::npos);
  EXPECT_TRUE(service::same_secret("abc", "abc"));
  EXPECT_FALSE(service::same_secret("abc", "abd"));
  EXPECT_FALSE(service::same_secret("abc", "abcd"));
}

TEST(ServeApi, HealthDefinitionsAndMetrics) {
  in_process_service svc;
  auto c = svc.client();
  (void)wait(*c, submit(*c, {{"solution", gemm_solution("// wgmma\n")}}));
  ordered_json h;
  for (int i = 0; i < 50; ++i) {  // the workers register as they start
    h = c->get("/health")->body;
    if (h["workers"].size() == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(h["status"], "ok");
  ASSERT_EQ(h["workers"].size(), 2u);
  for (const auto& w : h["workers"]) {
    EXPECT_TRUE(w["healthy"].get<bool>());
    EXPECT_TRUE(w.contains("device"));
    EXPECT_EQ(w["pid"], static_cast<int64_t>(::getpid())) << "in-process workers";
  }
  EXPECT_EQ(h["queue_size"], 0);
  EXPECT_EQ(h["queue"]["done"], 1);
  EXPECT_TRUE(h["oldest_waiting"].is_null());
  auto defs = c->get("/definitions")->body;
  EXPECT_EQ(defs.size(), test_suite().tasks.size());
  EXPECT_TRUE(defs[0].contains("name") && defs[0].contains("description"));
  EXPECT_EQ(c->get("/definitions/gemm_n7168_k5120")->body["name"], "gemm_n7168_k5120");
  auto wl = c->get("/definitions/gemm_n7168_k5120/workloads")->body;
  ASSERT_EQ(wl.size(), 1u);
  EXPECT_EQ(c->get("/workloads/" + wl[0]["uuid"].get<std::string>())->body["axes"]["M"], 8192);
  httplib::Client raw("127.0.0.1", svc.port());
  auto m = raw.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->get_header_value("Content-Type").rfind("text/plain", 0), 0u);
  for (const char* needle : {"ptxbench_queue_jobs{state=\"done\"} 1", "ptxbench_jobs_finished_total{kind=\"evaluate\",result=\"done\"} 1",
                             "ptxbench_stage_duration_seconds_bucket{stage=\"gpu_run\",le=\"+Inf\"} 1",
                             "ptxbench_worker_gpu_busy_seconds_total{worker=\"gpu-1\"}", "ptxbench_worker_up{worker=\"cpu-0\""})
    EXPECT_NE(m->body.find(needle), std::string::npos) << needle << "\n" << m->body;
}

TEST(TaskResponse, APoisonPillIsTheCandidatesRuntimeErrorAndAnInfraFailureIsFailed) {
  queue::job j;
  j.id = "0123456789abcdef0123456789abcdef";
  j.spec.task = "gemm_n7168_k5120";
  j.spec.target = "h200";
  j.spec.solution_json = gemm_solution("// k\n", "pill_1234abcd").dump();
  j.state = queue::job_state::failed;
  j.failure = queue::failure_kind::poison_pill;
  j.error = "it took down 3 workers";  // the queue's account; it writes no verdict of its own
  auto r = service::task_response(j, {}, test_suite());
  EXPECT_EQ(r["status"], "completed");
  EXPECT_EQ(r["traces"][0]["evaluation"]["status"], "RUNTIME_ERROR");
  EXPECT_EQ(r["traces"][0]["evaluation"]["log"], "it took down 3 workers");
  EXPECT_EQ(r["traces"][0]["solution"], "pill_1234abcd");
  EXPECT_EQ(r["ptxbench"]["failure"], "poison_pill");
  EXPECT_EQ(r["ptxbench"]["verdict"]["outcome"], "runtime_error") << "the outcome vocabulary, made by the verdict layer";
  EXPECT_EQ(r["traces"][0]["evaluation"]["environment"]["hardware"], "NVIDIA H200") << "upstream's Trace needs a name";
  j.failure = queue::failure_kind::infra;
  j.verdict_json.clear();
  j.error = "infrastructure failure 3 times (the limit); last: GPU lost";
  r = service::task_response(j, {}, test_suite());
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["error"], j.error);
  EXPECT_FALSE(r.contains("traces"));
  j.state = queue::job_state::compiled;
  EXPECT_EQ(service::upstream_status(j), "pending");
  j.state = queue::job_state::compiling;
  EXPECT_EQ(service::upstream_status(j), "running");
}

}  // namespace
}  // namespace ptxbench::testing

namespace ptxbench::testing {
namespace {

// cpp-httplib listens with a backlog of 5: a client beyond that had its connection attempt dropped
// and retried by the kernel a second later. The server raises the backlog, so 48 clients connecting
// at the same moment are all answered without that second.
TEST(ServeApi, ManyClientsConnectingAtOnceAreNotHeldBackBySynRetries) {
  in_process_service svc;
  constexpr int n = 48;
  std::vector<double> seconds(n, -1);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready < n) std::this_thread::yield();
      auto t0 = std::chrono::steady_clock::now();
      httplib::Client c("127.0.0.1", svc.port());
      c.set_connection_timeout(5);
      auto r = c.Get("/definitions/gemm_n7168_k5120");
      if (r && r->status == 200) seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    EXPECT_GE(seconds[i], 0) << "client " << i << " got no answer";
    EXPECT_LT(seconds[i], 0.9) << "client " << i << ": a dropped connection attempt retried after a second";
  }
}

}  // namespace
}  // namespace ptxbench::testing

namespace ptxbench::testing {
namespace {

TEST(ServeApi, AMalformedHttpRequestIsA400WithAOneLineJsonError) {
  in_process_service svc;
  for (const std::string& bytes : {std::string("GARBAGE\r\n\r\n"),
                                   std::string("POST /evaluate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nxx\r\n0\r\n\r\n")}) {
    std::string answer = raw_exchange(svc.port(), bytes);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
    auto end = answer.find("\r\n\r\n");
    ASSERT_NE(end, std::string::npos) << answer;
    auto body = answer.substr(end + 4);
    auto j = ordered_json::parse(body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << body;
    EXPECT_EQ(j["detail"], "malformed HTTP request (request line, headers or body framing)");
  }
  auto c = svc.client();
  EXPECT_EQ(c->get("/health")->body["queue_size"], 0) << "nothing was queued";
}

}  // namespace
}  // namespace ptxbench::testing
