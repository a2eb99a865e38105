// From a Triton capture to a launch plan (gpu/harness/triton_plan.h) and the plan's own format
// (gpu/common/launch_plan.h): what becomes a binding, what is refused and why, and the comparison of
// two captures. The captures are hand-written, as the capture process would write them.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/common/launch_plan.h"
#include "gpu/harness/triton_plan.h"

namespace ptxbench::gpu {
namespace {

namespace fs = std::filesystem;

std::string hex64(uint64_t v) {
  unsigned char b[8];
  std::memcpy(b, &v, 8);
  static const char* d = "0123456789abcdef";
  std::string s;
  for (unsigned char x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

std::string hex32(uint32_t v) { return hex64(v).substr(0, 8); }

constexpr uint64_t A = 0x7f0000000000, B = 0x7f0000100000, C = 0x7f0000200000;
const std::vector<uint64_t> k_bytes = {0x1000, 0x1000, 0x1000};

ordered_json gemm_node(uint64_t a, uint64_t b, uint64_t c, std::string function = "111") {
  return {{"kind", "kernel"},          {"function", function},      {"name", "gemm_kernel"},
          {"grid", {224, 1, 1}},       {"block", {256, 1, 1}},      {"shared_bytes", 196608},
          {"cluster", {1, 1, 1}},      {"cooperative", false},
          {"params", {hex64(a), hex64(b), hex64(c + 64), hex32(8192), hex64(0)}}};
}

ordered_json capture_doc(uint64_t a, uint64_t b, uint64_t c, ordered_json nodes = nullptr) {
  if (nodes.is_null()) nodes = ordered_json::array({gemm_node(a, b, c)});
  return {{"format", "ptxbench.triton-capture/1"},
          {"tensors", {{{"ptr", a}}, {{"ptr", b}}, {{"ptr", c}}}},
          {"nodes", nodes},
          {"kernels",
           {{{"function", "111"},
             {"name", "gemm_kernel"},
             {"jit", "gemm_kernel"},
             {"cubin", "captured-kernels/k000.cubin"},
             {"param_types", {"*bf16", "*bf16", "*bf16", "i32"}},
             {"hints", {{"specialization_data", "{}"}}}}}}};
}

struct fixture {
  fs::path scratch = fs::temp_directory_path() / "ptxbench-triton-plan-test";
  std::map<fs::path, std::string> sha;
  fixture() { sha[fs::weakly_canonical(scratch / "captured-kernels/k000.cubin")] = "aa11"; }

  result<launch_plan> plan(const ordered_json& doc) {
    auto c = triton_capture_from_json(doc, scratch);
    if (!c) return c.err();
    return plan_from_capture(*c, k_bytes, sha);
  }
};

TEST(TritonPlan, PointersBecomeBindingsScalarsStayBytesAndScratchMustBeNull) {
  fixture f;
  auto p = f.plan(capture_doc(A, B, C));
  ASSERT_TRUE(p) << p.err().message;
  ASSERT_EQ(p->kernels.size(), 1u);
  EXPECT_EQ(p->kernels[0].cubin_sha256, "aa11");
  EXPECT_EQ(p->kernels[0].shared_bytes, 196608u);
  ASSERT_EQ(p->steps.size(), 1u);
  const auto& s = p->steps[0];
  ASSERT_EQ(s.params.size(), 5u);
  EXPECT_EQ(s.params[0].k, plan_param::kind::tensor);
  EXPECT_EQ(s.params[0].tensor, 0);
  EXPECT_EQ(s.params[2].tensor, 2);
  EXPECT_EQ(s.params[2].offset, 64) << "an offset into a tensor is kept";
  EXPECT_EQ(s.params[3].k, plan_param::kind::bytes);
  EXPECT_EQ(s.params[3].bytes.size(), 4u);
  EXPECT_EQ(s.params[4].k, plan_param::kind::bytes) << "the hidden scratch pointer, null";
}

TEST(TritonPlan, TwoCapturesOnOtherBuffersGiveTheSamePlan) {
  fixture f;
  auto a = f.plan(capture_doc(A, B, C));
  auto b = f.plan(capture_doc(A + 0x10000000, B + 0x10000000, C + 0x10000000));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(plan_difference(*a, *b), "");
}

TEST(TritonPlan, APlanThatDependsOnTheInputsIsNotTheSame) {
  fixture f;
  auto a = f.plan(capture_doc(A, B, C));
  auto nodes = ordered_json::array({gemm_node(A, B, C)});
  nodes[0]["grid"] = {112, 1, 1};
  auto b = f.plan(capture_doc(A, B, C, nodes));
  ASSERT_TRUE(a && b);
  EXPECT_NE(plan_difference(*a, *b).find("another grid"), std::string::npos) << plan_difference(*a, *b);
  auto two = ordered_json::array({gemm_node(A, B, C), gemm_node(A, B, C)});
  auto c = f.plan(capture_doc(A, B, C, two));
  ASSERT_TRUE(c);
  EXPECT_NE(plan_difference(*a, *c).find("steps"), std::string::npos);
}

TEST(TritonPlan, AKernelTheCandidateDidNotCompileIsRefused) {
  fixture f;
  auto nodes = ordered_json::array({gemm_node(A, B, C), gemm_node(A, B, C, "999")});
  nodes[1]["name"] = "sm90_xmma_gemm_bf16bf16_bf16f32";
  auto p = f.plan(capture_doc(A, B, C, nodes));
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("a kernel the candidate did not compile ran: sm90_xmma_gemm"), std::string::npos)
      << p.err().message;
}

TEST(TritonPlan, APointerOutsideTheTensorsIsRefused) {
  fixture f;
  auto p = f.plan(capture_doc(A, B, C, ordered_json::array({gemm_node(A, B, 0x7e0000000000)})));
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("a pointer outside the task's tensors"), std::string::npos) << p.err().message;
}

TEST(TritonPlan, ScratchMemoryIsRefused) {
  fixture f;
  auto nodes = ordered_json::array({gemm_node(A, B, C)});
  nodes[0]["params"][4] = hex64(0x7e0000000000);
  auto p = f.plan(capture_doc(A, B, C, nodes));
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("scratch memory"), std::string::npos) << p.err().message;
}

TEST(TritonPlan, ParametersMustMatchTheSignature) {
  fixture f;
  auto nodes = ordered_json::array({gemm_node(A, B, C)});
  nodes[0]["params"].erase(4);
  nodes[0]["params"].erase(3);
  auto p = f.plan(capture_doc(A, B, C, nodes));
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("in its Triton signature"), std::string::npos) << p.err().message;
}

TEST(TritonPlan, AHostTensorDescriptorIsRefusedAsSuchNotAsACountMismatch) {
  // gemm_tma_descriptor.py: the signature holds tensordesc parameters, and Triton's launcher passes
  // each as a 128-byte CUtensorMap plus its shape (i32) and strides (i64): more parameters than the
  // signature. The descriptor is the reason, not the count.
  fixture f;
  auto doc = capture_doc(A, B, C);
  doc["kernels"][0]["param_types"] = {"tensordesc<bf16[128, 64]>", "*bf16", "*bf16", "i32"};
  ordered_json params = ordered_json::array({std::string(256, '0'), hex32(4096), hex32(64), hex64(64), hex64(1),
                                             hex64(B), hex64(C), hex32(8192), hex64(0), hex64(0)});
  doc["nodes"][0]["params"] = params;
  auto p = f.plan(doc);
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("signature parameter 0 has type tensordesc<bf16[128, 64]>, which cannot be replayed "
                                 "(host tensor descriptors are not supported"),
            std::string::npos)
      << p.err().message;
  EXPECT_EQ(p.err().message.find("in its Triton signature"), std::string::npos) << p.err().message;
  EXPECT_EQ(unreplayable_parameter({"*bf16", "i32", "fp32"}), "");
  EXPECT_NE(unreplayable_parameter({"*bf16", "nvTmaDesc"}).find("host tensor descriptors"), std::string::npos);
  EXPECT_NE(unreplayable_parameter({"tuple"}).find("only pointers and scalars"), std::string::npos);
}

TEST(TritonPlan, CopiesAndHostCallbacksAreRefusedAndMemsetsOfTensorsKept) {
  fixture f;
  auto copy = f.plan(capture_doc(A, B, C, ordered_json::array({gemm_node(A, B, C), {{"kind", "copy"}}})));
  ASSERT_FALSE(copy);
  EXPECT_NE(copy.err().message.find("a copy node"), std::string::npos) << copy.err().message;
  ordered_json memset = {{"kind", "memset"}, {"dst", C}, {"value", 0}, {"element_size", 4}, {"width", 1024},
                         {"height", 1},      {"pitch", 0}};
  auto zeroed = f.plan(capture_doc(A, B, C, ordered_json::array({memset, gemm_node(A, B, C)})));
  ASSERT_TRUE(zeroed) << zeroed.err().message;
  EXPECT_EQ(zeroed->steps[0].k, plan_step::kind::memset);
  EXPECT_EQ(zeroed->steps[0].tensor, 2);
  EXPECT_EQ(zeroed->steps[0].count, 1024u);
  memset["width"] = 2048;  // 8 KiB into a 4 KiB tensor
  auto past = f.plan(capture_doc(A, B, C, ordered_json::array({memset})));
  ASSERT_FALSE(past);
  EXPECT_NE(past.err().message.find("past the end"), std::string::npos);
}

TEST(TritonPlan, NoWorkAtAllIsRefused) {
  fixture f;
  auto p = f.plan(capture_doc(A, B, C, ordered_json::array()));
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("no work"), std::string::npos);
}

TEST(TritonPlan, ACubinOutsideTheCaptureFolderIsRefused) {
  fixture f;
  auto doc = capture_doc(A, B, C);
  doc["kernels"][0]["cubin"] = "../../etc/passwd";
  auto c = triton_capture_from_json(doc, f.scratch);
  ASSERT_FALSE(c);
  EXPECT_NE(c.err().message.find("outside"), std::string::npos);
}

TEST(LaunchPlan, RoundTripsThroughJsonAndRefusesWhatTheRunnerCannotDo) {
  fixture f;
  auto p = f.plan(capture_doc(A, B, C));
  ASSERT_TRUE(p);
  auto back = launch_plan_from_json(to_json(*p));
  ASSERT_TRUE(back) << back.err().message;
  EXPECT_EQ(plan_difference(*p, *back), "");
  auto j = to_json(*p);
  j["steps"][0]["launch"]["kernel"] = 7;
  EXPECT_FALSE(launch_plan_from_json(j));
  j = to_json(*p);
  j["steps"][0]["launch"]["params"][0]["tensor"] = 3;
  EXPECT_FALSE(launch_plan_from_json(j)) << "a tensor the call does not pass";
  j = to_json(*p);
  j["kernels"][0]["block"] = {1024, 2, 1};
  EXPECT_FALSE(launch_plan_from_json(j)) << "more than 1024 threads";
  j = to_json(*p);
  j["steps"][0]["launch"]["params"][3]["bytes"] = "zz";
  EXPECT_FALSE(launch_plan_from_json(j));
  EXPECT_FALSE(launch_plan_from_json(ordered_json::object()));
}

TEST(TritonPlan, ScalarSizesFollowTritonsLauncher) {
  EXPECT_EQ(triton_scalar_bytes("i32"), 4);
  EXPECT_EQ(triton_scalar_bytes("i1"), 4);
  EXPECT_EQ(triton_scalar_bytes("fp32"), 4);
  EXPECT_EQ(triton_scalar_bytes("bf16"), 4) << "16-bit float scalars travel as float";
  EXPECT_EQ(triton_scalar_bytes("i64"), 8);
  EXPECT_EQ(triton_scalar_bytes("u8"), 1);
  EXPECT_EQ(triton_scalar_bytes("tensordesc<bf16[64, 64]>"), 0);
}

}  // namespace
}  // namespace ptxbench::gpu
