// BM25 on a fixed three-document corpus, against scores computed by hand (the arithmetic is below,
// so the expected values can be checked with a calculator).
#include <cmath>

#include <gtest/gtest.h>

#include "supervision/bm25.h"
#include "supervision/code_terms.h"

namespace ptxbench::supervision {
namespace {

// D1 = wgmma fence wgmma commit      |D1| = 4
// D2 = tma load barrier              |D2| = 3
// D3 = wgmma tma barrier wait arrive |D3| = 5
// N = 3, avgdl = (4 + 3 + 5) / 3 = 4
// Document frequencies: wgmma 2, tma 2, barrier 2; fence, commit, load, wait, arrive 1.
const std::vector<std::vector<std::string>> k_corpus = {
    {"wgmma", "fence", "wgmma", "commit"},
    {"tma", "load", "barrier"},
    {"wgmma", "tma", "barrier", "wait", "arrive"},
};

// idf(n=2) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1 + 1.5/2.5) = ln(1.6)  = 0.47000362924573563
// idf(n=1) = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(1 + 2.5/1.5) = ln(8/3) = 0.98082925301172630
const double k_idf2 = std::log(1.6);
const double k_idf1 = std::log(8.0 / 3.0);

TEST(SupervisionBm25, IdfByHand) {
  bm25_index index(k_corpus, {1.5, 0.75});
  EXPECT_NEAR(index.idf("wgmma"), 0.47000362924573563, 1e-15);
  EXPECT_NEAR(index.idf("fence"), 0.98082925301172630, 1e-15);
  // A term no document holds: ln(1 + (3 + 0.5) / 0.5) = ln(8)
  EXPECT_NEAR(index.idf("tcgen05"), std::log(8.0), 1e-15);
  EXPECT_DOUBLE_EQ(index.average_length(), 4.0);
}

TEST(SupervisionBm25, ScoresEqualHandComputedValues) {
  bm25_index index(k_corpus, {1.5, 0.75});
  // Query "wgmma fence wgmma": distinct terms wgmma, fence (a repeated query term counts once).
  // Term weight t(f, |D|) = f * (k1 + 1) / (f + k1 * (1 - b + b * |D| / avgdl)), k1 = 1.5, b = 0.75.
  // D1: |D1|/avgdl = 1, norm = 1.5 * (0.25 + 0.75) = 1.5
  //     wgmma f=2: 2 * 2.5 / (2 + 1.5) = 1.4285714285714286; x idf2 = 0.6714337560653366
  //     fence f=1: 1 * 2.5 / (1 + 1.5) = 1;                  x idf1 = 0.9808292530117263
  //     score = 1.6522630090770628
  // D2: shares no term: 0
  // D3: |D3|/avgdl = 1.25, norm = 1.5 * (0.25 + 0.9375) = 1.78125
  //     wgmma f=1: 2.5 / 2.78125 = 0.898876404494382;       x idf2 = 0.4224751723557174
  auto s = index.scores({"wgmma", "fence", "wgmma"});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 1.652263009077063, 1e-12);
  EXPECT_NEAR(s[0], k_idf2 * 5.0 / 3.5 + k_idf1 * 1.0, 1e-12);
  EXPECT_EQ(s[1], 0.0);
  EXPECT_NEAR(s[2], 0.4224751723557174, 1e-12);

  // Query "tma barrier load":
  // D2: |D2|/avgdl = 0.75, norm = 1.5 * (0.25 + 0.5625) = 1.21875; each f=1: 2.5 / 2.21875 = 1.1267605633802817
  //     score = 1.1267605633802817 * (idf2 + idf2 + idf1) = 2.164322829862758
  // D3: tma and barrier f=1: 0.898876404494382 * 2 * idf2 = 0.8449503447114348
  s = index.scores({"tma", "barrier", "load"});
  EXPECT_NEAR(s[0], 0.0, 0);
  EXPECT_NEAR(s[1], 2.164322829862758, 1e-12);
  EXPECT_NEAR(s[2], 0.8449503447114348, 1e-12);
}

TEST(SupervisionBm25, ParametersChangeTheScores) {
  // k1 = 1.2, b = 0 (no length normalisation): t(f) = f * 2.2 / (f + 1.2)
  // D1: wgmma f=2: 4.4 / 3.2 = 1.375 x idf2; fence: 2.2 / 2.2 = 1 x idf1 -> 1.6270842432246129
  // D3: wgmma f=1: 1 x idf2 = 0.47000362924573563 (the same as D1's fence weight per occurrence: b = 0)
  bm25_index index(k_corpus, {1.2, 0.0});
  auto s = index.scores({"wgmma", "fence"});
  EXPECT_NEAR(s[0], 1.6270842432246129, 1e-12);
  EXPECT_NEAR(s[2], 0.47000362924573563, 1e-12);
  // k1 = 0 ignores frequency: every matching term weighs its idf.
  bm25_index binary(k_corpus, {0.0, 0.75});
  s = binary.scores({"wgmma", "fence"});
  EXPECT_NEAR(s[0], k_idf2 + k_idf1, 1e-12);
}

TEST(SupervisionBm25, EdgeCases) {
  bm25_index empty({}, {1.5, 0.75});
  EXPECT_TRUE(empty.scores({"x"}).empty());
  bm25_index blank({{}, {}}, {1.5, 0.75});
  EXPECT_EQ(blank.scores({"x"}), (std::vector<double>{0, 0}));
  EXPECT_FALSE(check_bm25_params({-1, 0.75}));
  EXPECT_FALSE(check_bm25_params({1.5, 1.5}));
  EXPECT_FALSE(check_bm25_params({std::nan(""), 0.75}));
  EXPECT_TRUE(check_bm25_params({0, 1}));
}

TEST(SupervisionCodeTerms, CommentsDropPtxStringsCountNumberTailsDoNot) {
  const std::string src =
      "// wgmma in a comment does not count\n"
      "/* neither does tcgen05 */\n"
      "__global__ void k(float* out) {\n"
      "  asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0}, %1;\\n\" : : );\n"
      "  out[0x1f] = 1.5f;\n"
      "}\n";
  auto terms = source_terms(src);
  auto has = [&](const std::string& t) { return std::find(terms.begin(), terms.end(), t) != terms.end(); };
  EXPECT_TRUE(has("wgmma"));        // from the PTX string
  EXPECT_TRUE(has("mma_async"));
  EXPECT_TRUE(has("m64n128k16"));
  EXPECT_TRUE(has("__global__"));
  EXPECT_TRUE(has("out"));
  EXPECT_FALSE(has("tcgen05"));     // comment
  EXPECT_FALSE(has("comment"));
  EXPECT_FALSE(has("x1f"));         // 0x1f
  EXPECT_FALSE(has("f"));           // 1.5f
  EXPECT_FALSE(has("n"));           // \n escape
  EXPECT_EQ(std::count(terms.begin(), terms.end(), "wgmma"), 1);
  auto words = text_terms("kernel.cu(12): error: identifier \"undefined_symbol\" is undefined; 3 errors");
  EXPECT_EQ(words, (std::vector<std::string>{"kernel", "cu", "error", "identifier", "undefined_symbol", "is", "undefined",
                                             "errors"}));
}

}  // namespace
}  // namespace ptxbench::supervision
