#include <gtest/gtest.h>

#include "sass/opcode_family.h"
#include "core/file_io.h"
#include "measure/sanitizer_report.h"
#include "sass/sass_parser.h"
#include "test_support.h"

namespace ptxbench::sass {
namespace {

using names = std::vector<std::string>;

TEST(OpcodeFamily, TargetFamilies) {
  for (const char* op : {"HGMMA", "QGMMA", "IGMMA", "BGMMA"}) EXPECT_EQ(classify(op), names{"GMMA"}) << op;
  for (const char* op : {"UTMALDG", "UTMASTG", "UTMAREDG"}) EXPECT_EQ(classify(op), names{"TMA"}) << op;
  for (const char* op : {"UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA", "UTCBAR", "UTCCP", "UTCSHIFT", "UTCATOMSWS",
                         "LDTM", "STTM"})
    EXPECT_EQ(classify(op), names{"TCGEN05"}) << op;
}

TEST(OpcodeFamily, TmaHelpersAreNotTma) {
  EXPECT_TRUE(classify("UTMACCTL").empty());
  EXPECT_TRUE(classify("UTMACMDFLUSH").empty());
  EXPECT_EQ(classify("UTMAPF"), names{"UTMAPF"});
  EXPECT_EQ(classify("UBLKCP"), names{"UBLKCP"});
  EXPECT_EQ(classify("UBLKRED"), names{"UBLKRED"});
}

TEST(OpcodeFamily, InformationalAndUnknown) {
  EXPECT_EQ(classify("SYNCS"), names{"SYNCS"});
  EXPECT_EQ(classify("WARPGROUP"), names{"WARPGROUP"});
  EXPECT_EQ(classify("ELECT"), names{"ELECT"});
  EXPECT_EQ(classify("USETMAXREG"), names{"USETMAXREG"});
  EXPECT_EQ(classify("HMMA"), names{"HMMA"});
  // Base opcodes only: a full mnemonic, a lowercase word or a near-miss is not classified.
  EXPECT_TRUE(classify("HGMMA.64x8x16.F32.BF16").empty());
  EXPECT_TRUE(classify("hgmma").empty());
  EXPECT_TRUE(classify("UVIRTCOUNT").empty());
  EXPECT_TRUE(classify("LDTMX").empty());
  EXPECT_TRUE(classify("").empty());
  EXPECT_TRUE(classify("IMAD").empty());
}

TEST(OpcodeFamily, TableNamesAndTargetFlags) {
  EXPECT_EQ(family_names(), (names{"GMMA", "TMA", "TCGEN05", "UBLKCP", "UBLKRED", "UTMAPF", "SYNCS", "WARPGROUP",
                                   "ELECT", "USETMAXREG", "HMMA"}));
  names targets;
  for (const auto& r : family_table())
    if (r.target_family) targets.emplace_back(r.family);
  EXPECT_EQ(targets, (names{"GMMA", "TMA", "TCGEN05"}));
  EXPECT_TRUE(is_known_family("TCGEN05"));
  EXPECT_FALSE(is_known_family("tma"));
}

TEST(OpcodeFamily, CountsOnlyFamiliesPresent) {
  std::vector<sass_instruction> insts;
  for (const char* text : {"HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0", "@P0 UTMALDG.2D [UR4], [UR10]",
                           "UTMACCTL.IV [UR4]", "UTMACMDFLUSH", "UTMAPF.L2.2D [UR4], [UR10]", "IMAD R1, R2, R3, R4",
                           "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24, UP0"})
    insts.push_back(*split_instruction(text));
  family_counts expected = {{"GMMA", 2}, {"TMA", 1}, {"UTMAPF", 1}};
  EXPECT_EQ(count_families(insts), expected);
}

TEST(OpcodeFamily, ExecutedSumsKeepZeroFamilies) {
  opcode_executions per_opcode = {{"HGMMA", {4, 0}}, {"UTMALDG", {1, 1}}, {"IMAD", {10, 320}}};
  family_counts pred_on = family_pred_on_counts(per_opcode);
  EXPECT_EQ(pred_on, (family_counts{{"GMMA", 0}, {"TMA", 1}}));
  EXPECT_EQ(family_inst_executed_counts(per_opcode), (family_counts{{"GMMA", 4}, {"TMA", 1}}));
  EXPECT_EQ(nonzero_families(pred_on), names{"TMA"});
}

// docs/sass-and-profiling.md lists every family and every sanitizer noise pattern.
TEST(OpcodeFamily, DocsListTheTables) {
  auto doc = read_text_file(testing::repo_root() / "docs" / "sass-and-profiling.md", 1u << 20);
  ASSERT_TRUE(doc.ok()) << doc.err().message;
  for (const auto& rule : family_table()) {
    std::string row = "| `" + std::string(rule.family) + "` |";
    auto at = doc->find(row);
    ASSERT_NE(at, std::string::npos) << "docs table has no row for " << rule.family;
    std::string line = doc->substr(at, doc->find('\n', at) - at);
    for (auto op : rule.opcodes) EXPECT_NE(line.find("`" + std::string(op) + "`"), std::string::npos) << line;
    if (!rule.opcode_prefix.empty()) {
      EXPECT_NE(line.find(std::string(rule.opcode_prefix) + "*"), std::string::npos) << line;
    }
    EXPECT_NE(line.find(rule.target_family ? "| yes |" : "| no |"), std::string::npos) << line;
  }
  for (const auto& p : measure::sanitizer_noise_patterns())
    EXPECT_NE(doc->find("`" + std::string(p.contains) + "`"), std::string::npos) << p.contains;
}

}  // namespace
}  // namespace ptxbench::sass
