// The Hugging Face tokenizer.json loader (bpe_tokenizer::load_hugging_face) and the chat templates.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/file_io.h"
#include "core/json_check.h"
#include "prompt_test_support.h"
#include "prompts/bpe_tokenizer.h"
#include "prompts/chat_template.h"

namespace ptxbench::prompts {
namespace {

namespace fs = std::filesystem;
using ptxbench::testing::fixtures_dir;
using ptxbench::testing::make_temp_dir;

fs::path tiny() { return fixtures_dir() / "tokenizer" / "tiny_tokenizer.json"; }

std::vector<int> ids_of(const bpe_tokenizer& t, const std::string& text) {
  auto ids = t.encode(text);
  EXPECT_TRUE(ids.ok()) << ids.err().message;
  return ids.ok() ? *ids : std::vector<int>{};
}

TEST(HfTokenizer, LoadsTheFixtureAndEncodesWithItsMerges) {
  auto tok = bpe_tokenizer::load_hugging_face(tiny());
  ASSERT_TRUE(tok.ok()) << tok.err().message;
  EXPECT_EQ(tok->vocabulary_size(), 288u);
  EXPECT_NE(tok->description().find("32 merges, 5 added"), std::string::npos) << tok->description();
  // Qwen2's split gives "hello" and " world"; the merges join each into one token.
  EXPECT_EQ(ids_of(*tok, "hello world"), (std::vector<int>{259, 264}));
  // "__global__" splits into "__", "global", "__" (the regex keeps punctuation apart from letters);
  // "global" merges l+o (rank 11) before b+a (12), then ba+l: g, lo, bal.
  EXPECT_EQ(ids_of(*tok, "__global__"), (std::vector<int>{265, 'g', 267, 269, 265}));
  // A byte with no merge is its own token: in the byte-level alphabet, byte 0x0a is U+010A.
  EXPECT_EQ(ids_of(*tok, "\n"), (std::vector<int>{10}));
  EXPECT_EQ(ids_of(*tok, "\n\n"), (std::vector<int>{287}));
  // Non-ASCII text becomes its UTF-8 bytes.
  EXPECT_EQ(ids_of(*tok, "é"), (std::vector<int>{0xC3, 0xA9}));
}

TEST(HfTokenizer, AddedTokensAreSingleTokensWhereverTheyAppear) {
  auto tok = bpe_tokenizer::load_hugging_face(tiny());
  ASSERT_TRUE(tok.ok()) << tok.err().message;
  EXPECT_EQ(tok->token_id("<|im_start|>"), 289);
  EXPECT_EQ(tok->token_id("</think>"), 292);
  EXPECT_EQ(tok->token_id("hello"), 259);
  EXPECT_FALSE(tok->token_id("no such token").has_value());
  auto ids = ids_of(*tok, "<|im_start|>user\nhello<|im_end|>\n<think>x</think>");
  ASSERT_GE(ids.size(), 6u);
  EXPECT_EQ(ids.front(), 289);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 290), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 291), 1);
  EXPECT_EQ(ids.back(), 292);
  EXPECT_NE(std::find(ids.begin(), ids.end(), 259), ids.end());  // "hello" between added tokens
}

TEST(HfTokenizer, TheMergesListOrderDecidesNotTheRankOfTheJoinedToken) {
  // Two merges whose joined tokens have ids in the opposite order: "b c" is listed first, so "abc"
  // becomes a + bc even though "ab" has the smaller id (tiktoken's rule would take ab).
  auto dir = make_temp_dir("hf-order");
  ordered_json vocab = ordered_json::object();
  auto doc = parse_json(*read_text_file(tiny(), 1 << 20), "tiny");
  ASSERT_TRUE(doc.ok());
  for (const auto& [k, v] : (*doc)["model"]["vocab"].items())
    if (v.get<int>() < 256) vocab[k] = v;
  vocab["ab"] = 256;
  vocab["bc"] = 257;
  (*doc)["model"]["vocab"] = vocab;
  (*doc)["model"]["merges"] = ordered_json::array({"b c", "a b"});
  (*doc)["added_tokens"] = ordered_json::array();
  ASSERT_TRUE(write_file_atomic(dir / "t.json", doc->dump()).ok());
  auto tok = bpe_tokenizer::load_hugging_face(dir / "t.json");
  ASSERT_TRUE(tok.ok()) << tok.err().message;
  EXPECT_EQ(ids_of(*tok, "abc"), (std::vector<int>{'a', 257}));
  fs::remove_all(dir);
}

TEST(HfTokenizer, AFileThatIsNotAByteLevelBpeTokenizerIsAOneLineError) {
  auto dir = make_temp_dir("hf-bad");
  auto base = parse_json(*read_text_file(tiny(), 1 << 20), "tiny");
  ASSERT_TRUE(base.ok());
  auto variant = [&](const std::function<void(ordered_json&)>& edit) {
    ordered_json d = *base;
    edit(d);
    return d.dump();
  };
  std::map<std::string, std::pair<std::string, std::string>> cases = {
      {"not_json.json", {"this is not json {", "not a Hugging Face tokenizer.json"}},
      {"empty_object.json", {"{}", "not a Hugging Face tokenizer.json"}},
      {"wordpiece.json", {variant([](ordered_json& d) { d["model"]["type"] = "WordPiece"; }), "only byte-level BPE"}},
      {"byte_fallback.json", {variant([](ordered_json& d) { d["model"]["byte_fallback"] = true; }), "byte_fallback"}},
      {"metaspace.json",
       {variant([](ordered_json& d) { d["pre_tokenizer"] = {{"type", "Metaspace"}}; }), "pre_tokenizer 'Metaspace'"}},
      {"no_bytes.json",
       {variant([](ordered_json& d) { d["model"]["vocab"].erase("a"); }), "lacks byte 97"}},
      {"bad_merge.json",
       {variant([](ordered_json& d) { d["model"]["merges"].push_back("abc"); }), "is not two tokens"}},
      {"nfkc.json", {variant([](ordered_json& d) { d["normalizer"] = {{"type", "NFKC"}}; }), "normalizer 'NFKC'"}},
  };
  for (const auto& [name, c] : cases) {
    ASSERT_TRUE(write_file_atomic(dir / name, c.first).ok());
    auto tok = bpe_tokenizer::load_hugging_face(dir / name);
    ASSERT_FALSE(tok.ok()) << name;
    EXPECT_NE(tok.err().message.find(c.second), std::string::npos) << name << ": " << tok.err().message;
    EXPECT_NE(tok.err().message.find(name), std::string::npos) << tok.err().message;
    EXPECT_EQ(tok.err().message.find('\n'), std::string::npos) << tok.err().message;
  }
  EXPECT_FALSE(bpe_tokenizer::load_hugging_face(dir / "missing.json").ok());
  fs::remove_all(dir);
}

// --- cl100k written as a tokenizer.json must encode exactly as the tiktoken loader does ---------

std::string b64_decode(const std::string& in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    acc = (acc << 6) | static_cast<uint32_t>(value(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string byte_level(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    uint32_t cp = b;
    if (!printable) {
      int n = 0;
      for (int x = 0; x < b; ++x)
        if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174))) ++n;
      cp = 256 + static_cast<uint32_t>(n);
    }
    if (cp < 0x80) out.push_back(static_cast<char>(cp));
    else {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

TEST(HfTokenizer, Cl100kConvertedToTokenizerJsonEncodesARealCorpusLikeTheTiktokenLoader) {
  auto ranks_file = ptxbench::testing::cl100k_ranks();
  if (!ranks_file) GTEST_SKIP() << "no cl100k ranks (scripts/setup.sh fetches them)";
  auto doc = parse_json(*read_text_file(*ranks_file, 64u << 20), "ranks");
  ASSERT_TRUE(doc.ok());
  std::map<std::string, int> ranks;
  std::istringstream lines((*doc)["bpe_ranks"].get<std::string>());
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string ignored, b64;
    int rank = 0;
    fields >> ignored >> rank;
    while (fields >> b64) ranks[b64_decode(b64)] = rank++;
  }
  std::vector<std::pair<int, std::string>> by_rank;
  for (const auto& [bytes, r] : ranks) by_rank.emplace_back(r, bytes);
  std::sort(by_rank.begin(), by_rank.end());
  // The merges as Hugging Face's tiktoken conversion derives them: for each token in rank order,
  // every split into two vocabulary tokens, ordered by the halves' ranks.
  json vocab = json::object(), merges = json::array();  // json, not ordered_json: 100k keys
  for (const auto& [r, bytes] : by_rank) {
    vocab[byte_level(bytes)] = r;
    std::vector<std::tuple<int, int, std::string, std::string>> local;
    for (std::size_t i = 1; i < bytes.size(); ++i) {
      auto l = ranks.find(bytes.substr(0, i)), rr = ranks.find(bytes.substr(i));
      if (l != ranks.end() && rr != ranks.end()) local.emplace_back(l->second, rr->second, l->first, rr->first);
    }
    std::sort(local.begin(), local.end());
    for (const auto& [lr, rrk, a, b] : local) merges.push_back(byte_level(a) + " " + byte_level(b));
  }
  json hf = {
      {"version", "1.0"},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", json::array({
          {{"type", "Split"}, {"pattern", {{"Regex", (*doc)["pat_str"]}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}}},
      {"model", {{"type", "BPE"}, {"byte_fallback", false}, {"ignore_merges", false}, {"vocab", vocab}, {"merges", merges}}}};
  auto dir = make_temp_dir("hf-cl100k");
  ASSERT_TRUE(write_file_atomic(dir / "tokenizer.json", hf.dump()).ok());
  auto tiktoken = bpe_tokenizer::load(*ranks_file);
  auto converted = bpe_tokenizer::load_hugging_face(dir / "tokenizer.json");
  ASSERT_TRUE(tiktoken.ok()) << tiktoken.err().message;
  ASSERT_TRUE(converted.ok()) << converted.err().message;
  EXPECT_EQ(converted->vocabulary_size(), tiktoken->vocabulary_size());
  // A real corpus: kernels, pack documents and this very file.
  std::string corpus;
  auto root = ptxbench::testing::source_root();
  for (const auto& f : {root / "examples" / "gemm" / "wgmma_tma_pipelined.cu", root / "packs" / "system.md",
                        root / "docs" / "agent.md", root / "tests" / "prompts" / "hf_tokenizer_test.cc"})
    if (auto t = read_text_file(f, 1 << 22)) corpus += *t;
  corpus += "Ünïcödé — 漢字 and emoji 🚀\n\n\n   \t tabs";
  ASSERT_GT(corpus.size(), 20000u);
  auto a = tiktoken->encode(corpus), b = converted->encode(corpus);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), b->size());
  EXPECT_TRUE(*a == *b);
  fs::remove_all(dir);
}

// --- chat templates ----------------------------------------------------------------------------

TEST(ChatTemplate, ChatmlRendersEveryMessageVerbatimWithTheGenerationPrompt) {
  std::vector<chat_turn> m = {{"system", "S"}, {"user", "U"}, {"assistant", "<think>\nr\n</think>\n\nA"}};
  EXPECT_EQ(render_chat(chat_template::chatml, m, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n<think>\nr\n</think>\n\nA<|im_end|>\n");
  m.pop_back();
  EXPECT_EQ(render_chat(chat_template::chatml, m, true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Qwen3DropsEarlierReasoningAndNormalisesTheLastAnswer) {
  std::vector<chat_turn> m = {{"system", "S"}, {"user", "U"}, {"assistant", "<think>old</think>\n\nwrong kernel"},
                              {"user", "feedback"}, {"assistant", "<think>\n\nnew reasoning\n</think>\nfixed"}};
  EXPECT_EQ(render_chat(chat_template::qwen3, m, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nwrong kernel<|im_end|>\n"
            "<|im_start|>user\nfeedback<|im_end|>\n<|im_start|>assistant\n<think>\nnew reasoning\n</think>\n\nfixed<|im_end|>\n");
}

// What the SFT export writes by default (upstream's chat-template normalisation): each message as the
// template renders it, so rendering the normalised messages gives the same text as before.
TEST(ChatTemplate, TemplateContentsAreWhatTheRenderingHolds) {
  std::vector<chat_turn> m = {{"system", "S"}, {"user", "U"}, {"assistant", "<think>old</think>\n\nwrong kernel"},
                              {"user", "feedback"}, {"assistant", "<think>\n\nnew reasoning\n</think>\nfixed"}};
  auto q = template_contents(chat_template::qwen3, m);
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(q[0].content, "S");
  EXPECT_EQ(q[2].content, "wrong kernel");
  EXPECT_EQ(q[3].content, "feedback");
  EXPECT_EQ(q[4].content, "<think>\nnew reasoning\n</think>\n\nfixed");
  EXPECT_EQ(render_chat(chat_template::qwen3, q, false), render_chat(chat_template::qwen3, m, false));
  EXPECT_EQ(template_contents(chat_template::chatml, m)[2].content, m[2].content);  // verbatim
  EXPECT_EQ(template_contents(chat_template::llama3, {{"user", "  U \n"}})[0].content, "U");
  // No </think>: an answer is left as it is.
  EXPECT_EQ(template_contents(chat_template::qwen3, {{"user", "U"}, {"assistant", "plain"}})[1].content, "plain");
}

TEST(ChatTemplate, Llama3AndGuessingFromAJinjaTemplate) {
  std::vector<chat_turn> m = {{"system", " S "}, {"user", "U"}};
  EXPECT_EQ(render_chat(chat_template::llama3, m, true),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>"
            "\n\nU<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  auto config = parse_json(*read_text_file(fixtures_dir() / "tokenizer" / "tokenizer_config.json", 1 << 20), "cfg");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(guess_chat_template((*config)["chat_template"].get<std::string>()), chat_template::chatml);
  EXPECT_EQ(guess_chat_template("{{'<|im_start|>'}}{% if '</think>' in content %}"), chat_template::qwen3);
  EXPECT_EQ(guess_chat_template("<|start_header_id|>"), chat_template::llama3);
  EXPECT_FALSE(guess_chat_template("[INST]").has_value());
  EXPECT_EQ(parse_chat_template("qwen3"), chat_template::qwen3);
  EXPECT_FALSE(parse_chat_template("jinja").has_value());
}

}  // namespace
}  // namespace ptxbench::prompts
