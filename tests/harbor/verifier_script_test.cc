// The exported tests/test.sh, run as Harbor runs it (bash, after the agent) but outside a container:
// PTXBENCH_WORKSPACE, PTXBENCH_VERIFIER_DIR and PTXBENCH_EXECUTABLE stand for /workspace, /logs/verifier
// and the image's ptxbench, and the service is `ptxbench serve --evaluator fake` (verdicts from
// markers in the kernel). A passing kernel earns 1, a failing or missing one 0, and a service that
// cannot be reached no reward at all.
#include <gtest/gtest.h>

#include <optional>

#include "core/file_io.h"
#include "core/json_check.h"
#include "core/process.h"
#include "fake_service.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace {
namespace fs = std::filesystem;

// A file's bytes, or "" when it cannot be read (the assertion then shows the difference).
std::string contents(const fs::path& p) {
  auto text = read_file(p, 1u << 24);
  return text ? *text : "";
}

const std::string k_task = "gemm_n7168_k5120";
const std::string k_abi =
    "#include <ptxbench/abi.h>\n__global__ void k() {}\nvoid run(ptxbench::tensor_view A, ptxbench::tensor_view B, "
    "ptxbench::tensor_view C, cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, "
    "PTXBENCH_BFLOAT16)\n";

class HarborVerifier : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_dir = new fs::path(make_temp_dir("harbor-verifier"));
    auto r = run_process({.argv = {(bin_dir() / "ptxbench").string(), "--root", repo_root().string(), "tasks", "export",
                                   "--format", "harbor", "--out", (*s_dir / "tasks").string(), "--tasks", k_task},
                          .timeout_s = 120});
    ASSERT_TRUE(r.succeeded()) << r.err;
    s_service = new fake_service(*s_dir / "service");
  }
  static void TearDownTestSuite() {
    delete s_service;
    fs::remove_all(*s_dir);
    delete s_dir;
  }

  struct verifier_run {
    process_result process;
    fs::path out;
    std::optional<std::string> reward;
    ordered_json summary;
  };

  // Runs tests/test.sh with `kernel` as the agent's final file (nullopt: the agent left none).
  verifier_run verify(const std::string& name, const std::optional<std::string>& kernel, const std::string& url) {
    const fs::path workspace = *s_dir / name / "workspace", out = *s_dir / name / "verifier";
    fs::create_directories(workspace);
    if (kernel) {
      EXPECT_TRUE(write_file_atomic(workspace / "kernel.cu", *kernel));
    }
    verifier_run v;
    v.out = out;
    v.process = run_process({.argv = {"bash", (*s_dir / "tasks" / k_task / "tests" / "test.sh").string()},
                             .env_overrides = {{"PTXBENCH_WORKSPACE", workspace.string()},
                                               {"PTXBENCH_VERIFIER_DIR", out.string()},
                                               {"PTXBENCH_EXECUTABLE", (bin_dir() / "ptxbench").string()},
                                               {"PTXBENCH_ROOT", repo_root().string()},
                                               {"PTXBENCH_CACHE", (*s_dir / name / "cache").string()},
                                               {"PTXBENCH_SERVICE_URL", url}},
                             .timeout_s = 120});
    if (auto r = read_file(out / "reward.txt", 100)) v.reward = *r;
    if (auto s = read_file(out / "ptxbench.json", 1u << 20)) v.summary = ordered_json::parse(*s, nullptr, false);
    return v;
  }

  static fs::path* s_dir;
  static fake_service* s_service;
};

fs::path* HarborVerifier::s_dir = nullptr;
fake_service* HarborVerifier::s_service = nullptr;

TEST_F(HarborVerifier, ACorrectTargetCorrectKernelEarnsOneWithItsSpeedupAndVerdict) {
  ASSERT_TRUE(s_service->ready()) << "see " << s_service->log();
  auto v = verify("pass", k_abi + "// wgmma.mma_async FAKE_SPEEDUP=1.25\n", s_service->url());
  EXPECT_EQ(v.process.exit_code, 0) << v.process.out << v.process.err;
  EXPECT_EQ(v.reward, "1\n");
  EXPECT_EQ(contents(v.out / "speedup.txt"), "1.25\n");
  auto verdict = read_file(v.out / "verdict.json", 1u << 24);
  ASSERT_TRUE(verdict);
  auto j = ordered_json::parse(*verdict, nullptr, false);
  EXPECT_EQ(j.value("format", ""), "ptxbench.verdict/1");
  EXPECT_EQ(j.value("outcome", ""), "passed");
  EXPECT_EQ(j.value("target_correct", false), true);
  EXPECT_EQ(v.summary.value("format", ""), "ptxbench.harbor-verifier/1");
  EXPECT_EQ(v.summary.value("task", ""), k_task);
  EXPECT_EQ(v.summary.value("variant", ""), "base");
  EXPECT_EQ(v.summary.value("kernel_state", ""), "present");
  EXPECT_EQ(v.summary.value("exit_code", -1), 0);
  EXPECT_EQ(v.summary.value("reward", -1), 1);
  EXPECT_EQ(contents(v.out / "kernel.cu"), k_abi + "// wgmma.mma_async FAKE_SPEEDUP=1.25\n");
  EXPECT_NE(v.process.out.find("passed, target-correct: reward 1"), std::string::npos) << v.process.out;
}

TEST_F(HarborVerifier, AWrongOrNotTargetCorrectKernelEarnsZero) {
  ASSERT_TRUE(s_service->ready()) << "see " << s_service->log();
  auto wrong = verify("wrong", k_abi + "// wgmma FAKE_WRONG\n", s_service->url());
  EXPECT_EQ(wrong.process.exit_code, 0) << wrong.process.err;
  EXPECT_EQ(wrong.reward, "0\n");
  EXPECT_EQ(wrong.summary.value("outcome", ""), "incorrect_numerical");
  EXPECT_EQ(wrong.summary.value("exit_code", -1), 1);
  EXPECT_EQ(contents(wrong.out / "speedup.txt"), "none\n");
  EXPECT_TRUE(fs::exists(wrong.out / "verdict.json"));
  // Correct, fast, but no wgmma/TMA executed: not target-correct, so no reward either.
  auto plain = verify("plain", k_abi + "// mma.sync FAKE_SPEEDUP=2\n", s_service->url());
  EXPECT_EQ(plain.reward, "0\n");
  EXPECT_EQ(plain.summary.value("outcome", ""), "passed");
  EXPECT_EQ(plain.summary.value("target_correct", true), false);
  EXPECT_EQ(plain.summary.value("exit_code", -1), 4);
  auto broken = verify("broken", k_abi + "#error does not compile\n", s_service->url());
  EXPECT_EQ(broken.reward, "0\n");
  EXPECT_EQ(broken.summary.value("outcome", ""), "compile_error");
}

TEST_F(HarborVerifier, AMissingEmptyOrBinaryKernelEarnsZeroWithoutAnEvaluation) {
  const std::string url = s_service->url();
  auto missing = verify("missing", std::nullopt, url);
  EXPECT_EQ(missing.process.exit_code, 0) << missing.process.err;
  EXPECT_EQ(missing.reward, "0\n");
  EXPECT_EQ(missing.summary.value("kernel_state", ""), "missing");
  EXPECT_EQ(missing.summary.value("outcome", ""), "no_code");
  EXPECT_FALSE(fs::exists(missing.out / "verdict.json"));
  EXPECT_EQ(verify("empty", std::string(), url).summary.value("kernel_state", ""), "empty");
  auto binary = verify("binary", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10), url);
  EXPECT_EQ(binary.reward, "0\n");
  EXPECT_EQ(binary.summary.value("kernel_state", ""), "not_text");
  EXPECT_EQ(verify("latin1", "// caf\xe9\n" + k_abi, url).summary.value("kernel_state", ""), "not_text");
}

TEST_F(HarborVerifier, NoVerdictMeansNoRewardRatherThanAZero) {
  // A service URL ptxbench refuses (no verdict comes back) and no URL at all: the verifier writes no
  // reward.txt and exits 3, so Harbor reports the trial as failed instead of scoring the agent 0. (A
  // service that is down is waited for: the client rides out restarts for up to 15 minutes.)
  auto v = verify("bad-url", k_abi + "// wgmma\n", "https://127.0.0.1:1");
  EXPECT_EQ(v.process.exit_code, 3) << v.process.out << v.process.err;
  EXPECT_FALSE(v.reward.has_value());
  EXPECT_TRUE(v.summary.contains("reward") && v.summary["reward"].is_null()) << v.summary.dump();
  EXPECT_NE(v.summary.value("message", "").find("expected http://HOST:PORT"), std::string::npos) << v.summary.dump();
  auto unset = verify("unset", k_abi + "// wgmma\n", "");
  EXPECT_EQ(unset.process.exit_code, 3);
  EXPECT_FALSE(unset.reward.has_value());
  EXPECT_NE(unset.process.out.find("PTXBENCH_SERVICE_URL is not set"), std::string::npos) << unset.process.out;
}

}  // namespace
}  // namespace ptxbench::testing
