// Issue 27, "upstream parity": the cases of upstream PTXBench's service tests
// (packages/fibserve/tests/serve/) and what its agent client template reads, re-expressed against
// this service in one process (fake-evaluator workers), each with the exact status and body upstream
// gives. Plus the targets issue 24 asks for: a job whose target no live worker serves is answered.
#include <gtest/gtest.h>

#include <httplib.h>

#include <chrono>
#include <set>
#include <thread>

#include "service_fixture.h"

namespace ptxbench::testing {
namespace {

using service::http_reply;

http_reply request(int port, const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& content_type = "application/json") {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(30);
  httplib::Result res = method == "GET"    ? cli.Get(path.c_str())
                        : method == "POST" ? cli.Post(path.c_str(), body, content_type.c_str())
                                           : cli.Delete(path.c_str(), body, content_type.c_str());
  http_reply r;
  if (!res) return r;
  r.status = res->status;
  r.body = ordered_json::parse(res->body, nullptr, false);
  if (r.body.is_discarded()) r.body = res->body;  // the raw text (HTML)
  return r;
}

std::string submit_on_port(int port, const ordered_json& body, const std::string& endpoint = "/evaluate") {
  auto r = request(port, "POST", endpoint, body.dump());
  EXPECT_EQ(r.status, 200) << r.body.dump();
  return r.status == 200 ? r.body["task_id"].get<std::string>() : "";
}

ordered_json wait_on_port(int port, const std::string& id, int seconds = 20) {
  auto r = request(port, "GET", "/tasks/" + id + "?timeout=" + std::to_string(seconds));
  EXPECT_EQ(r.status, 200) << r.body.dump();
  return r.body;
}

/// Sends raw bytes on a fresh connection; returns the status line's code and the body.
std::pair<int, std::string> raw_request(int port, const std::string& bytes) {
  std::string out = raw_exchange(port, bytes);
  if (out.rfind("HTTP/1.1 ", 0) != 0) return {0, out};
  auto end = out.find("\r\n\r\n");
  return {std::stoi(out.substr(9, 3)), end == std::string::npos ? "" : out.substr(end + 4)};
}

/// A kernel whose line 42 is where the fake evaluator's sanitizer report points.
std::string kernel_with_a_fault() {
  std::string code;
  for (int line = 1; line <= 50; ++line)
    code += line == 42 ? "  C[i] = acc;  // the faulting store\n" : line == 1 ? "// FAKE_RUNTIME_ERROR\n" : "//\n";
  return code;
}

// Parity 1: POST /debug answers what upstream's client reads (logs[0].metadata: titled sections
// {exist, msg}), and / and /docs say what upstream's say.
TEST(UpstreamParity, DebugAnswersWithTheMetadataUpstreamsClientRenders) {
  in_process_service svc;
  auto t = wait_on_port(svc.port(), submit_on_port(svc.port(),
                                   {{"solution", gemm_solution(kernel_with_a_fault(), "bad")},
                                    {"workload_uuids", {"94920358-01a8-4c5b-9209-3103fd490e94"}},
                                    {"sanitizer_types", {"memcheck"}},
                                    {"timeout", 120},
                                    {"max_lines", nullptr},
                                    {"print_limit", 100},
                                    {"source_context_lines", 2},
                                    {"enable_coredump", false},
                                    {"coredump_grace_seconds", 30}},
                                   "/debug"));
  EXPECT_EQ(t["status"], "completed");
  EXPECT_EQ(t["kind"], "debug");
  EXPECT_FALSE(t.contains("traces"));
  ASSERT_EQ(t["logs"].size(), 1u);
  const auto& m = t["logs"][0]["metadata"];
  ASSERT_TRUE(m.is_object()) << t.dump();
  for (const auto& [title, section] : m.items()) {
    EXPECT_TRUE(section.is_object() && section["exist"].is_boolean() && section["msg"].is_string()) << title;
  }
  EXPECT_TRUE(m.contains("FlashInfer CUDA debug report")) << "the title upstream's client skips";
  EXPECT_TRUE(m["Most precise CUDA fault"]["exist"].get<bool>());
  EXPECT_NE(m["Most precise CUDA fault"]["msg"].get<std::string>().find("Invalid __global__ write"), std::string::npos);
  const std::string lines = m["Source lines"]["msg"];
  EXPECT_NE(lines.find("kernel.cu:42"), std::string::npos) << lines;
  EXPECT_NE(lines.find(">    42 |   C[i] = acc;"), std::string::npos) << lines;
  EXPECT_NE(lines.find("    40 | //"), std::string::npos) << "two lines of context before";
  EXPECT_EQ(lines.find("    39 |"), std::string::npos) << "and no more";
  // A clean kernel: the report has no fault to show.
  auto clean = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("// wgmma\n", "ok")}}, "/debug"));
  EXPECT_FALSE(clean["logs"][0]["metadata"]["Most precise CUDA fault"]["exist"].get<bool>());

  auto root = request(svc.port(), "GET", "/");
  ASSERT_EQ(root.status, 200);
  for (const char* key : {"name", "version", "commit", "upstream", "docs", "endpoints"}) EXPECT_TRUE(root.body.contains(key)) << key;
  EXPECT_EQ(root.body["docs"], "/docs");
  std::set<std::string> listed;
  for (const auto& e : root.body["endpoints"]) listed.insert(e["method"].get<std::string>() + " " + e["path"].get<std::string>());
  for (const char* e : {"POST /debug", "GET /docs", "POST /shutdown", "POST /evaluate", "GET /tasks/{task_id}"})
    EXPECT_TRUE(listed.count(e)) << e;
  httplib::Client raw("127.0.0.1", svc.port());
  auto docs = raw.Get("/docs");
  ASSERT_TRUE(docs);
  EXPECT_EQ(docs->status, 200);
  EXPECT_EQ(docs->get_header_value("Content-Type").rfind("text/html", 0), 0u);
  EXPECT_NE(docs->body.find("/debug"), std::string::npos);
}

// Parity 2 and 4: what upstream accepts, this service accepts.
TEST(UpstreamParity, AnUnknownWorkloadIsAFailedTaskAndOtherAcceptedRequests) {
  in_process_service svc;
  auto t = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("// wgmma\n")}, {"workload_uuids", {"nonexistent_uuid"}}}));
  EXPECT_EQ(t["status"], "failed");
  EXPECT_EQ(t["error"], "No workloads found for definition: gemm_n7168_k5120");
  EXPECT_EQ(t["ptxbench"]["failure"], "no_workloads");
  // A batch with a negative timeout answers at once (upstream: any float; <= 0 does not wait).
  auto b = request(svc.port(), "POST", "/tasks/batch", R"({"task_ids": [], "timeout": -1})");
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(b.body, ordered_json::array());
  b = request(svc.port(), "POST", "/tasks/batch", ordered_json{{"task_ids", {t["task_id"]}}, {"timeout", -1}}.dump());
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(b.body[0]["status"], "failed");
  // A known path with another method: 405, as FastAPI answers.
  for (auto [method, path] : {std::pair{"GET", "/evaluate"}, std::pair{"GET", "/debug"}, std::pair{"POST", "/health"},
                              std::pair{"DELETE", "/tasks/0123456789abcdef0123456789abcdef"}}) {
    auto r = request(svc.port(), method, path, "{}");
    EXPECT_EQ(r.status, 405) << method << " " << path;
    EXPECT_EQ(r.body, (ordered_json{{"detail", "Method Not Allowed"}})) << method << " " << path;
  }
  EXPECT_EQ(request(svc.port(), "GET", "/no/such/path").status, 404);
}

// Parity 3: the fourteen requests FastAPI refuses before the handler: 422, a list of {loc, msg, type}.
TEST(UpstreamParity, RequestsThatDoNotMatchTheSchemaAre422WithTheFieldList) {
  in_process_service svc("", 1, 1);
  auto sol = [](auto edit) {
    auto s = gemm_solution("// k\n");
    edit(s);
    return ordered_json{{"solution", s}};
  };
  struct probe {
    std::string method, path, body;
    ordered_json loc;  ///< of the first field problem
    std::string type;
  };
  const std::vector<probe> probes = {
      {"POST", "/evaluate", R"({"solution": {"name": )", {"body", 22}, "json_invalid"},
      {"POST", "/tasks/batch", R"({"task_ids": [)", {"body", 14}, "json_invalid"},
      {"POST", "/evaluate", "[]", {"body"}, "model_attributes_type"},
      {"POST", "/evaluate", "{}", {"body", "solution"}, "missing"},
      {"POST", "/evaluate", sol([](ordered_json& s) { s.erase("author"); }).dump(), {"body", "solution", "author"}, "missing"},
      {"POST", "/evaluate", sol([](ordered_json& s) { s["spec"]["entry_point"] = "main.cu::run"; }).dump(),
       {"body", "solution", "spec", "entry_point"}, "value_error"},
      {"POST", "/evaluate", sol([](ordered_json& s) { s["sources"][0]["path"] = "../kernel.cu"; }).dump(),
       {"body", "solution", "sources", 0, "path"}, "value_error"},
      {"POST", "/evaluate", ordered_json{{"solution", gemm_solution("// k\n")}, {"timeout", 0}}.dump(), {"body", "timeout"}, "greater_than"},
      {"POST", "/evaluate", ordered_json{{"solution", gemm_solution("// k\n")}, {"baseline_cache_mode", "invalid"}}.dump(),
       {"body", "baseline_cache_mode"}, "enum"},
      {"GET", "/tasks/0123456789abcdef0123456789abcdef?timeout=-1", "", {"query", "timeout"}, "greater_than_equal"},
      {"GET", "/tasks/0123456789abcdef0123456789abcdef?timeout=3601", "", {"query", "timeout"}, "less_than_equal"},
      {"GET", "/tasks/0123456789abcdef0123456789abcdef?timeout=abc", "", {"query", "timeout"}, "float_parsing"},
      {"POST", "/tasks/batch", R"({"timeout": 0})", {"body", "task_ids"}, "missing"},
      {"POST", "/tasks/batch", R"({"task_ids": [123]})", {"body", "task_ids", 0}, "string_type"},
  };
  for (const auto& p : probes) {
    auto r = request(svc.port(), p.method, p.path, p.body);
    const std::string what = p.method + " " + p.path + " " + p.body.substr(0, 60);
    EXPECT_EQ(r.status, 422) << what << "\n" << r.body.dump();
    ASSERT_TRUE(r.body.is_object() && r.body["detail"].is_array() && !r.body["detail"].empty()) << what << r.body.dump();
    const auto& first = r.body["detail"][0];
    EXPECT_EQ(first["loc"], p.loc) << what;
    EXPECT_EQ(first["type"], p.type) << what;
    EXPECT_TRUE(first["msg"].is_string() && !first["msg"].get<std::string>().empty()) << what;
  }
  EXPECT_EQ(svc.jobs_in_queue(), 0) << "no refused request queued anything";
}

// Parity 5, 6 and 7.
TEST(UpstreamParity, PythonSolutionsBaselineOptionsAndTraceHardware) {
  in_process_service svc;
  // Upstream's own test solution is Python (pkg/main.py::kernel, value-returning); Triton likewise.
  for (const char* language : {"python", "triton"}) {
    auto py = gemm_solution("import triton\n# wgmma FAKE_SPEEDUP=1.5\n", std::string("py_") + language);
    py["spec"] = {{"language", language}, {"target_hardware", {"cuda"}}, {"entry_point", "pkg/main.py::kernel"},
                  {"destination_passing_style", false}};
    py["sources"][0]["path"] = "pkg/main.py";
    auto t = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", py}}));
    EXPECT_EQ(t["status"], "completed") << language << t.dump();
    EXPECT_EQ(t["traces"][0]["evaluation"]["status"], "PASSED") << language;
    auto job = svc.store().get(t["task_id"]);
    ASSERT_TRUE(job && *job);
    EXPECT_EQ(ordered_json::parse((*job)->spec.solution_json)["spec"]["language"], "triton")
        << "the job carries the language to its workers";
  }
  // run_baseline: false needs stored reference outputs, which no workload of the suite has.
  auto r = request(svc.port(), "POST", "/evaluate", ordered_json{{"solution", gemm_solution("// k\n")}, {"run_baseline", false}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["detail"].get<std::string>().find("has no `outputs`"), std::string::npos) << r.body.dump();
  // profile_baseline: false: upstream reports no reference latency (0) and so a zero speedup.
  auto t = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("// wgmma FAKE_SPEEDUP=2\n", "p")}, {"profile_baseline", false}}));
  ASSERT_EQ(t["traces"][0]["evaluation"]["status"], "PASSED");
  EXPECT_EQ(t["traces"][0]["evaluation"]["performance"]["reference_latency_ms"], 0.0);
  EXPECT_EQ(t["traces"][0]["evaluation"]["performance"]["speedup_factor"], 0.0);
  EXPECT_GT(t["traces"][0]["evaluation"]["performance"]["latency_ms"].get<double>(), 0.0);
  EXPECT_EQ(t["ptxbench"]["verdict"]["timing"]["speedup"], 2.0) << "the measurement itself is kept";
  // A compile error is decided on a CPU worker; its trace still names hardware (upstream requires one).
  auto c = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("#error nope\n", "c")}}));
  ASSERT_EQ(c["traces"][0]["evaluation"]["status"], "COMPILE_ERROR");
  EXPECT_EQ(c["traces"][0]["evaluation"]["environment"]["hardware"], "NVIDIA H200");
}

// New-user probe 7: curl's default form content type and a POST without a body.
TEST(UpstreamParity, AFormLabelledBodyOver8KiBAndABodylessShutdownAreServed) {
  in_process_service svc;
  const std::string big = ordered_json{{"solution", gemm_solution("// wgmma\n" + std::string(20000, '/') + "\n", "form")}}.dump();
  auto r = request(svc.port(), "POST", "/evaluate", big, "application/x-www-form-urlencoded");
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_TRUE(r.body.contains("task_id"));
  // curl -X POST URL/shutdown: no Content-Length, no body.
  auto [status, body] = raw_request(svc.port(), "POST /shutdown HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status, 200) << body;
  EXPECT_EQ(ordered_json::parse(body, nullptr, false), (ordered_json{{"status", "shutting_down"}})) << body;
}

// Issue 24.3: the target of a request that names none, and a job whose target no live worker serves.
TEST(ServedTargets, WithoutADefaultTheOneTargetTheLiveGpuWorkersServeIsUsed) {
  service_setup setup;
  setup.default_target = "";
  setup.gpu_targets = {"h100"};
  setup.unserved_after_ms = 500;
  in_process_service svc(setup);
  for (int i = 0; i < 100; ++i) {  // the workers register as they start
    if (request(svc.port(), "GET", "/health").body["workers"].size() == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // /health says so, for a client that builds for it (eval --remote without --target).
  EXPECT_EQ(request(svc.port(), "GET", "/health").body["default_target"], "h100");
  auto t = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("// wgmma\n", "auto")}}));
  EXPECT_EQ(t["status"], "completed");
  EXPECT_EQ(t["ptxbench"]["target"], "h100");
  // Named h200, which no live worker serves: answered within seconds, saying why.
  auto t0 = std::chrono::steady_clock::now();
  auto u = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("// wgmma\n", "h200")}, {"target", "h200"}}), 30);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(u["status"], "failed");
  EXPECT_EQ(u["error"],
            "no live GPU worker serves target h200: the live GPU workers serve h100; resubmit with \"target\": \"h100\" or "
            "add a GPU worker for h200");
  EXPECT_EQ(u["ptxbench"]["failure"], "unserved");
  EXPECT_LT(took, 10) << "answered, not left waiting";
}

TEST(ServedTargets, NoGpuWorkerMeansNoDefaultTargetAndNoCpuWorkerIsAnsweredToo) {
  service_setup setup;
  setup.default_target = "";
  setup.gpu_workers = 0;
  setup.unserved_after_ms = 300;
  in_process_service svc(setup);
  EXPECT_TRUE(request(svc.port(), "GET", "/health").body["default_target"].is_null());
  auto r = request(svc.port(), "POST", "/evaluate", ordered_json{{"solution", gemm_solution("// k\n")}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["detail"],
            "target: the request names no target and no live GPU worker serves this queue, so there is no default: name "
            "one (\"target\": \"h100\") or start serve with --target");
  auto t = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("// wgmma\n")}, {"target", "h200"}}), 30);
  EXPECT_EQ(t["status"], "failed");
  EXPECT_EQ(t["error"],
            "no live GPU worker serves this queue, so nothing can run target h200 (start `ptxbench worker --role gpu` on a "
            "h200 host)");
  // A check-only job needs no GPU: it is built and answered.
  auto check = wait_on_port(svc.port(), submit_on_port(svc.port(), {{"solution", gemm_solution("// wgmma\n", "chk")}, {"target", "h200"}, {"check_only", true}}));
  EXPECT_EQ(check["status"], "completed") << check.dump();

  service_setup no_cpu;
  no_cpu.cpu_workers = 0;
  no_cpu.unserved_after_ms = 300;
  in_process_service idle(no_cpu);
  auto q = wait_on_port(idle.port(), submit_on_port(idle.port(), {{"solution", gemm_solution("// wgmma\n")}}), 30);
  EXPECT_EQ(q["status"], "failed");
  EXPECT_EQ(q["error"], "no live CPU worker builds this queue's jobs (start `ptxbench worker --role cpu`)");
}

}  // namespace
}  // namespace ptxbench::testing
