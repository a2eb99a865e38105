// The harness protocol's Triton fields: a candidate's language, the Triton runtime the harness
// starts runners with, the JIT allowance, and the cubins a Triton runner compiled.
#include <gtest/gtest.h>

#include "suite/task.h"
#include "test_support.h"
#include "verdict/harness_protocol.h"

namespace ptxbench {
namespace {

harness_job gemm_job() {
  auto s = load_suite(testing::repo_root() / "suite");
  EXPECT_TRUE(s.ok());
  const task* t = s->find_task("gemm_n7168_k5120");
  harness_job job;
  job.task_name = t->name;
  job.def = t->def;
  job.wl = t->wl;
  job.baseline = t->baseline;
  job.tol = t->tol;
  job.runner = "/bin/ptxbench-runner";
  job.work_dir = "/tmp/w";
  return job;
}

TEST(TritonProtocol, JobCarriesLanguageRuntimeAndJitAllowance) {
  harness_job job = gemm_job();
  job_candidate cuda{"0", "/tmp/x.so", "run", {"GMMA", "TMA"}, true, true};
  job_candidate triton{"1", "/cache/triton/abc/kernel.py", "run", {"GMMA", "TMA"}, false, false, "triton"};
  job.candidates = {cuda, triton};
  job.triton = triton_runtime{"/usr/bin/python3", "/src/gpu/runner_py/ptxbench_triton_runner.py",
                              "/bin/libptxbench_runner_py.so"};
  job.options.jit_timeout_s = 123;
  auto back = harness_job_from_json(ordered_json::parse(to_json(job).dump()));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->candidates.at(0).language, "cuda");
  EXPECT_EQ(back->candidates.at(1).language, "triton");
  EXPECT_EQ(back->candidates.at(1).shared_object, "/cache/triton/abc/kernel.py");
  ASSERT_TRUE(back->triton.has_value());
  EXPECT_EQ(back->triton->python, "/usr/bin/python3");
  EXPECT_EQ(back->triton->helper, "/bin/libptxbench_runner_py.so");
  EXPECT_EQ(back->options.jit_timeout_s, 123);
}

TEST(TritonProtocol, AJobWithoutTritonFieldsReadsAsCuda) {
  harness_job job = gemm_job();
  job.candidates = {{"0", "/tmp/x.so", "run", {"GMMA"}, true, true}};
  ordered_json j = to_json(job);
  j["candidates"][0].erase("language");
  j["options"].erase("jit_timeout_s");
  auto back = harness_job_from_json(j);
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->candidates.at(0).language, "cuda");
  EXPECT_FALSE(back->triton.has_value());
  EXPECT_EQ(back->options.jit_timeout_s, 300);
}

TEST(TritonProtocol, UnknownLanguageIsRefused) {
  harness_job job = gemm_job();
  job.candidates = {{"0", "/tmp/x.so", "run", {"GMMA"}, true, true, "tilelang"}};
  auto back = harness_job_from_json(to_json(job));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.err().message.find("unknown language 'tilelang'"), std::string::npos);
}

TEST(TritonProtocol, ResultKeepsTheCompiledCubins) {
  gpu_stage_result r;
  r.id = "1";
  r.decided = {eval_outcome::passed, std::nullopt, "correct", ""};
  r.jit_cubins = {"/w/c1-triton-kernels/000-gemm_kernel.cubin"};
  r.jit_kernels = {"gemm_kernel"};
  auto back = gpu_stage_result_from_json(to_json(r));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->jit_cubins, r.jit_cubins);
  EXPECT_EQ(back->jit_kernels, r.jit_kernels);
  gpu_stage_result plain;
  plain.decided = r.decided;
  EXPECT_FALSE(to_json(plain).contains("jit_cubins"));  // CUDA results stay as they were
}

}  // namespace
}  // namespace ptxbench
