// Reading a Hugging Face tokenizer.json into the BPE tokenizer (bpe_tokenizer::load_hugging_face).
// Written here rather than taken from a library: the `tokenizers` crate/Python package is not a
// Debian package, and only the byte-level BPE subset is needed, which fits in this file.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/json_check.h"
#include "prompts/bpe_tokenizer_impl.h"

namespace ptxbench::prompts {
namespace {

// GPT-2's pre-tokenizer regex, which ByteLevel uses when use_regex is true.
constexpr const char* k_gpt2_pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// The byte-level alphabet: byte b is written as one Unicode character, itself for the printable
// Latin-1 bytes and 256 + n for the others, in order (GPT-2's bytes_to_unicode).
std::map<uint32_t, unsigned char> unicode_to_byte() {
  std::map<uint32_t, unsigned char> inv;
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    uint32_t cp = printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + n++);
    inv[cp] = static_cast<unsigned char>(b);
  }
  return inv;
}

// Decodes one UTF-8 code point at s[i]; advances i. Returns UINT32_MAX on bad input.
uint32_t next_code_point(const std::string& s, std::size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) return UINT32_MAX;
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
  i += static_cast<std::size_t>(len);
  return cp;
}

// A vocabulary or merge string in the byte-level alphabet → the raw bytes it stands for.
std::optional<std::string> to_bytes(const std::string& s, const std::map<uint32_t, unsigned char>& inv) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    uint32_t cp = next_code_point(s, i);
    auto it = inv.find(cp);
    if (it == inv.end()) return std::nullopt;
    out.push_back(static_cast<char>(it->second));
  }
  return out;
}

struct pre_tokenizer {
  std::string pattern;
  bool add_prefix_space = false;
};

result<pre_tokenizer> read_pre_tokenizer(const json& pt, const std::string& what) {
  auto unsupported = [&](const std::string& detail) {
    return make_error(fmt::format("{}: pre_tokenizer {} is not supported (byte-level BPE needs ByteLevel, "
                                  "optionally after a Split regex)", what, detail));
  };
  if (!pt.is_object()) return unsupported(pt.is_null() ? "null" : pt.dump().substr(0, 80));
  std::string type = pt.value("type", "");
  if (type == "ByteLevel") {
    pre_tokenizer p;
    p.add_prefix_space = pt.value("add_prefix_space", false);
    if (!pt.value("use_regex", true)) return unsupported("ByteLevel without a regex and without a Split before it");
    p.pattern = k_gpt2_pattern;
    return p;
  }
  if (type != "Sequence" || !pt.contains("pretokenizers") || !pt["pretokenizers"].is_array())
    return unsupported("'" + type + "'");
  pre_tokenizer p;
  bool byte_level = false;
  for (const auto& step : pt["pretokenizers"]) {
    std::string t = step.is_object() ? step.value("type", "") : "";
    if (t == "Split") {
      if (!p.pattern.empty()) return unsupported("with two Split steps");
      if (step.value("behavior", "") != "Isolated" || step.value("invert", false))
        return unsupported("Split with behavior '" + step.value("behavior", "") + "'");
      if (!step.contains("pattern") || !step["pattern"].is_object() || !step["pattern"].contains("Regex") ||
          !step["pattern"]["Regex"].is_string())
        return unsupported("Split without a Regex pattern");
      p.pattern = step["pattern"]["Regex"].get<std::string>();
    } else if (t == "ByteLevel") {
      byte_level = true;
      p.add_prefix_space = step.value("add_prefix_space", false);
      if (step.value("use_regex", true)) {
        if (!p.pattern.empty()) return unsupported("Split followed by a regex ByteLevel");
        p.pattern = k_gpt2_pattern;
      }
    } else {
      return unsupported("step '" + t + "'");
    }
  }
  if (!byte_level) return unsupported("Sequence without ByteLevel");
  if (p.pattern.empty()) return unsupported("Sequence without a regex");
  return p;
}

}  // namespace

result<bpe_tokenizer> bpe_tokenizer::load_hugging_face(const std::filesystem::path& tokenizer_json) {
  const std::string what = tokenizer_json.string();
  auto text = read_text_file(tokenizer_json, std::size_t{256} << 20);
  if (!text) return text.err();
  // json (std::map objects), not ordered_json: a 150,000-entry vocabulary in an insertion-ordered
  // object would take quadratic time to read.
  auto doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("model") || !doc["model"].is_object())
    return make_error(fmt::format("{}: not a Hugging Face tokenizer.json (no \"model\" object)", what));
  const auto& model = doc["model"];
  std::string type = model.value("type", "");
  if (type != "BPE")
    return make_error(fmt::format("{}: model.type is '{}'; only byte-level BPE tokenizers are supported", what, type));
  if (model.value("byte_fallback", false))
    return make_error(fmt::format("{}: byte_fallback BPE (SentencePiece style) is not byte-level BPE; not supported", what));
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty())
      return make_error(fmt::format("{}: model.{} is set; not supported for byte-level BPE", what, key));
  if (!model.contains("vocab") || !model["vocab"].is_object() || !model.contains("merges") || !model["merges"].is_array())
    return make_error(fmt::format("{}: model has no vocab object or merges list", what));
  if (doc.contains("normalizer") && !doc["normalizer"].is_null()) {
    std::string n = doc["normalizer"].is_object() ? doc["normalizer"].value("type", "") : "";
    if (n != "NFC")
      return make_error(fmt::format("{}: normalizer '{}' is not supported (null or NFC only)", what, n));
  }
  auto pre = read_pre_tokenizer(doc.contains("pre_tokenizer") ? doc["pre_tokenizer"] : json(), what);
  if (!pre) return pre.err();

  auto p = std::make_unique<impl>();
  p->merge_list = true;
  p->ignore_merges = model.value("ignore_merges", false);
  p->add_prefix_space = pre->add_prefix_space;
  const auto inv = unicode_to_byte();
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer()) return make_error(fmt::format("{}: vocab entry '{}' has no integer id", what, token));
    auto bytes = to_bytes(token, inv);
    if (!bytes || bytes->empty())
      return make_error(fmt::format("{}: vocab entry '{}' is not in the byte-level alphabet (not a byte-level BPE)", what, token));
    p->ranks.emplace(std::move(*bytes), id.get<int>());
  }
  for (int b = 0; b < 256; ++b)
    if (p->rank_of(std::string(1, static_cast<char>(b))) == INT_MAX)
      return make_error(fmt::format("{}: the vocabulary lacks byte {}, so some text could not be encoded", what, b));
  int rank = 0;
  for (const auto& m : model["merges"]) {
    std::string left, right;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      auto space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        return make_error(fmt::format("{}: merge {} is not two tokens", what, m.dump()));
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      return make_error(fmt::format("{}: merge {} is neither \"a b\" nor [a, b]", what, m.dump().substr(0, 60)));
    }
    auto l = to_bytes(left, inv), r = to_bytes(right, inv);
    if (!l || !r || l->empty() || r->empty())
      return make_error(fmt::format("{}: merge {} is not in the byte-level alphabet", what, m.dump().substr(0, 60)));
    p->merge_ranks.emplace(impl::pair_key(*l, *r), rank++);
  }
  if (doc.contains("added_tokens") && doc["added_tokens"].is_array()) {
    for (const auto& a : doc["added_tokens"]) {
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id") ||
          !a["id"].is_number_integer())
        return make_error(fmt::format("{}: an added token has no content or id", what));
      std::string content = a["content"].get<std::string>();
      if (content.empty()) continue;
      p->added.emplace_back(content, a["id"].get<int>());
      if (a.value("special", false)) p->special.push_back(content);
    }
    // Longest first, so "<|im_start|>" wins over a shorter added token that is its prefix.
    std::stable_sort(p->added.begin(), p->added.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (std::size_t k = 0; k < p->added.size(); ++k)
      p->added_by_first_byte[static_cast<unsigned char>(p->added[k].first[0])].push_back(k);
  }
  auto re = compile_pattern(pre->pattern, what);
  if (!re) return re.err();
  p->pattern = *re;
  p->description = fmt::format("Hugging Face byte-level BPE (tokenizer.json: {}; {} tokens, {} merges, {} added)", what,
                               p->ranks.size(), p->merge_ranks.size(), p->added.size());
  return bpe_tokenizer(std::move(p));
}

}  // namespace ptxbench::prompts
