#include <gtest/gtest.h>

#include "sass/cupti_sass_table.h"
#include "sass/fixture_text.h"

namespace ptxbench::sass {
namespace {

TEST(CuptiSassTable, JoinedRecordsSumPerOpcodeAndFamily) {
  auto records = parse_cupti_joined_tsv(testing::fixture_text("cupti/sassm_joined_h200.tsv"));
  ASSERT_TRUE(records.ok()) << records.err().message;
  ASSERT_EQ(records->size(), 114u);
  auto per = cupti_per_opcode(*records);
  ASSERT_EQ(per.size(), 2u);
  const auto& wgmma = per.at("_Z12wgmma_kernelPfi");
  const auto& pred = per.at("_Z11pred_kernelPf");
  int64_t wgmma_warp = 0, pred_warp = 0;
  for (const auto& [op, e] : wgmma) wgmma_warp += e.inst_executed;
  for (const auto& [op, e] : pred) pred_warp += e.inst_executed;
  EXPECT_EQ(wgmma_warp, 1196);  // the README's totals, equal to ncu's sass__inst_executed_per_opcode
  EXPECT_EQ(pred_warp, 240);
  // Five HGMMA PCs, each 8 warp executions (4 warps x 2 loop passes) and 256 predicate-on threads.
  int hgmma_pcs = 0;
  for (const auto& r : *records)
    if (r.instruction.opcode == "HGMMA") {
      ++hgmma_pcs;
      EXPECT_EQ(r.inst_executed, 8) << r.pc_offset;
      EXPECT_EQ(r.instruction.mnemonic, "HGMMA.64x8x16.F32.BF16");
    }
  EXPECT_EQ(hgmma_pcs, 5);
  EXPECT_EQ(wgmma.at("HGMMA").inst_executed, 40);
  EXPECT_EQ(wgmma.at("HGMMA").thread_inst_pred_on, 1280);
  EXPECT_EQ(family_pred_on_counts(wgmma).at("GMMA"), 1280);
  EXPECT_EQ(family_inst_executed_counts(wgmma).at("GMMA"), 40);
  EXPECT_TRUE(family_pred_on_counts(pred).empty());
  // Predication: the guarded FFMA ran for 512 threads but only 128 had the predicate on.
  for (const auto& r : *records)
    if (r.function == "_Z11pred_kernelPf" && r.pc_offset == 0xc0) {
      EXPECT_EQ(r.instruction.guard, "@!P0");
      EXPECT_EQ(r.thread_inst, 512);
      EXPECT_EQ(r.thread_inst_pred_on, 128);
    }
}

TEST(CuptiSassTable, BadInputIsNamed) {
  EXPECT_FALSE(parse_cupti_joined_tsv("").ok());
  auto header = parse_cupti_joined_tsv("kernel\tpc\n");
  ASSERT_FALSE(header.ok());
  EXPECT_NE(header.err().message.find("line 1"), std::string::npos);
  auto cols = parse_cupti_joined_tsv(
      "kernel\tfunction\tpc\tinst_executed\tthread_inst\tthread_inst_pred_on\tsass\nk\tf\t0x0\t1\t2\n");
  ASSERT_FALSE(cols.ok());
  EXPECT_EQ(cols.err().message, "CUPTI TSV line 2: 5 columns, expected 7");
}

}  // namespace
}  // namespace ptxbench::sass
