// Upstream PTXBench Solutions (spec.binding "tvm-ffi"): the binding is read strictly, selects the
// compatibility include folder, and the example kernels in upstream's exact form go through the CPU
// stages (`ptxbench check`, and the pipeline the service uses) to a built candidate.
#include <filesystem>

#include <gtest/gtest.h>

#include "build/binding_includes.h"
#include "cli/cli_test_support.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "eval/pipeline.h"
#include "suite/binding.h"
#include "suite/solution.h"
#include "test_support.h"

namespace ptxbench {
namespace {
namespace fs = std::filesystem;

fs::path example(const std::string& name) { return testing::repo_root() / "examples" / "upstream" / name; }

solution with_binding(std::optional<std::string> binding) {
  solution s;
  s.spec.binding = std::move(binding);
  return s;
}

ordered_json example_json(const std::string& name) {
  auto text = read_text_file(example(name), 1u << 20);
  EXPECT_TRUE(text.ok());
  auto j = parse_json(text.ok() ? *text : "{}", name);
  EXPECT_TRUE(j.ok());
  return j.ok() ? *j : ordered_json::object();
}

TEST(KernelBinding, PtxbenchIsTheDefaultAndTvmFfiIsUpstreams) {
  EXPECT_EQ(*binding_of(with_binding(std::nullopt)), kernel_binding::ptxbench);
  EXPECT_EQ(*binding_of(with_binding("ptxbench")), kernel_binding::ptxbench);
  EXPECT_EQ(*binding_of(with_binding("tvm-ffi")), kernel_binding::tvm_ffi);
  auto torch = binding_of(with_binding("torch"));
  ASSERT_FALSE(torch.ok());
  EXPECT_EQ(torch.err().message, "binding \"torch\" is not supported (expected \"ptxbench\" or \"tvm-ffi\")");
  EXPECT_FALSE(binding_of(with_binding("TVM-FFI")).ok()) << "spelled exactly as upstream spells it";
  EXPECT_EQ(binding_name(kernel_binding::tvm_ffi), "tvm-ffi");
}

TEST(KernelBinding, OnlyTvmFfiAddsTheCompatibilityHeaders) {
  const fs::path root = testing::repo_root();
  EXPECT_TRUE(build::binding_include_dirs(kernel_binding::ptxbench, root).empty());
  auto dirs = build::binding_include_dirs(kernel_binding::tvm_ffi, root);
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(dirs[0], root / "compat" / "tvm-ffi" / "include");
  for (const char* header : {"tvm/ffi/tvm_ffi.h", "tvm/ffi/extra/c_env_api.h", "tvm/ffi/container/tensor.h",
                             "tvm/ffi/container/shape.h", "tvm/ffi/function.h", "tvm/ffi/error.h", "tvm/ffi/dtype.h",
                             "dlpack/dlpack.h"})
    EXPECT_TRUE(fs::is_regular_file(dirs[0] / header)) << header;
  // Upstream kernels must not find the headers through the include folder every build gets.
  EXPECT_FALSE(fs::exists(root / "include" / "tvm"));
}

TEST(UpstreamExamples, SolutionJsonIsUpstreamsFormatAndEmbedsTheKernelFile) {
  for (const char* stem : {"gemm_tvm_ffi", "gemm_tvm_ffi_plain"}) {
    auto j = example_json(std::string(stem) + ".json");
    auto s = solution_from_json(j, stem);
    ASSERT_TRUE(s.ok()) << s.err().message;
    EXPECT_EQ(s->spec.binding, "tvm-ffi");
    EXPECT_EQ(s->spec.language, "cuda");
    EXPECT_EQ(s->spec.entry_point, "kernel.cu::run");
    EXPECT_EQ(s->spec.target_hardware, std::vector<std::string>{"H100"});
    EXPECT_TRUE(s->spec.dependencies.empty());
    auto cu = read_text_file(example(std::string(stem) + ".cu"), 1u << 20);
    ASSERT_TRUE(cu.ok());
    ASSERT_NE(s->find_source("kernel.cu"), nullptr);
    EXPECT_EQ(s->find_source("kernel.cu")->content, *cu)
        << stem << ".json no longer embeds " << stem << ".cu; regenerate it (docs/kernel-abi.md)";
    EXPECT_NE(cu->find("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, "), std::string::npos);
    EXPECT_EQ(cu->find("ptxbench"), std::string::npos) << "an upstream kernel knows nothing of PTXBench";
  }
}

TEST(UpstreamExamples, TheWgmmaExampleKeepsTheNativeExamplesDeviceCode) {
  auto native = read_text_file(testing::repo_root() / "examples" / "gemm" / "wgmma.cu", 1u << 20);
  auto upstream = read_text_file(example("gemm_tvm_ffi.cu"), 1u << 20);
  ASSERT_TRUE(native.ok() && upstream.ok());
  auto begin = native->find("// Byte offset of element (r, c)");
  auto end = native->find("void check_cuda(");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::string device_code = native->substr(begin, end - begin);
  while (!device_code.empty() && (device_code.back() == '\n' || device_code.back() == ' ')) device_code.pop_back();
  EXPECT_NE(upstream->find(device_code), std::string::npos)
      << "examples/upstream/gemm_tvm_ffi.cu no longer carries examples/gemm/wgmma.cu's device code";
}

TEST(UpstreamExamples, PtxbenchCheckBuildsTheWgmmaExample) {
  if (!testing::have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto r = testing::run_cli({"check", example("gemm_tvm_ffi.json").string(), "--json"});
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = parse_json(r.out, "check output");
  ASSERT_TRUE(j.ok()) << r.out << r.err;
  EXPECT_EQ((*j)["outcome"], "built") << (*j)["message"];
  EXPECT_EQ((*j)["task"], "gemm_n7168_k5120");
  std::string command = (*j)["build"]["command"].dump();
  EXPECT_NE(command.find("compat/tvm-ffi/include"), std::string::npos) << command;
  EXPECT_EQ(command.find("tvm_ffi\""), std::string::npos) << "no libtvm_ffi is linked: " << command;
  const auto& counts = (*j)["target_instructions"]["static_counts"];
  if (counts.is_object()) {  // null where the static SASS check is deferred (no cuobjdump here)
    EXPECT_GT(counts.value("GMMA", 0), 0) << (*j)["target_instructions"];
  }
}

TEST(UpstreamExamples, WithoutTheBindingTheTvmFfiHeadersAreNotThere) {
  if (!testing::have_nvcc()) GTEST_SKIP() << "needs nvcc";
  auto j = example_json("gemm_tvm_ffi_plain.json");
  j["spec"].erase("binding");
  fs::path dir = testing::make_temp_dir("no-binding");
  ASSERT_TRUE(write_file_atomic(dir / "solution.json", j.dump()).ok());
  auto r = testing::run_cli({"check", (dir / "solution.json").string(), "--json"});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto v = parse_json(r.out, "check output");
  ASSERT_TRUE(v.ok()) << r.out << r.err;
  EXPECT_EQ((*v)["outcome"], "compile_error");
  EXPECT_NE((*v)["message"].get<std::string>().find("fatal error: tvm/ffi/extra/c_env_api.h: No such file"),
            std::string::npos) << (*v)["message"];
}

TEST(UpstreamExamples, AnUnsupportedBindingIsAOneLineUsageError) {
  auto j = example_json("gemm_tvm_ffi_plain.json");
  j["spec"]["binding"] = "torch";
  fs::path dir = testing::make_temp_dir("torch-binding");
  ASSERT_TRUE(write_file_atomic(dir / "solution.json", j.dump()).ok());
  auto r = testing::run_cli({"check", (dir / "solution.json").string()});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(testing::one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("binding \"torch\" is not supported"), std::string::npos) << r.err;
}

// The service hands Solutions straight to the pipeline, without the CLI's checks: an unsupported
// binding must still end as the candidate's compile error, before anything is compiled.
TEST(UpstreamExamples, ThePipelineRejectsAnUnsupportedBindingAsACompileError) {
  if (!testing::have_nvcc()) GTEST_SKIP() << "needs nvcc (the build stage looks for it first)";
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok()) << s.err().message;
  auto sol = solution_from_json(example_json("gemm_tvm_ffi_plain.json"), "example");
  ASSERT_TRUE(sol.ok());
  sol->spec.binding = "torch";
  eval::pipeline_config config;
  config.root = testing::repo_root();
  config.cache_dir = testing::make_temp_dir("pipeline-cache");
  config.cuda_root = PTXBENCH_CUDA_ROOT_FOR_TESTS;
  verdict v;
  v.mode = eval_mode::check;
  auto built = eval::run_cpu_stages(*s->find_task("gemm_n7168_k5120"), *s->find_target("h200"), *sol, config, v);
  fs::remove_all(config.cache_dir);
  ASSERT_TRUE(built.ok()) << built.err().message;
  EXPECT_FALSE(built->has_value());
  EXPECT_EQ(v.outcome(), eval_outcome::compile_error);
  EXPECT_EQ(v.status(), eval_status::COMPILE_ERROR);
  EXPECT_EQ(v.decided.stage, stage_id::build);
  EXPECT_EQ(v.decided.message, "binding \"torch\" is not supported (expected \"ptxbench\" or \"tvm-ffi\")");
  EXPECT_FALSE(v.build.attempted);
}

}  // namespace
}  // namespace ptxbench
