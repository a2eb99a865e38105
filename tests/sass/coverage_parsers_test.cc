// The two readers work coverage needs: a GMMA mnemonic's MxNxK shape and plain metric values from
// Nsight Compute's details page.
#include <gtest/gtest.h>

#include "core/file_io.h"
#include "sass/ncu_metric_values.h"
#include "sass/tensor_instruction_work.h"
#include "test_support.h"

namespace ptxbench::sass {
namespace {

TEST(GmmaShape, ReadsTheTileFromTheMnemonic) {
  auto s = gmma_shape("HGMMA.64x128x16.F32.BF16");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->m, 64);
  EXPECT_EQ(s->n, 128);
  EXPECT_EQ(s->k, 16);
  EXPECT_EQ(s->flops(), 2.0 * 64 * 128 * 16);  // 262,144 FLOP per warpgroup execution
  EXPECT_EQ(gmma_shape("HGMMA.64x8x16.F32.BF16")->flops(), 16384.0);
  EXPECT_EQ(gmma_shape("HGMMA.64x256x16.F32.BF16")->flops(), 524288.0);
  EXPECT_EQ(gmma_shape("QGMMA.64x8x32.F32.E4M3.E4M3")->k, 32);
  EXPECT_EQ(gmma_shape("IGMMA.64x16x32.S32.S8.S8")->n, 16);
}

TEST(GmmaShape, NoShapeNoNumber) {
  EXPECT_FALSE(gmma_shape("HGMMA").has_value());
  EXPECT_FALSE(gmma_shape("HGMMA.F32.BF16").has_value());
  EXPECT_FALSE(gmma_shape("HMMA.16816.F32.BF16").has_value());  // pre-Hopper mma.sync is not GMMA
  EXPECT_FALSE(gmma_shape("UTCHMMA").has_value());               // tcgen05: the shape is in idesc
  EXPECT_FALSE(gmma_shape("IMAD.64x128x16").has_value());
  EXPECT_FALSE(gmma_shape("HGMMA.64x0x16.F32").has_value());
  EXPECT_FALSE(gmma_shape("HGMMA.64x128.F32").has_value());
}

TEST(NcuMetricValues, ReadsTheTmaByteCounters) {
  auto text = read_text_file(testing::fixtures_dir() / "ncu/synthetic_tma_details.csv", 1u << 20);
  ASSERT_TRUE(text.ok());
  auto v = read_ncu_metric_values(*text, {"l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
                                          "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum"});
  ASSERT_TRUE(v.ok()) << v.err().message;
  ASSERT_EQ(v->size(), 2u);  // the per-opcode rows and the reduction counter were not asked for
  EXPECT_EQ((*v)[0].metric, "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum");
  EXPECT_EQ((*v)[0].value, 0.0);
  EXPECT_EQ((*v)[1].value, 7046430720.0);  // "7,046,430,720"
  EXPECT_EQ((*v)[1].unit, "byte");
  EXPECT_EQ((*v)[1].id, "0");
  EXPECT_NE((*v)[1].kernel.find("gemm_tma_wgmma_kernel"), std::string::npos);
}

TEST(NcuMetricValues, TheRealPerOpcodeFixtureHasNoByteCounters) {
  auto text = read_text_file(testing::fixtures_dir() / "ncu/probe_per_opcode_details.csv", 1u << 20);
  ASSERT_TRUE(text.ok());
  auto v = read_ncu_metric_values(*text, {"l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"});
  ASSERT_TRUE(v.ok()) << v.err().message;
  EXPECT_TRUE(v->empty());
}

TEST(NcuMetricValues, RejectsScaledUnitsAndNonNumbers) {
  std::string hdr = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  auto scaled = read_ncu_metric_values(hdr + "\"0\",\"k\",\"m\",\"Kbyte\",\"4.10\"\n", {"m"});
  ASSERT_FALSE(scaled.ok());
  EXPECT_NE(scaled.err().message.find("--print-units base"), std::string::npos) << scaled.err().message;
  EXPECT_FALSE(read_ncu_metric_values(hdr + "\"0\",\"k\",\"m\",\"byte\",\"n/a\"\n", {"m"}).ok());
  EXPECT_FALSE(read_ncu_metric_values(hdr + "\"0\",\"k\",\"m\",\"byte\"\n", {"m"}).ok());
  EXPECT_FALSE(read_ncu_metric_values("no csv here\n", {"m"}).ok());
  auto fine = read_ncu_metric_values(hdr + "\"0\",\"k\",\"m\",\"byte\",\"1.5e+03\"\n", {"m"});
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->at(0).value, 1500.0);
}

}  // namespace
}  // namespace ptxbench::sass
