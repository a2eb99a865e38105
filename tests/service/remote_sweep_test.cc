// `ptxbench run --evaluator URL`: the agent's sweep evaluating through `ptxbench serve` (local fake
// workers), with the server SIGKILLed mid-sweep and restarted on the same port. The sweep waits
// for it, re-polls (or resubmits) its tasks, and ends with exactly the trajectories a sweep with the
// local fake evaluator produces: no turn lost, none repeated.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "agent/trajectory.h"
#include "child_process.h"
#include "core/file_io.h"
#include "core/process.h"
#include "service_processes.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace {

namespace fs = std::filesystem;
using agent::trajectory;
using agent::trajectory_meta;

const std::string k_kernel =
    "```cuda\n#include <ptxbench/abi.h>\n__global__ void k() {}\nvoid run(ptxbench::tensor_view A, "
    "ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, "
    "PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n";

/// Labels and speedups of every turn of every trajectory in a run directory, by file name.
std::map<std::string, std::vector<std::string>> turn_outcomes(const fs::path& run) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : fs::directory_iterator(run / "trajectories")) {
    auto t = trajectory::load(e.path());
    EXPECT_TRUE(t) << t.err().message;
    if (!t) continue;
    const auto& msgs = t->json()["messages"];
    for (std::size_t m = 3; m < msgs.size(); m += 2) {
      const auto& x = msgs[m]["extra"];
      out[e.path().filename().string()].push_back(
          fmt::format("turn {}: {} {}", x["turn"].get<int>(), x["ptxbench"]["label"].get<std::string>(), x["ptxbench"].value("speedup", ordered_json()).dump()));
    }
  }
  return out;
}

TEST(RemoteSweep, AServerKilledMidSweepLosesAndRepeatsNoTurn) {
  fs::path dir = make_temp_dir("remote-sweep");
  const std::string bin = (bin_dir() / "ptxbench").string();
  trajectory_meta meta;
  auto replay = trajectory::start(meta, ordered_json::object(), {"s", "u"});
  auto reply = [](const std::string& c) { return ordered_json{{"role", "assistant"}, {"content", c}}; };
  auto fb = [](int k) { return ordered_json{{"role", "user"}, {"content", "recorded"}, {"extra", {{"turn", k}}}}; };
  replay.append_turn(reply("```cuda\n#error not yet\n```\n"), fb(0));
  replay.append_turn(reply(k_kernel + "// FAKE_WRONG\n```\n"), fb(1));
  replay.append_turn(reply(k_kernel + "// mma.sync FAKE_SPEEDUP=0.9\n```\n"), fb(2));
  replay.append_turn(reply(k_kernel + "// wgmma FAKE_SPEEDUP=1.1\n```\n"), fb(3));
  ASSERT_TRUE(replay.save(dir / "replay.json"));
  auto sweep = [&](const fs::path& out, const std::string& evaluator) {
    return std::vector<std::string>{bin, "--root", repo_root().string(), "--cache-dir", (dir / "cache").string(), "run",
                                    "--model", "replay:" + (dir / "replay.json").string(), "--tasks", "gemm_n7168_k5120",
                                    "--variants", "base", "--trajectories", "6", "--turns", "4", "--parallel", "3",
                                    "--evaluator", evaluator, "--out", out.string(), "-q"};
  };
  auto local = run_process({.argv = sweep(dir / "local", "fake"), .timeout_s = 120});
  ASSERT_TRUE(local.succeeded()) << describe_exit(local) << local.err;

  int port = free_port();
  std::vector<std::string> serve = {bin, "--root", repo_root().string(), "--cache-dir", (dir / "cache").string(), "serve",
                                    "--listen", fmt::format("127.0.0.1:{}", port), "--service-dir", (dir / "service").string(),
                                    "--evaluator", "fake", "--fake-gpus", "2", "--fake-delay-ms", "250", "--fake-cpu-delay-ms", "150", "--lease-ms", "1000",
                                    "--backoff-ms", "50", "--reap-ms", "100"};
  pid_t server = spawn_process(serve, dir / "serve.log");
  pid_t run = spawn_process(sweep(dir / "remote", fmt::format("http://127.0.0.1:{}", port)), dir / "run.log");
  // Kill the server (and with it its local workers) while evaluations are queued and running: once
  // a few turns are recorded (not after a fixed time: on an idle machine the sweep is quick).
  auto completed_turns = [&] {
    int n = 0;
    if (fs::exists(dir / "remote" / "trajectories"))
      for (const auto& e : fs::directory_iterator(dir / "remote" / "trajectories"))
        if (auto t = trajectory::load(e.path())) n += t->completed_turns();
    return n;
  };
  for (int i = 0; i < 1500 && completed_turns() < 3; ++i) {
    ASSERT_TRUE(!reap_within(run, 0)) << "the sweep ended before the server was killed";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(!reap_within(run, 0)) << "the sweep ended before the server was killed";
  int done_at_kill = completed_turns();
  EXPECT_GE(done_at_kill, 3);
  EXPECT_LT(done_at_kill, 24) << "the kill landed mid-sweep";
  kill_and_reap(server, SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  server = spawn_process(serve, dir / "serve.log");
  int status = 0;
  bool ended = reap_within(run, 120000, &status);
  kill_and_reap(server, SIGTERM);
  ASSERT_TRUE(ended) << "the sweep did not finish";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << *read_text_file(dir / "run.log", 1 << 20);

  auto expected = turn_outcomes(dir / "local");
  auto got = turn_outcomes(dir / "remote");
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(got, expected) << "every trajectory has exactly the local sweep's turns";
  for (const auto& [file, turns] : got) EXPECT_EQ(turns.size(), 4u) << file;
  auto summary = parse_json(*read_text_file(dir / "remote" / "summary.json", 1 << 24), "summary");
  ASSERT_TRUE(summary);
  EXPECT_EQ((*summary)["totals"]["turns_completed"], 24);
  EXPECT_EQ((*summary)["complete"], true);
  std::printf("[ remote sweep ] %d of 24 turns were done when the server was killed\n", done_at_kill);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::testing
