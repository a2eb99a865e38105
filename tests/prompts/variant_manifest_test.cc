#include "prompts/variant_manifest.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace ptxbench::prompts {
namespace {

ordered_json minimal_manifest() {
  return ordered_json::parse(R"({
    "format": "ptxbench.variants/1",
    "system_template": "system.md", "user_template": "user.md", "abi_example": "abi_example.cu",
    "packs": {
      "p": {
        "title": "test pack",
        "lists": {"docs": ["docs/a.md", "docs/b.md"], "base": ["@docs", "include/x.cuh"]},
        "variants": {"gemm": {"base": {"description": "d", "parts": ["@base"]},
                              "extra": {"description": "d", "parts": ["@base", "patterns/p.md"]}}},
        "ablations": {"ablation_code": {"description": "d", "parts": ["@base#code"]}}
      }
    }
  })");
}

TEST(VariantManifest, ParsesAndExpandsListsAndCodeSuffix) {
  auto m = parse_variant_manifest(minimal_manifest());
  ASSERT_TRUE(m.ok()) << m.err().message;
  const auto* p = m->find_pack("p");
  ASSERT_NE(p, nullptr);
  auto v = find_variant(*p, "gemm", "extra");
  ASSERT_TRUE(v.ok());
  auto parts = expand_parts(*p, v->parts);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 4u);
  EXPECT_EQ((*parts)[0].path, "docs/a.md");
  EXPECT_EQ((*parts)[3].path, "patterns/p.md");
  auto code = find_variant(*p, "gemm", "ablation_code");
  ASSERT_TRUE(code.ok());
  auto code_parts = expand_parts(*p, code->parts);
  ASSERT_TRUE(code_parts.ok());
  for (const auto& part : *code_parts) EXPECT_TRUE(part.code_only) << part.path;
}

TEST(VariantManifest, FindsVariantsByIndexAndNamesTheChoicesOnError) {
  auto m = parse_variant_manifest(minimal_manifest());
  ASSERT_TRUE(m.ok());
  const auto* p = m->find_pack("p");
  EXPECT_EQ(find_variant(*p, "gemm", "1")->name, "extra");
  auto bad = find_variant(*p, "gemm", "nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.err().message.find("base, extra, ablation_code"), std::string::npos) << bad.err().message;
  auto fam = find_variant(*p, "mha_fwd", "base");
  ASSERT_FALSE(fam.ok());
  EXPECT_NE(fam.err().message.find("no variants for problem family 'mha_fwd'"), std::string::npos);
}

TEST(VariantManifest, RejectsCyclesUnknownListsAndKeysWithAPath) {
  auto j = minimal_manifest();
  j["packs"]["p"]["lists"]["docs"] = {"@base"};
  auto m = parse_variant_manifest(j, "v.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.err().message.find("includes itself"), std::string::npos) << m.err().message;

  j = minimal_manifest();
  j["packs"]["p"]["variants"]["gemm"]["base"]["parts"] = {"@missing"};
  m = parse_variant_manifest(j, "v.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.err().message.find("no list 'missing'"), std::string::npos) << m.err().message;
  EXPECT_NE(m.err().message.find("packs.p.variants.gemm.base"), std::string::npos) << m.err().message;

  j = minimal_manifest();
  j["packs"]["p"]["variants"]["gemm"]["base"]["partz"] = {"x"};
  m = parse_variant_manifest(j, "v.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.err().message.find("partz"), std::string::npos) << m.err().message;

  j = minimal_manifest();
  j["packs"]["p"]["variants"]["gemm"]["ablation_code"] = {{"description", "d"}, {"parts", {"@base"}}};
  m = parse_variant_manifest(j, "v.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.err().message.find("also an ablation arm"), std::string::npos) << m.err().message;
}

TEST(VariantManifest, RepositoryManifestNamesExistingFilesOnly) {
  const auto packs = ptxbench::testing::repo_root() / "packs";
  auto m = load_variant_manifest(packs);
  ASSERT_TRUE(m.ok()) << m.err().message;
  auto st = check_manifest_files(*m, packs);
  EXPECT_TRUE(st.ok()) << st.err().message;
  for (const char* pack : {"sm90a", "sm100a"}) {
    const auto* p = m->find_pack(pack);
    ASSERT_NE(p, nullptr) << pack;
    for (const char* family : {"gemm", "mha_fwd", "mha_bwd", "gqa"}) {
      const auto* vs = p->family(family);
      ASSERT_NE(vs, nullptr) << pack << " " << family;
      EXPECT_EQ(vs->size(), 3u) << pack << " " << family << ": three variants per family, as in the paper";
      EXPECT_EQ(vs->front().name, "base");
    }
    EXPECT_EQ(p->ablations.size(), 3u) << pack;
  }
}

TEST(VariantManifest, CheckFilesReportsAMissingPart) {
  auto j = minimal_manifest();
  auto m = parse_variant_manifest(j);
  ASSERT_TRUE(m.ok());
  auto st = check_manifest_files(*m, ptxbench::testing::repo_root() / "packs");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.err().message.find("not found"), std::string::npos) << st.err().message;
}

}  // namespace
}  // namespace ptxbench::prompts
