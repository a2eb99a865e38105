#include "prompts/bpe_tokenizer.h"

#include "prompts/bpe_tokenizer_impl.h"

#include "core/file_io.h"
#include "core/json_check.h"

namespace ptxbench::prompts {
namespace {

/// Decodes standard base64 (with '=' padding); nullopt on a bad character.
std::optional<std::string> base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

/// Parses the npm package's compact rank format: lines "<ignored> <first rank> <b64> <b64> ...",
/// where consecutive tokens on a line have consecutive ranks.
result<rank_map> parse_ranks(const std::string& text, const std::string& what) {
  rank_map ranks;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string_view> fields;
    for (std::size_t s = 0; s <= line.size();) {
      std::size_t e = line.find(' ', s);
      if (e == std::string_view::npos) e = line.size();
      fields.push_back(line.substr(s, e - s));
      s = e + 1;
    }
    if (fields.size() < 2) return make_error(what + ": bpe_ranks line " + std::to_string(line_no) + " has no rank");
    int rank = 0;
    try {
      rank = std::stoi(std::string(fields[1]));
    } catch (const std::exception&) {
      return make_error(what + ": bpe_ranks line " + std::to_string(line_no) + ": bad rank '" + std::string(fields[1]) +
                        "'");
    }
    for (std::size_t i = 2; i < fields.size(); ++i) {
      auto bytes = base64_decode(fields[i]);
      if (!bytes || bytes->empty())
        return make_error(what + ": bpe_ranks line " + std::to_string(line_no) + ": bad base64 token");
      ranks.emplace(std::move(*bytes), rank++);
    }
  }
  return ranks;
}

}  // namespace

/// tiktoken's merge rule: repeatedly join the adjacent pair whose concatenation has the lowest rank
/// (leftmost on ties) until no joined pair is in the vocabulary. Hugging Face's BPE joins the
/// adjacent pair that comes first in its merges list (leftmost on ties), then maps each part to its
/// id; byte-level vocabularies trained either way agree on most text, not all, so each loader keeps
/// its own rule.
void bpe_tokenizer::impl::encode_piece(std::string_view piece, std::vector<int>& out) const {
  if (!merge_list || ignore_merges) {
    if (int r = rank_of(piece); r != INT_MAX) {
      out.push_back(r);
      return;
    }
  }
  std::vector<std::size_t> cut(piece.size() + 1);
  for (std::size_t i = 0; i <= piece.size(); ++i) cut[i] = i;
  while (cut.size() > 2) {
    int best = INT_MAX;
    std::size_t best_i = 0;
    for (std::size_t i = 0; i + 2 < cut.size(); ++i) {
      const int r = merge_list ? merge_rank(piece.substr(cut[i], cut[i + 1] - cut[i]),
                                            piece.substr(cut[i + 1], cut[i + 2] - cut[i + 1]))
                               : rank_of(piece.substr(cut[i], cut[i + 2] - cut[i]));
      if (r < best) {
        best = r;
        best_i = i;
      }
    }
    if (best == INT_MAX) break;
    cut.erase(cut.begin() + static_cast<std::ptrdiff_t>(best_i) + 1);
  }
  for (std::size_t i = 0; i + 1 < cut.size(); ++i) {
    std::string_view part = piece.substr(cut[i], cut[i + 1] - cut[i]);
    int r = rank_of(part);
    if (r == INT_MAX) {  // a merge result missing from the vocabulary: fall back to its bytes (loaders check bytes)
      for (char c : part) out.push_back(rank_of(std::string_view(&c, 1)));
      continue;
    }
    out.push_back(r);
  }
}

result<bool> bpe_tokenizer::impl::encode_ordinary(std::string_view text, std::vector<int>& out) const {
  std::string prefixed;
  if (add_prefix_space && !text.empty() && text.front() != ' ') {
    prefixed = " " + std::string(text);
    text = prefixed;
  }
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(pattern, nullptr);
  PCRE2_SIZE start = 0;
  uint32_t options = 0;  // the UTF check runs once, on the first match
  while (start < text.size()) {
    const int rc = pcre2_match(pattern, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start, options, md,
                               nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) {
      encode_piece(text.substr(start), out);  // the gap after the last match (Split "Isolated" keeps gaps)
      break;
    }
    if (rc < 0) {
      pcre2_match_data_free(md);
      return make_error("text to tokenize is not valid UTF-8 (PCRE2 error " + std::to_string(rc) + ")");
    }
    options = PCRE2_NO_UTF_CHECK;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    if (ov[0] > start) encode_piece(text.substr(start, ov[0] - start), out);  // a gap between matches
    if (ov[1] == ov[0]) {  // empty match: step over one UTF-8 character
      std::size_t next = ov[0] + 1;
      while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
      if (next > ov[0]) encode_piece(text.substr(ov[0], next - ov[0]), out);
      start = next;
      continue;
    }
    encode_piece(text.substr(ov[0], ov[1] - ov[0]), out);
    start = ov[1];
  }
  pcre2_match_data_free(md);
  return true;
}

result<pcre2_code*> compile_pattern(const std::string& pat, const std::string& what) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat.data()), pat.size(), PCRE2_UTF | PCRE2_UCP, &code,
                                 &offset, nullptr);
  if (!re) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof(msg));
    return make_error(what + ": the pre-tokenizer regex does not compile at offset " + std::to_string(offset) + ": " +
                      reinterpret_cast<const char*>(msg));
  }
  pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);  // optional speed-up; matching works without it
  return re;
}

bpe_tokenizer::bpe_tokenizer(std::unique_ptr<impl> p) : m_impl(std::move(p)) {}
bpe_tokenizer::bpe_tokenizer(bpe_tokenizer&&) noexcept = default;
bpe_tokenizer& bpe_tokenizer::operator=(bpe_tokenizer&&) noexcept = default;
bpe_tokenizer::~bpe_tokenizer() = default;

result<bpe_tokenizer> bpe_tokenizer::load(const std::filesystem::path& ranks_json) {
  const std::string what = ranks_json.string();
  auto text = read_text_file(ranks_json, 64u << 20);
  if (!text) return text.err();
  auto doc = parse_json(*text, what);
  if (!doc) return doc.err();
  json_errors errs;
  auto pat = get_string(*doc, "pat_str", "", errs);
  auto ranks_text = get_string(*doc, "bpe_ranks", "", errs);
  if (!errs.empty()) return errs.to_error().with_context(what);
  auto p = std::make_unique<impl>();
  auto ranks = parse_ranks(*ranks_text, what);
  if (!ranks) return ranks.err();
  p->ranks = std::move(*ranks);
  for (int b = 0; b < 256; ++b)
    if (p->rank_of(std::string(1, static_cast<char>(b))) == INT_MAX)
      return make_error(what + ": byte " + std::to_string(b) + " has no rank, so some text could not be encoded");
  auto re = compile_pattern(*pat, what);
  if (!re) return re.err();
  p->pattern = *re;
  p->description = "cl100k_base BPE (tiktoken ranks: " + what + ")";
  return bpe_tokenizer(std::move(p));
}

result<std::vector<int>> bpe_tokenizer::encode(std::string_view text) const {
  std::vector<int> out;
  std::size_t start = 0;
  const auto& added = m_impl->added;
  if (!added.empty()) {
    // Added tokens (special and not) are matched as themselves before the text is split, longest
    // first at each position, as Hugging Face tokenizers do; the text between them is encoded normally.
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto& candidates = m_impl->added_by_first_byte[static_cast<unsigned char>(text[i])];
      for (std::size_t k : candidates) {
        const std::string& tok = added[k].first;
        if (text.compare(i, tok.size(), tok) != 0) continue;
        if (i > start)
          if (auto r = m_impl->encode_ordinary(text.substr(start, i - start), out); !r) return r.err();
        out.push_back(added[k].second);
        start = i + tok.size();
        i = start - 1;
        break;
      }
    }
  }
  if (start < text.size())
    if (auto r = m_impl->encode_ordinary(text.substr(start), out); !r) return r.err();
  return out;
}

result<std::size_t> bpe_tokenizer::count(std::string_view text) const {
  auto ids = encode(text);
  if (!ids) return ids.err();
  return ids->size();
}

std::size_t bpe_tokenizer::vocabulary_size() const { return m_impl->ranks.size(); }

std::optional<int> bpe_tokenizer::token_id(std::string_view token) const {
  for (const auto& [content, id] : m_impl->added)
    if (content == token) return id;
  int r = m_impl->rank_of(token);
  return r == INT_MAX ? std::nullopt : std::optional<int>(r);
}

const std::string& bpe_tokenizer::description() const { return m_impl->description; }

const std::vector<std::string>& bpe_tokenizer::special_tokens() const { return m_impl->special; }

}  // namespace ptxbench::prompts
