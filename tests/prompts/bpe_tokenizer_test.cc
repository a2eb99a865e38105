#include "prompts/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/json_check.h"
#include "prompt_test_support.h"
#include "prompts/token_estimator.h"

namespace ptxbench::prompts {
namespace {

using ptxbench::testing::cl100k_ranks;
using ptxbench::testing::make_temp_dir;

std::string b64(const std::string& s) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    uint32_t v = (uint8_t)s[i] << 16 | (uint8_t)s[i + 1] << 8 | (uint8_t)s[i + 2];
    for (int k = 18; k >= 0; k -= 6) out += tbl[(v >> k) & 63];
  }
  if (i + 1 == s.size()) {
    uint32_t v = (uint8_t)s[i] << 16;
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == s.size()) {
    uint32_t v = (uint8_t)s[i] << 16 | (uint8_t)s[i + 1] << 8;
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += tbl[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

/// A tiny vocabulary in the npm file format: the 256 bytes (ranks 0..255), then merges.
std::filesystem::path write_tiny_ranks(const std::vector<std::string>& merges) {
  std::string line = "! 0";
  for (int b = 0; b < 256; ++b) line += " " + b64(std::string(1, static_cast<char>(b)));
  std::string second = "! 256";
  for (const auto& m : merges) second += " " + b64(m);
  ordered_json j = {
      {"pat_str", "\\s+|\\S+"}, {"special_tokens", ordered_json::object()}, {"bpe_ranks", line + "\n" + second}};
  auto dir = make_temp_dir("bpe");
  auto path = dir / "tiny.json";
  EXPECT_TRUE(write_file_atomic(path, j.dump()).ok());
  return path;
}

TEST(BpeTokenizer, MergesTheLowestRankedPairFirst) {
  // "ab" (256) merges before "bc" (257); then "abc" (258) is in the vocabulary.
  auto tok = bpe_tokenizer::load(write_tiny_ranks({"ab", "bc", "abc", "cd"}));
  ASSERT_TRUE(tok.ok()) << tok.err().message;
  EXPECT_EQ(tok->vocabulary_size(), 260u);
  auto ids = tok->encode("abcd");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<int>{258, 'd'}));  // ab -> abc; "cd" is never formed because c joined abc
  auto spaced = tok->encode("cd  ab");
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ(*spaced, (std::vector<int>{259, ' ', ' ', 256}));
}

TEST(BpeTokenizer, RejectsAFileWithoutAllByteRanks) {
  auto dir = make_temp_dir("bpe-bad");
  ASSERT_TRUE(write_file_atomic(dir / "bad.json", R"({"pat_str": "\\S+", "bpe_ranks": "! 0 YQ=="})").ok());
  auto tok = bpe_tokenizer::load(dir / "bad.json");
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.err().message.find("has no rank"), std::string::npos) << tok.err().message;
}

TEST(BpeTokenizer, RejectsMalformedInputWithTheFileName) {
  auto dir = make_temp_dir("bpe-bad2");
  ASSERT_TRUE(write_file_atomic(dir / "bad.json", R"({"pat_str": "(", "bpe_ranks": "! 0 YQ=="})").ok());
  auto tok = bpe_tokenizer::load(dir / "bad.json");
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.err().message.find("bad.json"), std::string::npos) << tok.err().message;
  EXPECT_FALSE(bpe_tokenizer::load(dir / "missing.json").ok());
}

TEST(BpeTokenizer, MatchesTiktokenOnCl100kCases) {
  auto ranks = cl100k_ranks();
  if (!ranks) GTEST_SKIP() << "cl100k ranks not installed (scripts/setup.sh fetches them with npm)";
  auto tok = bpe_tokenizer::load(*ranks);
  ASSERT_TRUE(tok.ok()) << tok.err().message;
  EXPECT_EQ(tok->vocabulary_size(), 100256u);
  auto text = read_text_file(ptxbench::testing::fixtures_dir() / "prompts" / "cl100k_cases.json", 1 << 20);
  ASSERT_TRUE(text.ok());
  auto j = parse_json(*text, "cl100k_cases.json");
  ASSERT_TRUE(j.ok());
  for (const auto& c : (*j)["cases"]) {
    const std::string s = c["text"].get<std::string>();
    auto ids = tok->encode(s);
    ASSERT_TRUE(ids.ok()) << ids.err().message;
    EXPECT_EQ(*ids, c["tokens"].get<std::vector<int>>()) << "text: " << s;
  }
}

TEST(BpeTokenizer, ReportsInvalidUtf8) {
  auto tok = bpe_tokenizer::load(write_tiny_ranks({"ab"}));
  ASSERT_TRUE(tok.ok());
  EXPECT_FALSE(tok->encode(std::string("a\xff\xfe", 3)).ok());
}

TEST(TokenEstimator, FallsBackToLabelledCharsOver4) {
  auto e = token_estimator::find({"/nonexistent/cl100k_base.json"});
  EXPECT_FALSE(e.is_exact());
  EXPECT_EQ(e.count("12345678"), 2u);
  EXPECT_EQ(e.count("123456789"), 3u);
  EXPECT_NE(e.method().find("chars/4"), std::string::npos);
  EXPECT_NE(e.method().find("/nonexistent/cl100k_base.json"), std::string::npos) << e.method();
}

TEST(TokenEstimator, UsesTheFirstLoadableRanksFile) {
  auto tiny = write_tiny_ranks({"ab"});
  auto e = token_estimator::find({"/nonexistent.json", tiny});
  EXPECT_TRUE(e.is_exact());
  EXPECT_EQ(e.count("abab"), 2u);
  EXPECT_NE(e.method().find("cl100k_base BPE"), std::string::npos);
  auto defaults = default_ranks_candidates("/env/ranks.json", "/root", "/cache");
  ASSERT_EQ(defaults.size(), 3u);
  EXPECT_EQ(defaults[0], "/env/ranks.json");
  EXPECT_EQ(defaults[1], "/root/build/third_party/tiktoken/cl100k_base.json");
}

}  // namespace
}  // namespace ptxbench::prompts
