// The harness's side of the trusted recompile (gpu/harness/triton_recompile.h) against a stand-in
// script (fake_recompile/fake_recompile.py): each cubin's hash is computed from the file, never taken
// from the script's answer; a source problem is the candidate's, a crash is infrastructure; results
// are cached by their inputs, a source problem is not.
#include <gtest/gtest.h>

#include <fstream>

#include "core/file_io.h"
#include "core/sha256.h"
#include "gpu/harness/triton_recompile.h"
#include "test_support.h"

namespace ptxbench::gpu {
namespace {

namespace fs = std::filesystem;

struct recompile_fixture {
  fs::path dir = testing::make_temp_dir("triton-recompile");
  recompile_request q;
  explicit recompile_fixture(const std::string& source) {
    std::ofstream(dir / "kernel.py") << source;
    q.python = "/usr/bin/python3";
    q.script = testing::repo_root() / "tests/harness/fake_recompile/fake_recompile.py";
    q.source = dir / "kernel.py";
    q.cache_dir = dir / "cache";
    q.kernels = {ordered_json{{"id", "cap1"}, {"jit", "gemm_kernel"}, {"specialization_data", "{}"}}};
    q.timeout_s = 60;
  }
  ~recompile_fixture() { fs::remove_all(dir); }
  /// What the stand-in got: {"args", "policy", "tmpdir"} (the last run's).
  ordered_json seen() const {
    for (auto& e : fs::recursive_directory_iterator(q.cache_dir))
      if (e.path().filename() == "args.json") return ordered_json::parse(*read_text_file(e.path(), 1u << 20));
    return nullptr;
  }
  int runs() const {
    int n = 0;
    for (auto& e : fs::recursive_directory_iterator(q.cache_dir))
      if (e.path().filename() == "runs.log") {
        std::ifstream in(e.path());
        std::string line;
        while (std::getline(in, line)) ++n;
      }
    return n;
  }
};

TEST(TritonRecompile, HashesTheCubinItselfAndCachesTheResult) {
  recompile_fixture f("import triton\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_TRUE(r) << r.err().message;
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_EQ(r->kernels[0].id, "cap1");
  EXPECT_EQ(r->kernels[0].sha256, sha256_hex("gemm_kernel")) << "the script's own claim is ignored";
  EXPECT_EQ(r->triton_version, "9.9-fake");
  EXPECT_FALSE(r->cache_hit);
  auto again = recompile_triton_kernels(f.q);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->kernels[0].sha256, r->kernels[0].sha256);
  EXPECT_EQ(f.runs(), 1);
  f.q.kernels[0]["specialization_data"] = "{\"options\": {}}";
  ASSERT_TRUE(recompile_triton_kernels(f.q));
  EXPECT_EQ(f.runs(), 2) << "another compile record is another key";
}

TEST(TritonRecompile, ASourceProblemIsTheCandidatesAndIsNotCached) {
  recompile_fixture f("SOURCE_PROBLEM\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_TRUE(r->kernels.empty());
  EXPECT_NE(r->source_problem.find("does not compile from kernel.py alone"), std::string::npos) << r->source_problem;
  ASSERT_TRUE(recompile_triton_kernels(f.q));
  EXPECT_EQ(f.runs(), 2);
}

TEST(TritonRecompile, ACrashIsInfrastructure) {
  recompile_fixture f("CRASH\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("exited with code 3"), std::string::npos) << r.err().message;
}

TEST(TritonRecompile, ACubinOutsideItsFolderIsRefused) {
  recompile_fixture f("WRONG_NAME\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("outside its folder"), std::string::npos) << r.err().message;
}

TEST(TritonRecompile, ConfinedByTheRunnersPolicyWithItsOwnFolderAndLimits) {
  recompile_fixture f("import triton\n");
  f.q.helper = "/opt/ptxbench/bin/libptxbench_runner_py.so";
  f.q.cpu_limit_s = 123;
  f.q.memory_limit_bytes = 3ull << 30;
  auto r = recompile_triton_kernels(f.q);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->sandbox.value("applied", false), true);
  auto seen = f.seen();
  ASSERT_TRUE(seen.is_object());
  const auto& args = seen["args"];
  EXPECT_EQ(args.value("--helper", ""), f.q.helper.string());
  EXPECT_FALSE(args.contains("--no-sandbox"));
  const std::string out = args.value("--out", "");
  const auto& policy = seen["policy"];
  ASSERT_TRUE(policy.is_object()) << seen.dump();
  EXPECT_EQ(policy["scratch_dir"], out) << "the only writable folder is the recompile's output";
  EXPECT_EQ(seen["tmpdir"], out) << "Triton's temporary files land there too";
  EXPECT_EQ(fs::path(out).filename(), "out") << "not the folder holding the lock, the inputs and the done mark";
  EXPECT_EQ(policy["limits"]["cpu_seconds"], 123);
  EXPECT_EQ(policy["limits"]["data_bytes"], 3ull << 30);
  EXPECT_EQ(policy["mode"], "enforce");
  bool reads_source = false;
  for (const auto& p : policy["read_paths"]) reads_source |= p == f.q.source.string();
  EXPECT_TRUE(reads_source) << policy["read_paths"].dump();
}

TEST(TritonRecompile, WithoutTheSandboxItIsToldSoExplicitly) {
  recompile_fixture f("import triton\n");
  f.q.sandbox = false;
  auto r = recompile_triton_kernels(f.q);
  ASSERT_TRUE(r) << r.err().message;
  auto seen = f.seen();
  EXPECT_EQ(seen["args"].value("--no-sandbox", false), true);
  EXPECT_FALSE(seen["args"].contains("--sandbox"));
  EXPECT_TRUE(seen["policy"].is_null());
}

TEST(TritonRecompile, ARecompileThatRanUnconfinedIsRefused) {
  recompile_fixture f("UNCONFINED\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("ran without its sandbox"), std::string::npos) << r.err().message;
}

TEST(TritonRecompile, ASandboxViolationIsInfrastructureNotAVerdict) {
  recompile_fixture f("VIOLATION\n");
  auto r = recompile_triton_kernels(f.q);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("stopped by its sandbox (sandbox: attempted execve)"), std::string::npos)
      << r.err().message;
}

TEST(TritonRecompile, RunningOutOfCpuTimeIsTheCandidates) {
  recompile_fixture f("SPIN\n");
  f.q.cpu_limit_s = 7;
  auto r = recompile_triton_kernels(f.q);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->source_problem, "recompiling its kernels from kernel.py used more than 7 s of CPU time");
  EXPECT_TRUE(r->kernels.empty());
}

launch_plan plan_of(std::vector<std::pair<std::string, std::string>> kernels) {  // (name, cubin hash)
  launch_plan p;
  for (auto& [name, sha] : kernels) {
    plan_kernel k;
    k.name = name;
    k.cubin_sha256 = sha;
    p.kernels.push_back(k);
  }
  return p;
}

TEST(TritonProvenance, EachPlanKernelHasItsOwnCubinAndEntry) {
  std::vector<recompiled_kernel> rec = {{"aa11", "gemm_kernel", "aa11"}, {"bb22", "epilogue", "bb22"}};
  auto ok = check_provenance(plan_of({{"gemm_kernel", "aa11"}, {"epilogue", "bb22"}}), rec,
                             {{"aa11", "gemm_kernel"}, {"bb22", "epilogue"}});
  ASSERT_TRUE(ok) << ok.err().message;
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[1]["kernel"], "epilogue");
  EXPECT_EQ((*ok)[0]["cubin_sha256"], "aa11");
}

TEST(TritonProvenance, ACubinThatDoesNotRecompileIsRefused) {
  std::vector<recompiled_kernel> rec = {{"aa11", "gemm_kernel", "ff99"}};
  auto r = check_provenance(plan_of({{"gemm_kernel", "aa11"}}), rec, {{"aa11", "gemm_kernel"}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("is not what kernel.py compiles to (captured cubin aa11, recompiled ff99)"),
            std::string::npos)
      << r.err().message;
  auto none = check_provenance(plan_of({{"gemm_kernel", "aa11"}}), {}, {});
  ASSERT_FALSE(none);
  EXPECT_NE(none.err().message.find("recompiled none"), std::string::npos);
}

TEST(TritonProvenance, AKernelNamedForAnotherKernelsCubinIsRefused) {
  // forge_kernel_name.py: half_k_kernel ran, the capture named gemm_kernel's cubin for it, and that
  // cubin does recompile from kernel.py, byte for byte — but its entry is gemm_kernel.
  std::vector<recompiled_kernel> rec = {{"aa11", "gemm_kernel", "aa11"}};
  auto r = check_provenance(plan_of({{"half_k_kernel", "aa11"}}), rec, {{"aa11", "gemm_kernel"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().message,
            "kernel provenance: the plan launches half_k_kernel, but the cubin kernel.py compiles to for it "
            "(gemm_kernel, aa11) defines gemm_kernel (a capture that names one kernel's cubin for another)");
}

}  // namespace
}  // namespace ptxbench::gpu
