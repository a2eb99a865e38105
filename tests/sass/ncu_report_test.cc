#include <gtest/gtest.h>

#include "sass/ncu_report.h"
#include "sass/static_check.h"
#include "sass/fixture_text.h"

namespace ptxbench::sass {
namespace {

using testing::fixture_text;

const ncu_kernel* by_name(const ncu_profile& p, std::string_view prefix) {
  for (const auto& k : p.kernels)
    if (k.name.substr(0, prefix.size()) == prefix) return &k;
  return nullptr;
}

opcode_executions nonzero(const opcode_executions& m) {
  opcode_executions out;
  for (const auto& [op, e] : m)
    if (e.inst_executed || e.thread_inst_pred_on) out[op] = e;
  return out;
}

TEST(NcuReport, PerOpcodeDetails) {
  auto p = parse_ncu_csv(fixture_text("ncu/probe_per_opcode_details.csv"));
  ASSERT_TRUE(p.ok()) << p.err().message;
  EXPECT_EQ(p->format, ncu_format::per_opcode_details);
  ASSERT_EQ(p->kernels.size(), 4u);
  EXPECT_EQ(p->tool_messages.size(), 1u);  // the ==WARNING== line; ==PROF== and program output are skipped
  const auto* probe = by_name(*p, "wgmma_probe(");
  const auto* dead = by_name(*p, "wgmma_dead(");
  const auto* bulk = by_name(*p, "bulk_copy_probe(");
  const auto* tma = by_name(*p, "tma_tensor_probe(");
  ASSERT_TRUE(probe && dead && bulk && tma);
  EXPECT_EQ(probe->id, "0");
  EXPECT_EQ(probe->name, "wgmma_probe(float *)");
  EXPECT_EQ(probe->block_size, "(128, 1, 1)");
  EXPECT_EQ(probe->grid_size, "(1, 1, 1)");
  EXPECT_EQ(probe->per_opcode.at("HGMMA").inst_executed, 4);
  EXPECT_EQ(probe->per_opcode.at("HGMMA").thread_inst_pred_on, 128);
  EXPECT_EQ(probe->per_opcode.size(), 27u);
  EXPECT_EQ(probe->total_inst_executed, 384);
  EXPECT_EQ(probe->total_thread_pred_on, 11776);
  EXPECT_EQ(probe->family_pred_on, (family_counts{{"GMMA", 128}, {"WARPGROUP", 256}}));
  EXPECT_EQ(probe->family_inst_executed, (family_counts{{"GMMA", 4}, {"WARPGROUP", 8}}));
  EXPECT_TRUE(probe->executed("GMMA"));
  EXPECT_FALSE(probe->executed("TMA"));

  EXPECT_FALSE(dead->executed("GMMA"));
  EXPECT_TRUE(dead->family_pred_on.empty());
  EXPECT_EQ(dead->total_inst_executed, 40);
  EXPECT_EQ(dead->total_thread_pred_on, 1280);

  EXPECT_EQ(bulk->family_pred_on, (family_counts{{"ELECT", 1}, {"SYNCS", 161}, {"UBLKCP", 1}}));
  EXPECT_EQ(bulk->per_opcode.at("UBLKCP").inst_executed, 1);
  EXPECT_FALSE(bulk->executed("TMA"));
  EXPECT_EQ(bulk->total_inst_executed, 415);
  EXPECT_EQ(bulk->total_thread_pred_on, 11158);

  EXPECT_EQ(tma->family_pred_on, (family_counts{{"ELECT", 1}, {"SYNCS", 161}, {"TMA", 1}}));
  EXPECT_EQ(tma->per_opcode.at("UTMALDG").thread_inst_pred_on, 1);
  EXPECT_TRUE(tma->executed("TMA"));
  EXPECT_EQ(tma->total_inst_executed, 379);
  EXPECT_EQ(tma->total_thread_pred_on, 10006);
}

TEST(NcuReport, ValuesWithoutOpcodeNamesAreRejected) {
  auto p = parse_ncu_csv(fixture_text("ncu/probe_per_opcode_values.csv"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.err().message.find("opcode names are missing"), std::string::npos) << p.err().message;
  EXPECT_NE(p.err().message.find("--print-metric-instances details"), std::string::npos);
}

TEST(NcuReport, SourcePage) {
  auto p = parse_ncu_csv(fixture_text("ncu/probe_source_page.csv"));
  ASSERT_TRUE(p.ok()) << p.err().message;
  EXPECT_EQ(p->format, ncu_format::source_page);
  ASSERT_EQ(p->kernels.size(), 4u);
  EXPECT_EQ(p->duplicate_blocks_dropped, 4);
  const auto* probe = by_name(*p, "wgmma_probe(");
  const auto* dead = by_name(*p, "wgmma_dead(");
  const auto* bulk = by_name(*p, "bulk_copy_probe(");
  const auto* tma = by_name(*p, "tma_tensor_probe(");
  ASSERT_TRUE(probe && dead && bulk && tma);
  ASSERT_EQ(probe->rows.size(), 72u);
  EXPECT_EQ(dead->rows.size(), 48u);
  const auto& hgmma = probe->rows[0x350 / 16];
  EXPECT_EQ(hgmma.offset, 0x350u);
  EXPECT_EQ(hgmma.address, 0x7f7e5f7a0350u);
  EXPECT_EQ(hgmma.mnemonic, "HGMMA.64x8x16.F32.BF16");
  EXPECT_EQ(hgmma.inst_executed, 4);
  EXPECT_EQ(hgmma.thread_inst_pred_on, 128);
  const auto& guarded = probe->rows[0x50 / 16];
  EXPECT_EQ(guarded.guard, "@P1");
  EXPECT_EQ(guarded.mnemonic, "BRA");
  EXPECT_EQ(guarded.inst_executed, 4);
  EXPECT_EQ(guarded.thread_inst_pred_on, 0);
  EXPECT_EQ(probe->family_pred_on.at("GMMA"), 128);
  EXPECT_TRUE(probe->executed("GMMA"));
  // The dead-branch HGMMA is listed (it is in the code) but never ran.
  EXPECT_EQ(dead->per_opcode.at("HGMMA").inst_executed, 0);
  EXPECT_EQ(dead->family_pred_on.at("GMMA"), 0);
  EXPECT_FALSE(dead->executed("GMMA"));
  EXPECT_EQ(bulk->per_opcode.at("UBLKCP").thread_inst_pred_on, 1);
  EXPECT_TRUE(bulk->executed("UBLKCP"));
  EXPECT_FALSE(bulk->executed("TMA"));
  EXPECT_EQ(tma->per_opcode.at("UTMALDG").inst_executed, 1);
  EXPECT_EQ(tma->per_opcode.at("UTMALDG").thread_inst_pred_on, 1);
  EXPECT_TRUE(tma->executed("TMA"));
}

// Two separate ncu runs of the same program: the source page summed per opcode equals the
// per-opcode metrics, for every kernel.
TEST(NcuReport, SourcePageAgreesWithPerOpcodeMetrics) {
  auto src = parse_ncu_csv(fixture_text("ncu/probe_source_page.csv"));
  auto per = parse_ncu_csv(fixture_text("ncu/probe_per_opcode_details.csv"));
  ASSERT_TRUE(src.ok() && per.ok());
  for (const auto& k : per->kernels) {
    const auto* s = by_name(*src, k.name);
    ASSERT_NE(s, nullptr) << k.name;
    EXPECT_EQ(nonzero(s->per_opcode), k.per_opcode) << k.name;
    EXPECT_EQ(s->total_thread_pred_on, k.total_thread_pred_on) << k.name;
  }
}

// Source-page offsets join with the cuobjdump listing of the same executable.
TEST(NcuReport, SourcePageJoinsWithCuobjdumpOffsets) {
  auto src = parse_ncu_csv(fixture_text("ncu/probe_source_page.csv"));
  auto fns = parse_sass(fixture_text("sass/probe_sm90a.cuobjdump.txt"));
  ASSERT_TRUE(src.ok() && fns.ok());
  for (const auto& k : src->kernels) {
    const sass_function* f = nullptr;
    for (const auto& g : *fns)
      if (same_kernel(g.name, k.name)) f = &g;
    ASSERT_NE(f, nullptr) << k.name;
    ASSERT_EQ(f->instructions.size(), k.rows.size()) << k.name;
    for (std::size_t i = 0; i < k.rows.size(); ++i) {
      EXPECT_EQ(k.rows[i].offset, f->instructions[i].offset) << k.name;
      EXPECT_EQ(k.rows[i].mnemonic, f->instructions[i].mnemonic) << k.name << " +" << k.rows[i].offset;
      EXPECT_EQ(k.rows[i].guard, f->instructions[i].guard) << k.name << " +" << k.rows[i].offset;
    }
  }
}

const char* k_header =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";

std::string row(const std::string& id, const std::string& metric, const std::string& value) {
  return "\"" + id + "\",\"1\",\"p\",\"h\",\"k(int)\",\"1\",\"7\",\"(128, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"S\",\"" +
         metric + "\",\"\",\"" + value + "\"\n";
}

TEST(NcuReport, SyntheticErrors) {
  auto only_inst = parse_ncu_csv(std::string(k_header) + row("0", "sass__inst_executed_per_opcode", "4 (HGMMA: 4)"));
  ASSERT_FALSE(only_inst.ok());
  EXPECT_NE(only_inst.err().message.find("no sass__thread_inst_executed_true_per_opcode value"), std::string::npos)
      << only_inst.err().message;
  auto total_only = parse_ncu_csv(std::string(k_header) + row("0", "sass__inst_executed_per_opcode", "384"));
  ASSERT_FALSE(total_only.ok());
  EXPECT_NE(total_only.err().message.find("printed only the total"), std::string::npos);
  EXPECT_NE(total_only.err().message.find("ncu CSV line 2 (k(int), sass__inst_executed_per_opcode)"),
            std::string::npos) << total_only.err().message;
  auto bad_sum = parse_ncu_csv(std::string(k_header) + row("0", "sass__inst_executed_per_opcode", "5 (HGMMA: 4)"));
  ASSERT_FALSE(bad_sum.ok());
  EXPECT_NE(bad_sum.err().message.find("sum to 4 but the total is 5"), std::string::npos);
  auto ncu_failed = parse_ncu_csv("==PROF== Connected to process 1\n==ERROR== the profiling permission is missing\n");
  ASSERT_FALSE(ncu_failed.ok());
  EXPECT_NE(ncu_failed.err().message.find("ncu said: ==ERROR== the profiling permission is missing"),
            std::string::npos) << ncu_failed.err().message;
  EXPECT_FALSE(parse_ncu_csv("").ok());
  auto no_kernels = parse_ncu_csv(std::string(k_header));
  ASSERT_FALSE(no_kernels.ok());
  EXPECT_NE(no_kernels.err().message.find("lists no kernel"), std::string::npos);
  auto no_thread_col = parse_ncu_csv("\"Kernel Name\",\"k(int)\",\n\"Address\",\"Source\",\"inst_executed\"\n");
  ASSERT_FALSE(no_thread_col.ok());
  EXPECT_NE(no_thread_col.err().message.find("no \"thread_inst_executed_true\" column"), std::string::npos);
}

TEST(NcuReport, LaunchesOfOneKernelAreSummed) {
  std::string text = std::string(k_header) + row("0", "sass__inst_executed_per_opcode", "4 (HGMMA: 4)") +
                     row("0", "sass__thread_inst_executed_true_per_opcode", "128 (HGMMA: 128)") +
                     row("1", "sass__inst_executed_per_opcode", "1,004 (HGMMA: 4; IMAD: 1,000)") +
                     row("1", "sass__thread_inst_executed_true_per_opcode", "32,128 (HGMMA: 128; IMAD: 32,000)");
  auto p = parse_ncu_csv(text);
  ASSERT_TRUE(p.ok()) << p.err().message;
  ASSERT_EQ(p->kernels.size(), 2u);
  EXPECT_EQ(p->kernels[1].per_opcode.at("IMAD").thread_inst_pred_on, 32000);
  EXPECT_EQ(family_pred_on_by_kernel(*p), (std::map<std::string, family_counts>{{"k(int)", {{"GMMA", 256}}}}));
}

}  // namespace
}  // namespace ptxbench::sass
