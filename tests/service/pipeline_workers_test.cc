// The real worker code paths without a GPU: a `ptxbench worker --role cpu` that runs the pipeline's
// CPU half for real (gate, nvcc, link gate) and ships the built object content-addressed, and a
// `ptxbench worker --role gpu` whose harness is a stand-in that speaks the long-lived harness
// protocol (tests/eval/fake_harness). The GPU side unpacks the object into its own cache, runs the
// candidates in one harness session, and its probed environment keys the result cache.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>

#include "child_process.h"
#include "service/service_client.h"
#include "service_processes.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace {

namespace fs = std::filesystem;

ordered_json kernel_solution(const std::string& name, const std::string& extra) {
  std::string code =
      "#include <ptxbench/abi.h>\n__global__ void k() {}\nvoid run(ptxbench::tensor_view A, ptxbench::tensor_view B, "
      "ptxbench::tensor_view C, cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, "
      "PTXBENCH_BFLOAT16)\n" + extra;
  return {{"name", name},
          {"definition", "gemm_n7168_k5120"},
          {"author", "test"},
          {"spec", {{"language", "cuda"}, {"target_hardware", {"H200"}}, {"entry_point", "kernel.cu::run"}}},
          {"sources", {{{"path", "kernel.cu"}, {"content", code}}}}};
}

TEST(PipelineWorkers, TheCpuHalfShipsTheBuiltObjectAndOneHarnessRunsEveryCandidate) {
#ifndef PTXBENCH_CUDA_ROOT
  GTEST_SKIP() << "no CUDA toolkit: the CPU worker cannot build";
#endif
  fs::path dir = make_temp_dir("pipeline-workers");
  process_options po;
  po.queue = (dir / "queue").string() + "/";
  po.dir = dir;
  po.timing = {"--lease-ms", "20000", "--backoff-ms", "50"};
  service_processes procs(po);
  procs.start_server();
  ASSERT_TRUE(procs.wait_for_server());
  // Real pipeline workers (not the fake evaluator): start them by hand.
  const std::string bin = (bin_dir() / "ptxbench").string();
  pid_t cpu = spawn_process({bin, "--root", repo_root().string(), "--cache-dir", (dir / "cpu-cache").string(), "worker",
                             "--queue", po.queue, "--role", "cpu", "--lease-ms", "20000"},
                            dir / "cpu.log");
  pid_t gpu = spawn_process({bin, "--root", repo_root().string(), "--cache-dir", (dir / "gpu-cache").string(), "worker",
                             "--queue", po.queue, "--role", "gpu", "--lease-ms", "20000", "--harness",
                             (repo_root() / "tests/eval/fake_harness/fake_harness.py").string()},
                            dir / "gpu.log");
  service::client_settings cs;
  cs.url = procs.url();
  auto c = service::service_client::create(cs).value();
  auto evaluate = [&](const ordered_json& sol) {
    auto r = c->post("/evaluate", {{"solution", sol}});
    EXPECT_TRUE(r && r->status == 200);
    auto t = c->get("/tasks/" + r->body["task_id"].get<std::string>() + "?timeout=240", 300);
    EXPECT_TRUE(t && t->status == 200);
    return t->body;
  };
  auto first = evaluate(kernel_solution("a", "// first\n"));
  auto second = evaluate(kernel_solution("b", "// second\n"));
  auto rejected = evaluate(kernel_solution("c", "void f() { cublasLtMatmul(0); }\n"));
  auto again = evaluate(kernel_solution("a-again", "// first\n"));
  kill_and_reap(cpu, SIGTERM);
  kill_and_reap(gpu, SIGTERM);
  procs.stop_all();

  ASSERT_EQ(first["status"], "completed") << first.dump();
  EXPECT_EQ(first["traces"][0]["evaluation"]["status"], "PASSED");
  const auto& v1 = first["ptxbench"]["verdict"];
  EXPECT_EQ(v1["stages"][1]["stage"], "build");
  EXPECT_EQ(v1["stages"][1]["outcome"], "passed") << "nvcc really built it on the CPU worker";
  EXPECT_EQ(v1["environment"]["gpu"], "FAKE H200");
  const auto& v2 = second["ptxbench"]["verdict"];
  EXPECT_EQ(v1["environment"]["harness_session"]["pid"], v2["environment"]["harness_session"]["pid"])
      << "one harness session served both candidates";
  EXPECT_EQ(v2["environment"]["harness_session"]["candidate"], 2);
  EXPECT_EQ(first["ptxbench"]["workers"]["completed_by"].get<std::string>().find("/gpu0") != std::string::npos, true);
  bool unpacked = false;
  for (const auto& e : fs::directory_iterator(dir / "gpu-cache" / "service" / "artifacts"))
    unpacked = unpacked || fs::exists(e.path() / "candidate.so");
  EXPECT_TRUE(unpacked) << "the GPU worker put the shipped object in its own cache";
  EXPECT_EQ(rejected["traces"][0]["evaluation"]["status"], "COMPILE_ERROR");
  EXPECT_EQ(rejected["ptxbench"]["verdict"]["outcome"], "rejected");
  EXPECT_TRUE(rejected["ptxbench"]["workers"]["built_by"].is_null()) << "decided on the CPU worker";
  EXPECT_EQ(again["ptxbench"]["cached"], true) << "the GPU worker's probed environment keys the cache";
  EXPECT_EQ(again["ptxbench"]["measured_by_job"], first["task_id"]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::testing
