#include <gtest/gtest.h>

#include "sass/static_check.h"
#include "sass/fixture_text.h"

namespace ptxbench::sass {
namespace {

using testing::fixture_text;

std::vector<sass_function> parsed(const std::string& fixture) {
  auto fns = parse_sass(fixture_text(fixture));
  EXPECT_TRUE(fns.ok()) << fns.err().message;
  return fns.ok() ? *fns : std::vector<sass_function>{};
}

const kernel_static_counts* kernel(const static_check_result& r, const std::string& mangled) {
  for (const auto& k : r.kernels)
    if (k.name == mangled) return &k;
  return nullptr;
}

TEST(StaticCheck, HopperProbeKernels) {
  auto r = static_check(parsed("sass/probe_sm90a.cuobjdump.txt"), {{"GMMA", "TMA"}, "sm_90a"});
  ASSERT_TRUE(r.ok()) << r.err().message;
  ASSERT_EQ(r->kernels.size(), 4u);
  const auto* probe = kernel(*r, "_Z11wgmma_probePf");
  const auto* dead = kernel(*r, "_Z10wgmma_deadPfi");
  const auto* bulk = kernel(*r, "_Z15bulk_copy_probePKfPfi");
  const auto* tma = kernel(*r, "_Z16tma_tensor_probe14CUtensorMap_stPf");
  ASSERT_TRUE(probe && dead && bulk && tma);
  EXPECT_EQ(probe->families, (family_counts{{"GMMA", 1}, {"WARPGROUP", 2}}));
  // The dead-branch HGMMA is present in SASS: only the dynamic check can tell it never runs.
  EXPECT_EQ(dead->families, (family_counts{{"GMMA", 1}, {"WARPGROUP", 2}}));
  EXPECT_EQ(bulk->families, (family_counts{{"ELECT", 1}, {"SYNCS", 4}, {"UBLKCP", 1}}));
  EXPECT_EQ(bulk->families.count("TMA"), 0u);  // a non-tensor bulk copy is not TMA
  EXPECT_EQ(tma->families, (family_counts{{"ELECT", 1}, {"SYNCS", 4}, {"TMA", 1}}));
  EXPECT_EQ(probe->instructions, 72);
  EXPECT_EQ(probe->demangled, "wgmma_probe(float*)");
  EXPECT_EQ(r->total.at("GMMA"), 2);
  EXPECT_EQ(r->total.at("TMA"), 1);
  EXPECT_EQ(r->total.at("UBLKCP"), 1);
  EXPECT_EQ(r->total.at("SYNCS"), 8);
  EXPECT_TRUE(r->required_present);
  EXPECT_EQ(r->present_required, (std::vector<std::string>{"GMMA", "TMA"}));
  EXPECT_EQ(r->reason, "found GMMA x2 in wgmma_dead, wgmma_probe; TMA x1 in tma_tensor_probe");
}

TEST(StaticCheck, InheritedTmaDoesNotCountOnBlackwell) {
  auto r = static_check(parsed("sass/probe_sm90a.cuobjdump.txt"), {{"TCGEN05"}, ""});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->required_present);
  EXPECT_EQ(r->total.at("TCGEN05"), 0);
  EXPECT_EQ(r->total.at("TMA"), 1);
  EXPECT_EQ(r->reason, "no TCGEN05 instruction in any of 4 SASS function(s)");
}

TEST(StaticCheck, OtherArchIsLeftOut) {
  auto r = static_check(parsed("sass/probe_sm90a.cuobjdump.txt"), {{"TCGEN05"}, "sm_100a"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->kernels.empty());
  EXPECT_EQ(r->skipped_other_arch, 4);
  EXPECT_FALSE(r->required_present);
  EXPECT_EQ(r->reason, "no SASS functions (sm_100a) to check for TCGEN05");
}

TEST(StaticCheck, Tcgen05Probe) {
  auto fns = parsed("sass/tc05_sm100a.cuobjdump.txt");
  auto r = static_check(fns, {{"TCGEN05"}, "sm_100a"});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_EQ(r->kernels[0].families, (family_counts{{"ELECT", 4}, {"SYNCS", 3}, {"TCGEN05", 6}}));
  EXPECT_TRUE(r->required_present);
  EXPECT_EQ(r->reason, "found TCGEN05 x6 in tc05_probe");
  std::map<std::string, int> tc_opcodes;
  for (const auto& i : fns[0].instructions)
    if (classify(i.opcode) == std::vector<std::string>{"TCGEN05"}) ++tc_opcodes[i.mnemonic];
  EXPECT_EQ(tc_opcodes, (std::map<std::string, int>{{"LDTM", 1},
                                                     {"UTCATOMSWS.AND", 1},
                                                     {"UTCATOMSWS.FIND_AND_SET.ALIGN", 2},
                                                     {"UTCBAR", 1},
                                                     {"UTCHMMA", 1}}));
}

TEST(StaticCheck, CombinedListingIsCountedOnce) {
  auto r = static_check(parsed("sass/probe_shared_so.cuobjdump_and_nvdisasm.txt"), {{"GMMA", "TMA"}, "sm_90a"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kernels.size(), 4u);
  for (const auto& k : r->kernels) EXPECT_EQ(k.format, sass_format::cuobjdump);
  EXPECT_EQ(r->total.at("TMA"), 1);
  EXPECT_EQ(r->total.at("GMMA"), 2);
}

TEST(StaticCheck, NvdisasmOnlyFunctionsAreCounted) {
  auto fns = parsed("sass/probe_shared_so.cuobjdump_and_nvdisasm.txt");
  std::erase_if(fns, [](const sass_function& f) { return f.format == sass_format::cuobjdump; });
  auto r = static_check(fns, {{"GMMA", "TMA"}, "sm_90a"});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_EQ(r->kernels[0].format, sass_format::nvdisasm);
  EXPECT_EQ(r->present_required, std::vector<std::string>{"TMA"});
}

TEST(StaticCheck, RejectsUnknownOrMissingFamilies) {
  auto unknown = static_check({}, {{"GMMA", "WGMMA"}, ""});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.err().message.find("unknown instruction family 'WGMMA'"), std::string::npos);
  EXPECT_FALSE(static_check({}, {{}, ""}).ok());
}

TEST(StaticCheck, DemangleAndNameMatching) {
  EXPECT_EQ(demangle("_Z11wgmma_probePf"), "wgmma_probe(float*)");
  EXPECT_EQ(demangle("_Z15bulk_copy_probePKfPfi"), "bulk_copy_probe(float const*, float*, int)");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Z!!"), "_Z!!");
  EXPECT_EQ(kernel_base_name("void ns::gemm<128, 64>(float const*)"), "ns::gemm<128, 64>");
  EXPECT_EQ(kernel_base_name("(anonymous namespace)::k(int)"), "<unnamed>::k");
  EXPECT_EQ(kernel_base_name("<unnamed>::k(int)"), "<unnamed>::k");
  EXPECT_EQ(kernel_base_name("wgmma_probe(float *)"), "wgmma_probe");
  EXPECT_EQ(kernel_base_name("plain"), "plain");
  EXPECT_TRUE(same_kernel("_Z16tma_tensor_probe14CUtensorMap_stPf", "tma_tensor_probe(CUtensorMap_st, float *)"));
  EXPECT_TRUE(same_kernel("_Z15bulk_copy_probePKfPfi", "bulk_copy_probe(const float *, float *, int)"));
  EXPECT_FALSE(same_kernel("_Z11wgmma_probePf", "wgmma_dead(float *, int)"));
  EXPECT_TRUE(same_kernel("_Z11wgmma_probePf", "_Z11wgmma_probePf"));  // ncu --print-kernel-base mangled
  // A kernel in an anonymous namespace, as cuobjdump lists it and as Nsight Compute prints it (H100,
  // examples/gemm/wgmma_tma_pipelined.cu): one kernel.
  EXPECT_TRUE(same_kernel("_ZN12_GLOBAL__N_121gemm_tma_wgmma_kernelE14CUtensorMap_stS0_P13__nv_bfloat16iii",
                          "<unnamed>::gemm_tma_wgmma_kernel(CUtensorMap_st, CUtensorMap_st, __nv_bfloat16 *, int, int, int)"));
}

}  // namespace
}  // namespace ptxbench::sass
