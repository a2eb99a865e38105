// `ptxbench mcp` as an MCP client sees it: the real binary with its stdin and stdout on pipes, one
// JSON-RPC message per line. A scripted session (initialize → tools/list → check → evaluate against
// `ptxbench serve --evaluator fake`, with progress notifications and a ping answered mid-evaluation
// → a malformed request), then every kind of bad or hostile input, each answered with its JSON-RPC
// error (or an isError result) while the server carries on.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/file_io.h"
#include "core/json_check.h"
#include "core/line_channel.h"
#include "core/spawn.h"
#include "fake_service.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace {
namespace fs = std::filesystem;

const std::string k_task = "gemm_n7168_k5120";
const std::string k_kernel =
    "#include <ptxbench/abi.h>\n__global__ void k() {}\nvoid run(ptxbench::tensor_view A, ptxbench::tensor_view B, "
    "ptxbench::tensor_view C, cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, "
    "PTXBENCH_BFLOAT16)\n";

// The server process and a client's view of it: requests out, messages in (notifications kept).
class mcp_process {
 public:
  mcp_process(const fs::path& dir, const std::vector<std::string>& args) {
    int to_server[2], from_server[2];
    EXPECT_EQ(::pipe2(to_server, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(from_server, O_CLOEXEC), 0);
    std::vector<std::string> argv = {(bin_dir() / "ptxbench").string(), "--root", repo_root().string(), "--cache-dir",
                                     (dir / "cache").string(), "mcp"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto pid = spawn_background(
        {.argv = argv, .log = dir / "mcp.log", .fds = {{to_server[0], 0}, {from_server[1], 1}}});
    EXPECT_TRUE(pid) << (pid ? "" : pid.err().message);
    m_pid = pid ? *pid : -1;
    ::close(to_server[0]);
    ::close(from_server[1]);
    m_in = to_server[1];
    m_out = from_server[0];
    m_reader = std::make_unique<line_reader>(m_out, 256u << 20);
  }
  ~mcp_process() {
    if (m_in >= 0) ::close(m_in);
    if (m_pid > 0) stop_child(m_pid, SIGKILL, 0);
    ::close(m_out);
  }

  void send_line(const std::string& line) { EXPECT_TRUE(write_line(m_in, line)); }
  void send(const ordered_json& message) { send_line(message.dump()); }

  /// The next message, or null after timeout_s.
  ordered_json next(double timeout_s = 30) {
    auto line = m_reader->read_line(timeout_s);
    if (!line || line->kind != line_reader::read_kind::line) return nullptr;
    auto j = ordered_json::parse(line->line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON on the protocol stream: " << line->line.substr(0, 200);
    EXPECT_EQ(line->line.find('\n'), std::string::npos);
    return j;
  }

  /// Sends a request and returns its response; notifications that come first are kept.
  ordered_json request(const ordered_json& id, const std::string& method, ordered_json params = nullptr) {
    ordered_json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) m["params"] = std::move(params);
    send(m);
    return response_to(id);
  }

  ordered_json response_to(const ordered_json& id, double timeout_s = 60) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      ordered_json m = next(timeout_s);
      if (m.is_null()) break;
      if (m.contains("id") && m["id"] == id) return m;
      if (m.contains("id")) others.push_back(m);
      else notifications.push_back(m);
    }
    ADD_FAILURE() << "no response to " << id.dump();
    return nullptr;
  }

  ordered_json call(const ordered_json& id, const std::string& tool, ordered_json arguments, ordered_json meta = nullptr) {
    ordered_json params = {{"name", tool}, {"arguments", std::move(arguments)}};
    if (!meta.is_null()) params["_meta"] = std::move(meta);
    return request(id, "tools/call", std::move(params));
  }

  void initialize(const std::string& version = "2025-06-18") {
    auto r = request(0, "initialize",
                     {{"protocolVersion", version}, {"capabilities", ordered_json::object()},
                      {"clientInfo", {{"name", "ptxbench-test"}, {"version", "1"}}}});
    ASSERT_TRUE(r.contains("result")) << r.dump();
    send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  }

  /// Closes the server's stdin and returns its exit status (-1: it did not exit within 30 s).
  int finish() {
    ::close(m_in);
    m_in = -1;
    for (int i = 0; i < 3000; ++i) {
      if (auto st = reap_if_exited(m_pid)) {
        m_pid = -1;
        return WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
      }
      ::usleep(10000);
    }
    return -1;
  }

  std::vector<ordered_json> notifications, others;

 private:
  pid_t m_pid = -1;
  int m_in = -1, m_out = -1;
  std::unique_ptr<line_reader> m_reader;
};

int error_code(const ordered_json& r) { return r.contains("error") ? r["error"].value("code", 0) : 0; }

class McpSession : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = make_temp_dir("mcp-session"); }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path m_dir;
};

TEST_F(McpSession, AScriptedClientListsChecksAndEvaluatesThroughAFakeService) {
  fake_service service(m_dir / "service", {"--fake-delay-ms", "800"});
  ASSERT_TRUE(service.ready()) << "see " << service.log();
  mcp_process mcp(m_dir, {"--remote", service.url(), "--progress-interval-ms", "100"});

  // initialize: the version is the client's (the server speaks it), the tools capability declared.
  auto init = mcp.request(1, "initialize",
                          {{"protocolVersion", "2025-06-18"}, {"capabilities", ordered_json::object()},
                           {"clientInfo", {{"name", "ptxbench-test"}, {"version", "1"}}}});
  ASSERT_TRUE(init.contains("result")) << init.dump();
  EXPECT_EQ(init["jsonrpc"], "2.0");
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(init["result"]["capabilities"]["tools"]["listChanged"], false);
  EXPECT_EQ(init["result"]["serverInfo"]["name"], "ptxbench");
  EXPECT_NE(init["result"]["instructions"].get<std::string>().find(service.url()), std::string::npos);
  mcp.send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});  // answered with nothing

  // tools/list: four tools, each with an input and an output schema.
  auto list = mcp.request(2, "tools/list");
  ASSERT_TRUE(list.contains("result")) << list.dump();
  std::vector<std::string> names;
  for (const auto& t : list["result"]["tools"]) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t.dump();
    EXPECT_FALSE(t["description"].get<std::string>().empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_tasks", "show_task", "check", "evaluate"}));
  EXPECT_TRUE(mcp.notifications.empty()) << "notifications/initialized was answered: " << mcp.notifications[0].dump();

  auto tasks = mcp.call("three", "list_tasks", ordered_json::object());
  ASSERT_TRUE(tasks.contains("result")) << tasks.dump();
  EXPECT_EQ(tasks["result"]["isError"], false);
  bool listed = false;
  for (const auto& t : tasks["result"]["structuredContent"]["tasks"]) listed = listed || t["name"] == k_task;
  EXPECT_TRUE(listed);
  auto shown = mcp.call(4, "show_task", {{"task", k_task}});
  ASSERT_TRUE(shown.contains("result")) << shown.dump();
  EXPECT_EQ(shown["result"]["structuredContent"]["variant"], "base");
  EXPECT_NE(shown["result"]["structuredContent"]["user"].get<std::string>().find(k_task), std::string::npos);

  // check: the CPU stages on the service; the verdict as structured content plus the CLI's text.
  auto check = mcp.call(5, "check", {{"task", k_task}, {"source", k_kernel + "// wgmma\n"}});
  ASSERT_TRUE(check.contains("result")) << check.dump();
  const auto& checked = check["result"];
  EXPECT_EQ(checked["isError"], false);
  EXPECT_EQ(checked["structuredContent"]["format"], "ptxbench.verdict/1");
  EXPECT_EQ(checked["structuredContent"]["mode"], "check");
  EXPECT_EQ(checked["structuredContent"]["outcome"], "built");
  EXPECT_NE(checked["content"][0]["text"].get<std::string>().find("verdict: built"), std::string::npos)
      << checked["content"][0]["text"];
  EXPECT_EQ(ordered_json::parse(checked["content"][1]["text"].get<std::string>()), checked["structuredContent"]);

  // evaluate with a progress token: progress while it runs, a ping answered meanwhile, then the verdict.
  mcp.send({{"jsonrpc", "2.0"}, {"id", 6}, {"method", "tools/call"},
            {"params", {{"name", "evaluate"}, {"arguments", {{"task", k_task}, {"source", k_kernel + "// wgmma FAKE_SPEEDUP=1.4\n"}}},
                        {"_meta", {{"progressToken", "eval-6"}}}}}});
  auto pong = mcp.request(7, "ping");
  EXPECT_EQ(pong["result"], ordered_json::object());
  EXPECT_TRUE(mcp.others.empty()) << "the evaluation answered before the ping: the server is not concurrent";
  auto evaluated = mcp.response_to(6);
  ASSERT_TRUE(evaluated.contains("result")) << evaluated.dump();
  const auto& v = evaluated["result"]["structuredContent"];
  EXPECT_EQ(v["mode"], "eval");
  EXPECT_EQ(v["outcome"], "passed");
  EXPECT_EQ(v["target_correct"], true);
  EXPECT_DOUBLE_EQ(v["timing"]["speedup"].get<double>(), 1.4);
  EXPECT_NE(evaluated["result"]["content"][0]["text"].get<std::string>().find("speedup 1.400x"), std::string::npos);
  int progress = 0;
  double last = -1;
  for (const auto& n : mcp.notifications) {
    ASSERT_EQ(n["method"], "notifications/progress") << n.dump();
    EXPECT_EQ(n["params"]["progressToken"], "eval-6");
    EXPECT_GT(n["params"]["progress"].get<double>(), last) << "progress must increase";
    last = n["params"]["progress"].get<double>();
    ++progress;
  }
  EXPECT_GE(progress, 3) << "an evaluation of about 1.6 s with 100 ms ticks";

  // A malformed request: a parse error with a null id, and the server carries on.
  mcp.send_line("{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": ");
  auto parse = mcp.next();
  EXPECT_EQ(error_code(parse), -32700) << parse.dump();
  EXPECT_TRUE(parse["id"].is_null());
  EXPECT_EQ(mcp.request(9, "ping")["result"], ordered_json::object());
  EXPECT_EQ(mcp.finish(), 0);
}

TEST_F(McpSession, BadMessagesGetTheirJsonRpcErrorsAndTheServerCarriesOn) {
  mcp_process mcp(m_dir, {"--evaluator", "fake"});
  // Before initialize only ping and initialize are served.
  EXPECT_EQ(mcp.request(1, "ping")["result"], ordered_json::object());
  EXPECT_EQ(error_code(mcp.request(2, "tools/list")), -32600);
  EXPECT_EQ(error_code(mcp.request(3, "initialize", {{"protocolVersion", 20250618}})), -32602);
  // A version the server does not know: it answers with the newest it speaks.
  auto init = mcp.request(4, "initialize", {{"protocolVersion", "1999-01-01"}, {"capabilities", ordered_json::object()}});
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(error_code(mcp.request(5, "initialize", {{"protocolVersion", "2025-06-18"}})), -32600);

  struct line_case {
    std::string line;
    int code;
    ordered_json id;
  };
  const std::vector<line_case> lines = {
      {"not json at all", -32700, nullptr},
      {std::string("\xff\xfe\x00\x01binary", 10), -32700, nullptr},
      {R"([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])", -32600, nullptr},
      {R"("just a string")", -32600, nullptr},
      {R"({"jsonrpc": "1.0", "id": 10, "method": "ping"})", -32600, 10},
      {R"({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"})", -32600, nullptr},
      {R"({"jsonrpc": "2.0", "id": 11.5, "method": "ping"})", -32600, nullptr},
      {R"({"jsonrpc": "2.0", "id": 12, "method": 7})", -32600, 12},
      {R"({"jsonrpc": "2.0", "id": 13})", -32600, 13},
      {R"({"jsonrpc": "2.0", "id": 14, "method": "tools/list", "params": [1, 2]})", -32600, 14},
      {R"({"jsonrpc": "2.0", "id": 15, "method": "resources/list"})", -32601, 15},
      {R"({"jsonrpc": "2.0", "id": "s16", "method": "tools/call", "params": {"name": "rm_rf"}})", -32602, "s16"},
      {R"({"jsonrpc": "2.0", "id": 17, "method": "tools/call", "params": {}})", -32602, 17},
      {R"({"jsonrpc": "2.0", "id": 18, "method": "tools/call", "params": {"name": "check", "arguments": "x"}})", -32602, 18},
      {R"({"jsonrpc": "2.0", "id": 19, "method": "tools/call", "params": {"name": "check", "arguments": {"source": "x"}}})",
       -32602, 19},
      {R"({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "check", "arguments": {"task": "t", "source": "x", "path": "y"}}})",
       -32602, 20},
      {R"({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": "check", "arguments": {"task": "t", "source": "x", "shell": "rm"}}})",
       -32602, 21},
      {R"({"jsonrpc": "2.0", "id": 22, "method": "tools/call", "params": {"name": "list_tasks", "arguments": {"all": true}}})",
       -32602, 22},
      {R"({"jsonrpc": "2.0", "id": 23, "method": "tools/call", "params": {"name": "evaluate", "arguments": {"task": "t", "source": "x", "language": "rust"}}})",
       -32602, 23},
  };
  for (const auto& c : lines) {
    mcp.send_line(c.line);
    auto r = mcp.next();
    EXPECT_EQ(error_code(r), c.code) << c.line << " → " << r.dump();
    EXPECT_EQ(r["id"], c.id) << c.line;
    EXPECT_TRUE(r["error"]["message"].is_string() && !r["error"]["message"].get<std::string>().empty());
  }
  // Notifications and responses get no answer, known or not; the ping after them is the next message.
  mcp.send_line(R"({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": 1}})");
  mcp.send_line(R"({"jsonrpc": "2.0", "id": 99, "result": {}})");
  mcp.send_line("");
  EXPECT_EQ(mcp.request(24, "ping")["id"], 24);

  // What the arguments name but cannot be used: the tool's own error, for the model to read.
  auto tool_error = [&](const ordered_json& id, const std::string& tool, const ordered_json& args) {
    auto r = mcp.call(id, tool, args);
    EXPECT_TRUE(r.contains("result")) << r.dump();
    EXPECT_EQ(r["result"].value("isError", false), true) << r.dump();
    EXPECT_FALSE(r["result"].contains("structuredContent"));
    return r["result"]["content"][0]["text"].get<std::string>();
  };
  EXPECT_EQ(tool_error(30, "check", {{"task", "gemm_n7168_k512"}, {"source", k_kernel}}),
            "unknown task 'gemm_n7168_k512' (did you mean 'gemm_n7168_k5120'?)");
  EXPECT_EQ(tool_error(31, "show_task", {{"task", k_task}, {"variant", "nosuch"}}).substr(0, 19), "no variant 'nosuch'");
  EXPECT_NE(tool_error(32, "check", {{"task", k_task}, {"source", std::string("int x;\0", 7)}}).find("NUL byte"),
            std::string::npos);
  EXPECT_EQ(tool_error(33, "check", {{"task", k_task}, {"source", "  \n"}}), "source: empty; give the complete kernel file");
  EXPECT_NE(tool_error(34, "check", {{"task", k_task}, {"source", std::string(17u << 20, 'x')}}).find("more than a kernel may hold"),
            std::string::npos);
  EXPECT_NE(tool_error(35, "evaluate", {{"task", k_task}, {"path", (m_dir / "nope.cu").string()}}).find("nope.cu"),
            std::string::npos);
  EXPECT_NE(tool_error(36, "evaluate", {{"task", k_task}, {"path", "/etc/passwd"}}).find("expected a .cu"),
            std::string::npos);
  EXPECT_NE(tool_error(37, "evaluate", {{"task", k_task}, {"target", "h300"}, {"source", k_kernel}}).find("h300"),
            std::string::npos);

  // A kernel file by path works like a source.
  ASSERT_TRUE(write_file_atomic(m_dir / "k.cu", k_kernel + "// wgmma FAKE_SPEEDUP=2\n"));
  auto by_path = mcp.call(38, "evaluate", {{"task", k_task}, {"path", (m_dir / "k.cu").string()}});
  EXPECT_EQ(by_path["result"]["structuredContent"]["outcome"], "passed") << by_path.dump();

  // A line longer than the server's limit (64 MiB): a parse error, skipped without being kept whole.
  mcp.send_line(std::string((64u << 20) + 100, 'x'));
  auto overlong = mcp.next();
  EXPECT_EQ(error_code(overlong), -32700) << overlong.dump();
  EXPECT_EQ(mcp.request(40, "ping")["result"], ordered_json::object());
  EXPECT_EQ(mcp.finish(), 0);
}

TEST_F(McpSession, OlderProtocolVersionsAreSpokenAndACancelledCallIsNotAnswered) {
  mcp_process mcp(m_dir, {"--evaluator", "fake", "--fake-delay-ms", "1500"});
  auto init = mcp.request(1, "initialize", {{"protocolVersion", "2025-03-26"}, {"capabilities", ordered_json::object()}});
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-03-26");
  mcp.send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"},
            {"params", {{"name", "evaluate"}, {"arguments", {{"task", k_task}, {"source", k_kernel}}}}}});
  // The same id again while it is in flight is refused.
  EXPECT_EQ(error_code(mcp.request(2, "tools/call", {{"name", "check"}, {"arguments", {{"task", k_task}, {"source", k_kernel}}}})),
            -32600);
  mcp.send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 2}, {"reason", "test"}}}});
  EXPECT_EQ(mcp.request(3, "ping")["result"], ordered_json::object());
  // The evaluation ends after 1.5 s; its answer is not sent. The next message is the answer to 4.
  ::usleep(2000 * 1000);
  auto r = mcp.request(4, "ping");
  EXPECT_EQ(r["id"], 4);
  EXPECT_TRUE(mcp.others.empty()) << "a cancelled call was answered: " << mcp.others[0].dump();
  EXPECT_EQ(mcp.finish(), 0);
}

TEST_F(McpSession, WithoutAGpuALocalEvaluateIsAToolErrorThatSaysWhatToDo) {
  // The local pipeline on a machine without a GPU (PTXBENCH_DEVICE_NODE names a node that is not there).
  ::setenv("PTXBENCH_DEVICE_NODE", (m_dir / "no-nvidia0").c_str(), 1);
  mcp_process mcp(m_dir, {});
  ::unsetenv("PTXBENCH_DEVICE_NODE");
  mcp.initialize();
  auto r = mcp.call(1, "evaluate", {{"task", k_task}, {"source", k_kernel}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["isError"], true);
  const std::string text = r["result"]["content"][0]["text"];
  EXPECT_NE(text.find("no NVIDIA GPU or driver found"), std::string::npos) << text;
  EXPECT_NE(text.find("mcp --remote URL"), std::string::npos) << text;
  EXPECT_EQ(mcp.finish(), 0);
}

}  // namespace
}  // namespace ptxbench::testing
