#include <gtest/gtest.h>

#include <algorithm>

#include "sass/opcode_family.h"
#include "sass/sass_parser.h"
#include "sass/fixture_text.h"

namespace ptxbench::sass {
namespace {

using testing::fixture_text;

const sass_function* find_fn(const std::vector<sass_function>& fns, const std::string& name,
                             sass_format format = sass_format::cuobjdump) {
  for (const auto& f : fns)
    if (f.name == name && f.format == format) return &f;
  return nullptr;
}

const sass_instruction* at_offset(const sass_function& f, uint64_t offset) {
  for (const auto& i : f.instructions)
    if (i.offset == offset) return &i;
  return nullptr;
}

TEST(SassParser, CuobjdumpOfExecutable) {
  auto fns = parse_sass(fixture_text("sass/probe_sm90a.cuobjdump.txt"));
  ASSERT_TRUE(fns.ok()) << fns.err().message;
  ASSERT_EQ(fns->size(), 4u);
  std::vector<std::pair<std::string, std::size_t>> expected = {
      {"_Z16tma_tensor_probe14CUtensorMap_stPf", 72}, {"_Z15bulk_copy_probePKfPfi", 80},
      {"_Z10wgmma_deadPfi", 48}, {"_Z11wgmma_probePf", 72}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& f = (*fns)[i];
    EXPECT_EQ(f.name, expected[i].first);
    EXPECT_EQ(f.instructions.size(), expected[i].second) << f.name;
    EXPECT_EQ(f.arch, "sm_90a");
    EXPECT_EQ(f.format, sass_format::cuobjdump);
    for (std::size_t k = 0; k < f.instructions.size(); ++k)  // 16 bytes per instruction, no gaps
      EXPECT_EQ(f.instructions[k].offset, 16 * k) << f.name;
  }
  const auto& tma = (*fns)[0];
  EXPECT_EQ(tma.first_line, 23);
  EXPECT_EQ(tma.instructions[0].mnemonic, "LDC");
  EXPECT_EQ(tma.instructions[0].operands, "R1, c[0x0][0x28]");
  EXPECT_EQ(tma.instructions[0].guard, "");
  const auto* s2r = at_offset(tma, 0x70);
  ASSERT_NE(s2r, nullptr);
  EXPECT_EQ(s2r->guard, "@!P0");
  EXPECT_EQ(s2r->mnemonic, "S2R");
  const auto* syncs = at_offset(tma, 0x110);
  ASSERT_NE(syncs, nullptr);
  EXPECT_EQ(syncs->guard, "@!UP0");
  EXPECT_EQ(syncs->mnemonic, "SYNCS.EXCH.64");
  EXPECT_EQ(syncs->opcode, "SYNCS");
  EXPECT_EQ(syncs->operands, "URZ, [UR6], UR4");
  const auto* tail_nop = at_offset(tma, 0x470);  // "NOP;" without a space before ';'
  ASSERT_NE(tail_nop, nullptr);
  EXPECT_EQ(tail_nop->mnemonic, "NOP");
  EXPECT_EQ(tail_nop->operands, "");
  const auto* hgmma = at_offset((*fns)[3], 0x350);
  ASSERT_NE(hgmma, nullptr);
  EXPECT_EQ(hgmma->mnemonic, "HGMMA.64x8x16.F32.BF16");
  EXPECT_EQ(hgmma->opcode, "HGMMA");
  EXPECT_EQ(hgmma->operands, "R24, gdesc[UR4], RZ, !UPT, gsb0");
}

TEST(SassParser, CombinedSharedObjectAndNvdisasm) {
  auto fns = parse_sass(fixture_text("sass/probe_shared_so.cuobjdump_and_nvdisasm.txt"));
  ASSERT_TRUE(fns.ok()) << fns.err().message;
  ASSERT_EQ(fns->size(), 5u);  // four from cuobjdump of the .so, one (cut short) from nvdisasm
  EXPECT_EQ(std::count_if(fns->begin(), fns->end(), [](auto& f) { return f.format == sass_format::nvdisasm; }), 1);
  const auto* nv = find_fn(*fns, "_Z16tma_tensor_probe14CUtensorMap_stPf", sass_format::nvdisasm);
  ASSERT_NE(nv, nullptr);
  EXPECT_EQ(nv->arch, "sm_90a");
  EXPECT_EQ(nv->first_line, 597);
  ASSERT_EQ(nv->instructions.size(), 44u);  // the fixture stops at /*02b0*/
  EXPECT_EQ(nv->instructions.back().offset, 0x2b0u);
  EXPECT_EQ(nv->instructions[0].source_location, "./probe.cu:81");
  const auto* ldg = at_offset(*nv, 0x230);
  ASSERT_NE(ldg, nullptr);
  EXPECT_EQ(ldg->mnemonic, "UTMALDG.2D");
  EXPECT_EQ(ldg->source_location, "./probe.cu:95");
  const auto* bra = at_offset(*nv, 0x260);
  ASSERT_NE(bra, nullptr);
  EXPECT_EQ(bra->guard, "@P0");
  EXPECT_EQ(bra->mnemonic, "BRA.U.ANY");
  EXPECT_EQ(bra->operands, "`(.L_x_2)");
  for (const char* name : {"_Z16tma_tensor_probe14CUtensorMap_stPf", "_Z15bulk_copy_probePKfPfi",
                           "_Z10wgmma_deadPfi", "_Z11wgmma_probePf"})
    EXPECT_NE(find_fn(*fns, name), nullptr) << name;
}

// The same kernel as cuobjdump and nvdisasm print it: same opcode and guard at every offset both
// show, and the same family counts over that range.
TEST(SassParser, NvdisasmAndCuobjdumpViewsAgree) {
  auto fns = parse_sass(fixture_text("sass/probe_shared_so.cuobjdump_and_nvdisasm.txt"));
  ASSERT_TRUE(fns.ok()) << fns.err().message;
  const auto* nv = find_fn(*fns, "_Z16tma_tensor_probe14CUtensorMap_stPf", sass_format::nvdisasm);
  const auto* cu = find_fn(*fns, "_Z16tma_tensor_probe14CUtensorMap_stPf", sass_format::cuobjdump);
  ASSERT_TRUE(nv && cu);
  std::vector<sass_instruction> cu_prefix;
  for (const auto& i : nv->instructions) {
    const auto* c = at_offset(*cu, i.offset);
    ASSERT_NE(c, nullptr) << i.offset;
    EXPECT_EQ(c->mnemonic, i.mnemonic) << i.offset;
    EXPECT_EQ(c->guard, i.guard) << i.offset;
    cu_prefix.push_back(*c);
  }
  family_counts expected = {{"ELECT", 1}, {"SYNCS", 2}, {"TMA", 1}};
  EXPECT_EQ(count_families(nv->instructions), expected);
  EXPECT_EQ(count_families(cu_prefix), expected);
}

TEST(SassParser, SharedObjectAndExecutableGiveTheSameKernels) {
  auto exe = parse_sass(fixture_text("sass/probe_sm90a.cuobjdump.txt"));
  auto so = parse_sass(fixture_text("sass/probe_shared_so.cuobjdump_and_nvdisasm.txt"));
  ASSERT_TRUE(exe.ok() && so.ok());
  for (const auto& f : *exe) {
    const auto* g = find_fn(*so, f.name);
    ASSERT_NE(g, nullptr) << f.name;
    EXPECT_EQ(count_families(f.instructions), count_families(g->instructions)) << f.name;
  }
}

TEST(SassParser, Sm100aCubin) {
  auto fns = parse_sass(fixture_text("sass/tc05_sm100a.cuobjdump.txt"));
  ASSERT_TRUE(fns.ok()) << fns.err().message;
  ASSERT_EQ(fns->size(), 1u);
  EXPECT_EQ((*fns)[0].name, "_Z10tc05_probePfmmj");
  EXPECT_EQ((*fns)[0].arch, "sm_100a");
  EXPECT_EQ((*fns)[0].instructions.size(), 160u);
  const auto* mma = at_offset((*fns)[0], 0x4c0);
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(mma->guard, "@UP1");
  EXPECT_EQ(mma->mnemonic, "UTCHMMA");
  EXPECT_EQ(mma->operands, "gdesc[UR10], gdesc[UR12], tmem[UR6], tmem[UR4], idesc[UR5], !UPT");
}

// "HGMMA" in a function name, a header, a comment, a label or an encoding comment is no instruction.
TEST(SassParser, WordsOutsideInstructionsNeverCount) {
  const char* text =
      "\tcode for sm_90a\n"
      "\t\tFunction : _Z11HGMMA_helperv\n"
      "\t.headerflags\t@\"EF_CUDA_SM90 HGMMA\"\n"
      "// HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0 ;\n"
      "HGMMA:\n"
      "        /*0000*/                   MOV R1, 0x1 ;   /* HGMMA 0x000000 */\n"
      "                                                   /* 0x000fe20000000f00 HGMMA */\n"
      "        /*0010*/                   // HGMMA.64x8x16 in a comment after an offset\n"
      "        /*0020*/                   EXIT ;\n"
      "\t\t..........\n"
      "\t\tFunction : UTMALDG_and_UTCHMMA\n";
  auto fns = parse_sass(text);
  ASSERT_TRUE(fns.ok()) << fns.err().message;
  ASSERT_EQ(fns->size(), 2u);
  EXPECT_EQ((*fns)[0].name, "_Z11HGMMA_helperv");
  ASSERT_EQ((*fns)[0].instructions.size(), 2u);
  EXPECT_EQ((*fns)[0].instructions[0].mnemonic, "MOV");
  EXPECT_EQ((*fns)[0].instructions[1].mnemonic, "EXIT");
  EXPECT_TRUE(count_families((*fns)[0].instructions).empty());
  EXPECT_TRUE((*fns)[1].instructions.empty());
}

TEST(SassParser, BadInputIsNamed) {
  EXPECT_EQ(parse_sass("").err().message, "SASS text is empty");
  auto junk = parse_sass("hello\nworld\n");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.err().message.find("no SASS found"), std::string::npos);
  auto orphan = parse_sass("\tcode for sm_90a\n        /*0000*/   HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;\n");
  ASSERT_FALSE(orphan.ok());
  EXPECT_NE(orphan.err().message.find("line 2: SASS instruction 'HGMMA.64x8x16.F32.BF16' appears before any function"),
            std::string::npos)
      << orphan.err().message;
  auto empty_fatbin = parse_sass("Fatbin elf code:\n================\narch = sm_90a\n");
  ASSERT_TRUE(empty_fatbin.ok());
  EXPECT_TRUE(empty_fatbin->empty());
}

TEST(SassParser, RepeatedCubinIsKeptOnceButOtherArchIsKept) {
  std::string one = fixture_text("sass/probe_sm90a.cuobjdump.txt");
  auto twice = parse_sass(one + one);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->size(), 4u);
  std::string other_arch = one;
  for (auto pos = other_arch.find("sm_90a"); pos != std::string::npos; pos = other_arch.find("sm_90a", pos))
    other_arch.replace(pos, 6, "sm_90"), pos += 5;
  auto both = parse_sass(one + other_arch);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->size(), 8u);
}

TEST(SassParser, SplitInstruction) {
  auto a = split_instruction("@!UP1 UTMALDG.2D [UR4], [UR10] ;  /* 0x000000040a0075b4 */");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->guard, "@!UP1");
  EXPECT_EQ(a->mnemonic, "UTMALDG.2D");
  EXPECT_EQ(a->opcode, "UTMALDG");
  EXPECT_EQ(a->operands, "[UR4], [UR10]");
  auto b = split_instruction("NOP;");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->mnemonic, "NOP");
  EXPECT_EQ(b->operands, "");
  EXPECT_FALSE(split_instruction("").has_value());
  EXPECT_FALSE(split_instruction("@P0").has_value());
  EXPECT_FALSE(split_instruction("nop ;").has_value());
  EXPECT_FALSE(split_instruction("// HGMMA").has_value());
  EXPECT_FALSE(split_instruction("/* 0x000fe20000000800 */").has_value());
}

}  // namespace
}  // namespace ptxbench::sass
