#include <gtest/gtest.h>

#include "cli/cli_test_support.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "test_support.h"

namespace ptxbench {
namespace {
using testing::one_line;
using testing::run_cli;

std::string kernel(const std::string& name) { return (testing::fixtures_dir() / "kernels" / name).string(); }

using testing::have_nvcc;

ordered_json check_json(const std::string& file, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"check", kernel(file), "--task", "gemm_n7168_k5120", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_cli(args);
  EXPECT_TRUE(r.started);
  auto j = parse_json(r.out, file);
  EXPECT_TRUE(j.ok()) << r.out << r.err;
  return j.ok() ? *j : ordered_json();
}

TEST(CheckCli, CublasCallIsRejectedBySourceGate) {
  auto r = run_cli({"check", kernel("cublas_call.cu"), "--task", "gemm_n7168_k5120"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("rejected by the source gate (vendor-library at cublas_call.cu:3)"), std::string::npos) << r.out;
  auto j = check_json("cublas_call.cu");
  EXPECT_EQ(j["status"], "COMPILE_ERROR");
  EXPECT_EQ(j["deciding_stage"], "source_gate");
  EXPECT_EQ(j["trace"]["evaluation"]["status"], "COMPILE_ERROR");
}

TEST(CheckCli, DlopenIsRejectedBySourceGate) {
  auto j = check_json("dlopen_cublas.cu");
  EXPECT_EQ(j["gate_findings"][0]["rule"], "dynamic-loading");
}

TEST(CheckCli, CommentMentioningCudnnBuilds) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto r = run_cli({"check", kernel("naive_gemm_sm90a.cu"), "--task", "gemm_n7168_k5120"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Issue 12: the verdict line once read "verdict: built [—] ..."; the bracket (an empty FlashInfer
  // status) is gone, and no status is shown for "built", where nothing ran.
  EXPECT_NE(r.out.find("\nverdict: built — target instructions: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[—]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FlashInfer status"), std::string::npos) << r.out;
  auto j = check_json("naive_gemm_sm90a.cu");
  EXPECT_EQ(j["outcome"], "built");
  EXPECT_EQ(j["stages"][0]["outcome"], "passed");
  EXPECT_TRUE(j["build"]["cache_hit"].get<bool>());  // the second build of the same source
}

TEST(CheckCli, PragmaLinkedCublasIsRejectedByLinkGate) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto j = check_json("pragma_link_cublas.cu");
  EXPECT_EQ(j["deciding_stage"], "link_gate");
  EXPECT_EQ(j["gate_findings"][0]["rule"], "vendor-library");
  EXPECT_NE(j["message"].get<std::string>().find("cublasCreate_v2"), std::string::npos);
}

TEST(CheckCli, CompileErrorCarriesNvccLog) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto j = check_json("syntax_error.cu");
  EXPECT_EQ(j["status"], "COMPILE_ERROR");
  EXPECT_EQ(j["outcome"], "compile_error");
  EXPECT_NE(j["log"].get<std::string>().find("syntax_error.cu(4): error: identifier \"undeclared_value\""),
            std::string::npos);
}

TEST(CheckCli, Sm100aKernelBuildsForB200AndSaysStaticOnly) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto j = check_json("tcgen05_sm100a.cu", {"--target", "b200"});
  EXPECT_EQ(j["outcome"], "built");
  EXPECT_EQ(j["arch"], "sm_100a");
  EXPECT_NE(j["message"].get<std::string>().find("verified statically only"), std::string::npos);
  auto again = check_json("tcgen05_sm100a.cu", {"--target", "b200"});
  EXPECT_TRUE(again["build"]["cache_hit"].get<bool>());
}

// A candidate that can never run is not "built": the link gate reads the artifact's exports.
TEST(CheckCli, AFileThatExportsNoEntryIsACompileError) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  for (const char* file : {"whitespace_only.cu", "no_export.cu"}) {
    auto r = run_cli({"check", kernel(file), "--task", "gemm_n7168_k5120"});
    EXPECT_EQ(r.exit_code, 1) << file << r.out << r.err;
    auto j = check_json(file);
    EXPECT_EQ(j["outcome"], "compile_error") << file;
    EXPECT_EQ(j["deciding_stage"], "link_gate") << file;
    EXPECT_NE(j["message"].get<std::string>().find("does not export ptxbench_entry_run: end the file with "
                                                    "PTXBENCH_EXPORT(run, <one dtype per tensor: A, B, C>)"),
              std::string::npos)
        << j["message"];
  }
}

TEST(CheckCli, AnExportForTheWrongTensorsIsRefusedBeforeItRuns) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto arity = check_json("wrong_arity_export.cu");
  EXPECT_EQ(arity["outcome"], "incorrect_shape");
  EXPECT_EQ(arity["status"], "INCORRECT_SHAPE");
  EXPECT_EQ(arity["message"], "run is exported for 2 tensor(s) but the task passes 3 (A, B, C: inputs, then outputs)");
  auto dtype = check_json("wrong_dtype_export.cu");
  EXPECT_EQ(dtype["outcome"], "incorrect_dtype");
  EXPECT_EQ(dtype["message"], "run: argument 0 (A) is exported as float32 but the task passes bfloat16");
  // A dtype list that does not match the function's parameters does not even compile.
  auto count = check_json("export_count_mismatch.cu");
  EXPECT_EQ(count["outcome"], "compile_error");
  EXPECT_NE(count["log"].get<std::string>().find("must list one dtype per tensor parameter of run"), std::string::npos)
      << count["log"];
}

TEST(CheckCli, AKernelAbiVersion1BuildStillPassesTheCpuStages) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto j = check_json("abi_v1_plain_tiled.cu");
  EXPECT_EQ(j["outcome"], "built") << j["message"];
  EXPECT_NE(j["stages"][2]["summary"].get<std::string>().find("exports run (kernel ABI v1 or unrecorded signature)"),
            std::string::npos)
      << j["stages"][2]["summary"];
  auto v2 = check_json("naive_gemm_sm90a.cu");
  EXPECT_NE(v2["stages"][2]["summary"].get<std::string>().find("exports run (kernel ABI v2, 3 tensors)"),
            std::string::npos)
      << v2["stages"][2]["summary"];
}

TEST(CheckCli, MalformedInputsGiveOneLineErrors) {
  auto dir = testing::make_temp_dir("cli");
  ASSERT_TRUE(write_file_atomic(dir / "bad.json", "{\"name\": ").ok());
  ASSERT_TRUE(write_file_atomic(dir / "types.json", R"({"name": 1, "definition": "gemm_n7168_k5120"})").ok());
  ASSERT_TRUE(write_file_atomic(dir / "empty.cu", "").ok());
  ASSERT_TRUE(write_file_atomic(dir / "binary.cu", std::string("\x7f" "ELF\0\0\1", 7)).ok());
  struct expectation {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<expectation> cases = {
      {{"check", (dir / "bad.json").string()}, "invalid JSON at line 1"},
      {{"check", (dir / "types.json").string()}, "types.json.name: expected string, got integer"},
      {{"check", kernel("naive_gemm_sm90a.cu"), "--task", "gemm"}, "unknown task 'gemm'"},
      {{"check", (dir / "missing.cu").string(), "--task", "gemm_n7168_k5120"}, "no such file"},
      {{"check", (dir / "empty.cu").string(), "--task", "gemm_n7168_k5120"}, "file is empty"},
      {{"check", (dir / "binary.cu").string(), "--task", "gemm_n7168_k5120"}, "binary file"},
      {{"check", kernel("naive_gemm_sm90a.cu"), "--task", "gemm_n7168_k5120", "--target", "h300"},
       "unknown target 'h300'"},
      {{"check", kernel("naive_gemm_sm90a.cu")}, "--task is required"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.message << ": " << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.signal, 0);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench
