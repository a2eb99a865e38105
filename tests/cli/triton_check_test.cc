// `ptxbench check` on Triton candidates, as a black box, on a machine without a GPU: the Python
// gate, the byte-compile build, no link gate, and the static SASS check honestly deferred
// ("Triton compiles on the GPU; checked after warm-up"). Every example of examples/triton ends
// where its manifest says the CPU stages can tell (gate rejections) or as `built`.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli/cli_test_support.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "core/process.h"
#include "core/sha256.h"
#include "test_support.h"

namespace ptxbench {
namespace {
namespace fs = std::filesystem;
using testing::run_cli;

#define SKIP_WITHOUT_PYTHON() \
  if (!find_executable("python3")) GTEST_SKIP() << "python3 not found on PATH (the Triton gate needs it)"

fs::path triton_example(const std::string& name) { return testing::repo_root() / "examples" / "triton" / name; }

ordered_json triton_check_json(const std::vector<std::string>& args, int* exit_code = nullptr) {
  std::vector<std::string> argv = {"check"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  auto r = run_cli(argv);
  EXPECT_TRUE(r.started);
  if (exit_code) *exit_code = r.exit_code;
  auto j = parse_json(r.out, "check output");
  EXPECT_TRUE(j.ok()) << r.out << r.err;
  return j.ok() ? *j : ordered_json();
}

const ordered_json& stage(const ordered_json& v, const std::string& name) {
  for (const auto& s : v["stages"])
    if (s["stage"] == name) return s;
  static const ordered_json none;
  return none;
}

TEST(TritonCheck, GemmIsBuiltWithStaticSassDeferredToTheGpu) {
  SKIP_WITHOUT_PYTHON();
  int code = -1;
  auto v = triton_check_json({triton_example("gemm_tl_dot.py").string(), "--task", "gemm_n7168_k5120"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(v["outcome"], "built");
  EXPECT_EQ(v["status"], nullptr);  // no FlashInfer status: nothing ran
  EXPECT_EQ(stage(v, "source_gate")["outcome"], "passed");
  EXPECT_EQ(stage(v, "build")["outcome"], "passed");
  EXPECT_EQ(stage(v, "build")["details"]["kind"], "python byte-compile");
  EXPECT_EQ(stage(v, "link_gate")["outcome"], "deferred");
  EXPECT_EQ(stage(v, "static_sass")["outcome"], "deferred");
  EXPECT_EQ(stage(v, "static_sass")["summary"], "Triton compiles on the GPU; checked after warm-up");
  EXPECT_EQ(v["target_instructions"]["verdict"], "deferred");
  EXPECT_NE(v["message"].get<std::string>().find("Triton compiles on the GPU; checked after warm-up"), std::string::npos);
  // The artifact is the source itself, stored content-addressed, with its sha256.
  auto text = read_file(triton_example("gemm_tl_dot.py"), 1u << 20);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(v["build"]["artifact_sha256"], sha256_hex(*text));
  EXPECT_EQ(fs::path(v["build"]["artifact"].get<std::string>()).filename(), "kernel.py");
  EXPECT_NE(v["build"]["nvcc_version"].get<std::string>().find("Python 3."), std::string::npos);
}

TEST(TritonCheck, TorchMatmulIsRejectedNamingRuleAndLine) {
  SKIP_WITHOUT_PYTHON();
  int code = -1;
  auto v = triton_check_json({triton_example("fail_torch_matmul.py").string(), "--task", "gemm_n7168_k5120"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(v["outcome"], "rejected");
  EXPECT_EQ(v["status"], "COMPILE_ERROR");
  EXPECT_EQ(v["deciding_stage"], "source_gate");
  EXPECT_EQ(v["gate_findings"][0]["rule"], "torch-compute");
  EXPECT_EQ(v["gate_findings"][0]["line"], 42);
  EXPECT_EQ(v["gate_findings"][0]["file"], "kernel.py");
  EXPECT_EQ(v["message"], "rejected by the Triton source gate (torch-compute at kernel.py:42)");
  EXPECT_EQ(stage(v, "build")["outcome"], "skipped");
}

TEST(TritonCheck, WhatPythonParsesButCannotCompileIsACompileErrorOfTheBuild) {
  SKIP_WITHOUT_PYTHON();
  auto v = triton_check_json({(testing::fixtures_dir() / "triton" / "nonlocal_unbound.py").string(), "--task",
                       "gemm_n7168_k5120"});
  EXPECT_EQ(v["outcome"], "compile_error");
  EXPECT_EQ(v["deciding_stage"], "build");
  EXPECT_EQ(stage(v, "source_gate")["outcome"], "passed");
  EXPECT_NE(v["log"].get<std::string>().find("kernel.py:14:9: SyntaxError: no binding for nonlocal 'undefined_name'"),
            std::string::npos)
      << v["log"];
}

TEST(TritonCheck, ASolutionJsonWithLanguageTriton) {
  SKIP_WITHOUT_PYTHON();
  auto text = read_file(triton_example("attention_fwd_causal.py"), 1u << 20);
  ASSERT_TRUE(text.ok());
  ordered_json sol = {{"name", "attn_causal"},
                      {"definition", "mha_with_lse_d128_causal"},
                      {"author", "test"},
                      {"spec",
                       {{"language", "triton"},
                        {"target_hardware", {"H200"}},
                        {"entry_point", "kernel.py::run"},
                        {"dependencies", ordered_json::array()},
                        {"destination_passing_style", true}}},
                      {"sources", {{{"path", "kernel.py"}, {"content", *text}}}}};
  fs::path file = fs::temp_directory_path() / "ptxbench-triton-solution.json";
  std::ofstream(file) << sol.dump(2);
  auto v = triton_check_json({file.string()});
  fs::remove(file);
  EXPECT_EQ(v["task"], "mha_with_lse_d128_causal");
  EXPECT_EQ(v["outcome"], "built");
  EXPECT_EQ(stage(v, "static_sass")["outcome"], "deferred");
}

TEST(TritonCheck, ATritonSolutionMustBeOnePythonFile) {
  SKIP_WITHOUT_PYTHON();
  ordered_json sol = {{"name", "two"},
                      {"definition", "gemm_n7168_k5120"},
                      {"author", "test"},
                      {"spec",
                       {{"language", "triton"},
                        {"target_hardware", {"H200"}},
                        {"entry_point", "kernel.py::run"},
                        {"dependencies", ordered_json::array()},
                        {"destination_passing_style", true}}},
                      {"sources", {{{"path", "kernel.py"}, {"content", "def run(): pass\n"}},
                                   {{"path", "helper.py"}, {"content", "x = 1\n"}}}}};
  fs::path file = fs::temp_directory_path() / "ptxbench-triton-two-files.json";
  std::ofstream(file) << sol.dump(2);
  auto v = triton_check_json({file.string()});
  fs::remove(file);
  EXPECT_EQ(v["outcome"], "rejected");
  EXPECT_NE(v["message"].get<std::string>().find("one Python file"), std::string::npos);
}

TEST(TritonCheck, EveryExampleEndsAsItsManifestSaysTheCpuStagesCanTell) {
  SKIP_WITHOUT_PYTHON();
  auto text = read_file(testing::repo_root() / "examples" / "triton" / "manifest.json", 1u << 20);
  ASSERT_TRUE(text.ok());
  auto manifest = parse_json(*text, "manifest");
  ASSERT_TRUE(manifest.ok());
  int checked = 0;
  for (const auto& e : (*manifest)["examples"]) {
    const std::string file = e["file"].get<std::string>();
    SCOPED_TRACE(file);
    ASSERT_TRUE(fs::exists(triton_example(file)));
    auto v = triton_check_json({triton_example(file).string(), "--task", e["task"].get<std::string>()});
    if (e.value("expected_stage", "") == "source_gate") {
      EXPECT_EQ(v["outcome"], e["expected_outcome"]);
      EXPECT_EQ(v["status"], e["expected_status"]);
      EXPECT_NE(v["message"].get<std::string>().find(e["expected_message"].get<std::string>()), std::string::npos)
          << v["message"];
    } else {
      EXPECT_EQ(v["outcome"], "built") << v["message"];  // the rest is decided on the GPU
    }
    ++checked;
  }
  EXPECT_GE(checked, 14);
}

}  // namespace
}  // namespace ptxbench
