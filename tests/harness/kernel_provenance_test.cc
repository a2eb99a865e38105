// Kernel provenance for Triton candidates (src/gpu/harness/kernel_provenance.h): which kernels
// count as the candidate's own (its Triton cache), which of torch's are the gate's allowed
// operations, and the decision and message for a call's launches.
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "gpu/harness/call_failure.h"
#include "gpu/harness/kernel_provenance.h"

namespace ptxbench::gpu {
namespace {
namespace fs = std::filesystem;

// Names as CUPTI reports them on the H200 image's torch (mangled C++; Triton kernels unmangled).
const std::string k_fill =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIN3c108BFloat16EEESt5arrayIPcLm1EEEEviT0_T1_";
const std::string k_copy =
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_"
    "clEvENKUlvE7_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_";
const std::string k_mul =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5"
    "arrayIPcLm3EEEEviT0_T1_";
const std::string k_cublas = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
const std::string k_flash = "_ZN5flash12flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tEEEvNS_16Flash_fwd_paramsE";

class TritonCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("ptxbench-provenance-" + std::to_string(rd()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  void put(const std::string& key, const std::string& file, const std::string& json, bool cubin = true) {
    fs::create_directories(dir / key);
    std::ofstream(dir / key / (file + ".json")) << json;
    if (cubin) std::ofstream(dir / key / (file + ".cubin")) << "\x7f" "ELF";
  }
  fs::path dir;
};

TEST_F(TritonCache, NamesCountOnlyWithTheBinaryTritonWrote) {
  put("KEY1", "gemm_kernel", R"({"name": "gemm_kernel", "num_warps": 8, "shared": 163840})");
  put("KEY2", "gemm_kernel", R"({"name": "gemm_kernel", "num_warps": 4})");  // another specialisation
  put("KEY3", "attn_fwd", R"({"name": "attn_fwd"})");
  put("KEY3", "__grp__attn_fwd", R"({"child_paths": {"attn_fwd.cubin": "x"}})");
  put("KEY4", "ghost", R"({"name": "ghost"})", false);  // metadata alone names nothing
  put("KEY5", "broken", "{not json");
  put("KEY6", "unnamed", R"({"num_warps": 4})");
  fs::create_directories(dir / "KEY7" / "deeper");
  std::ofstream(dir / "KEY7" / "deeper" / "hidden.json") << R"({"name": "hidden"})";
  std::ofstream(dir / "KEY7" / "deeper" / "hidden.cubin") << "x";
  auto kernels = read_triton_cache(dir);
  ASSERT_TRUE(kernels.ok()) << kernels.err().message;
  ASSERT_EQ(kernels->size(), 3u);
  EXPECT_EQ((*kernels)[0].name, "attn_fwd");
  EXPECT_EQ((*kernels)[0].cubin, dir / "KEY3" / "attn_fwd.cubin");
  EXPECT_EQ(kernel_names(*kernels), (std::set<std::string>{"attn_fwd", "gemm_kernel"}));
}

TEST_F(TritonCache, MissingFolderIsNothingCompiledAFileIsAnError) {
  auto none = read_triton_cache(dir / "absent");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  std::ofstream(dir / "file") << "x";
  EXPECT_FALSE(read_triton_cache(dir / "file").ok());
}

TEST_F(TritonCache, TooManyFilesIsAnError) {
  for (int i = 0; i < 12; ++i) put("K" + std::to_string(i), "k", R"({"name": "k"})");
  auto r = read_triton_cache(dir, 10);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("more than 10 files"), std::string::npos);
}

TEST(KernelProvenance, TorchFillAndCopyForTheGatesAllowedOperations) {
  EXPECT_TRUE(is_allowed_torch_kernel(k_fill));
  EXPECT_TRUE(is_allowed_torch_kernel(k_copy));
  EXPECT_FALSE(is_allowed_torch_kernel(k_mul));
  EXPECT_FALSE(is_allowed_torch_kernel(k_cublas));
  EXPECT_FALSE(is_allowed_torch_kernel(k_flash));
  EXPECT_FALSE(is_allowed_torch_kernel("my_FillFunctor_gemm"));  // not torch's
  EXPECT_FALSE(is_allowed_torch_kernel("gemm_kernel"));
}

TEST(KernelProvenance, OnlyCompiledKernelsAndAllowedTorchKernelsMayRun) {
  const std::set<std::string> compiled = {"gemm_kernel", "attn_fwd"};
  auto ok = check_kernel_provenance({k_fill, "gemm_kernel", "gemm_kernel", k_copy}, compiled, true);
  EXPECT_TRUE(ok.checked);
  EXPECT_TRUE(ok.foreign.empty());
  EXPECT_TRUE(ok.message.empty());

  auto matmul = check_kernel_provenance({"gemm_kernel", k_cublas}, compiled, true);
  ASSERT_EQ(matmul.foreign, std::vector<std::string>{k_cublas});
  EXPECT_EQ(matmul.message, "a kernel the candidate did not compile ran: " + k_cublas);

  auto hidden = check_kernel_provenance({"gemm_kernel", k_mul, k_flash, k_mul}, compiled, true);
  ASSERT_EQ(hidden.foreign.size(), 2u);  // each foreign kernel once
  EXPECT_EQ(hidden.message.rfind("a kernel the candidate did not compile ran: void at::native::vectorized_elementwise_kernel<4, "
                                 "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >",
                                 0),
            0u)
      << hidden.message;
  EXPECT_NE(hidden.message.find("(and 1 more)"), std::string::npos);
}

TEST(KernelProvenance, AKernelWithTheNameOfNoCompiledOneIsForeign) {
  // A kernel of the candidate's that Triton never wrote to the cache (or a name from elsewhere).
  auto d = check_kernel_provenance({"attn_fwd"}, {"gemm_kernel"}, true);
  EXPECT_EQ(d.message, "a kernel the candidate did not compile ran: attn_fwd");
}

TEST(KernelProvenance, WithoutCuptiNothingIsClaimed) {
  auto d = check_kernel_provenance({}, {"gemm_kernel"}, false);
  EXPECT_FALSE(d.checked);
  EXPECT_TRUE(d.foreign.empty());
}

TEST(CallFailure, ATritonCompileErrorInTheWarmUpIsACompileError) {
  call_result r;
  r.outcome = call_outcome::failed;
  r.message = "during the warm-up call: Triton could not compile the kernel: CompilationError: at 12:8: ...";
  r.error_kind = candidate_error::compile;
  auto f = classify_call_failure(r, "trial 0 (seed 1)");
  EXPECT_EQ(f.outcome, eval_outcome::compile_error);
  EXPECT_EQ(f.message, r.message);
}

}  // namespace
}  // namespace ptxbench::gpu
