#include "build/source_scan.h"

#include <algorithm>
#include <cctype>

namespace ptxbench::build {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Blanks [from, to) except newlines.
void blank(std::string& s, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to && i < s.size(); ++i)
    if (s[i] != '\n') s[i] = ' ';
}

// Returns the end of a // comment starting at i (position of the terminating newline or size),
// honouring backslash-newline continuations.
std::size_t line_comment_end(std::string_view t, std::size_t i) {
  while (i < t.size()) {
    if (t[i] == '\n') {
      std::size_t j = i;
      while (j > 0 && (t[j - 1] == '\r')) --j;
      if (j > 0 && t[j - 1] == '\\') { ++i; continue; }
      return i;
    }
    ++i;
  }
  return i;
}

// Position just after a quoted literal starting at the quote at i.
std::size_t quoted_end(std::string_view t, std::size_t i) {
  char q = t[i];
  ++i;
  while (i < t.size()) {
    if (t[i] == '\\') { i += 2; continue; }
    if (t[i] == q) return i + 1;
    if (t[i] == '\n' && q == '\'') return i;  // an unterminated char literal ends at the line
    ++i;
  }
  return t.size();
}

// If a raw string starts at i (i at 'R' preceded by an optional prefix already consumed), returns
// its end, else npos.
std::size_t raw_string_end(std::string_view t, std::size_t quote) {
  std::size_t open = t.find('(', quote + 1);
  if (open == std::string_view::npos || open - quote - 1 > 16) return std::string_view::npos;
  std::string delim = ")" + std::string(t.substr(quote + 1, open - quote - 1)) + "\"";
  std::size_t close = t.find(delim, open + 1);
  return close == std::string_view::npos ? t.size() : close + delim.size();
}

}  // namespace

int scanned_source::line_of(std::size_t offset) const {
  auto it = std::upper_bound(m_line_starts.begin(), m_line_starts.end(), offset);
  return static_cast<int>(it - m_line_starts.begin());
}

scanned_source scan_source(std::string_view text) {
  scanned_source out;
  out.code.assign(text.begin(), text.end());
  out.m_line_starts.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') out.m_line_starts.push_back(i + 1);

  std::string& code = out.code;
  std::size_t i = 0;
  bool line_start = true;  // only whitespace so far on this line (for '#' directives)
  while (i < text.size()) {
    char c = text[i];
    if (c == '\n') { line_start = true; ++i; continue; }
    if (line_start && c == '#') {
      // A preprocessor directive: record #include targets, then keep scanning its tokens normally.
      std::size_t j = i + 1;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
      if (text.substr(j, 7) == "include") {
        std::size_t k = j + 7;
        while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
        if (k < text.size() && (text[k] == '<' || text[k] == '"')) {
          char close = text[k] == '<' ? '>' : '"';
          std::size_t e = text.find(close, k + 1);
          std::size_t nl = text.find('\n', k);
          if (e != std::string_view::npos && (nl == std::string_view::npos || e < nl)) {
            out.includes.push_back({std::string(text.substr(k + 1, e - k - 1)), out.line_of(i)});
            blank(code, k, e + 1);  // the header name is not code (and not a string to scan)
            i = e + 1;
            line_start = false;
            continue;
          }
        }
      }
    }
    if (c != ' ' && c != '\t' && c != '\r') line_start = false;
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      std::size_t e = line_comment_end(text, i);
      blank(code, i, e);
      i = e;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      std::size_t e = text.find("*/", i + 2);
      e = e == std::string_view::npos ? text.size() : e + 2;
      blank(code, i, e);
      i = e;
      continue;
    }
    if (c == '"' || c == '\'') {
      // Digit separators (1'000'000) are not character literals.
      if (c == '\'' && i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1]))) { ++i; continue; }
      std::size_t e = quoted_end(text, i);
      if (c == '"' && e > i + 1) out.literals.push_back({std::string(text.substr(i + 1, e - i - 2)), out.line_of(i)});
      blank(code, i + 1, e > i + 1 ? e - 1 : e);
      i = e;
      continue;
    }
    if (is_ident_start(c)) {
      std::size_t e = i;
      while (e < text.size() && is_ident_char(text[e])) ++e;
      std::string_view word = text.substr(i, e - i);
      bool raw_prefix = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
      if (raw_prefix && e < text.size() && text[e] == '"') {
        std::size_t end = raw_string_end(text, e);
        if (end != std::string_view::npos) {
          std::size_t open = text.find('(', e + 1);
          std::size_t delim = open - e - 1;  // the delimiter between '"' and '('
          if (end >= open + delim + 3)
            out.literals.push_back({std::string(text.substr(open + 1, end - open - delim - 3)), out.line_of(i)});
          blank(code, e + 1, end > e + 1 ? end - 1 : end);
          i = end;
          continue;
        }
      }
      if ((word == "u8" || word == "u" || word == "U" || word == "L") && e < text.size() &&
          (text[e] == '"' || text[e] == '\'')) {
        i = e;  // prefix of an ordinary literal; the literal is handled next round
        continue;
      }
      identifier_token tok;
      tok.text = std::string(word);
      tok.offset = i;
      tok.line = out.line_of(i);
      out.identifiers.push_back(std::move(tok));
      i = e;
      continue;
    }
    ++i;
  }
  // Neighbouring code characters, taken from the blanked view so comments never count.
  for (auto& tok : out.identifiers) {
    std::size_t after = tok.offset + tok.text.size();
    while (after < code.size() && std::isspace(static_cast<unsigned char>(code[after]))) ++after;
    tok.next_char = after < code.size() ? code[after] : 0;
    std::size_t before = tok.offset;
    while (before > 0 && std::isspace(static_cast<unsigned char>(code[before - 1]))) --before;
    tok.prev_char = before > 0 ? code[before - 1] : 0;
    tok.after_arrow = before >= 2 && code[before - 1] == '>' && code[before - 2] == '-';
  }
  return out;
}

std::string source_line(std::string_view text, int line) {
  std::size_t start = 0;
  for (int l = 1; l < line && start != std::string_view::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start >= text.size()) return "";
  std::size_t end = text.find('\n', start);
  std::string s(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
  auto first = s.find_first_not_of(" \t\r");
  auto last = s.find_last_not_of(" \t\r");
  if (first == std::string::npos) return "";
  s = s.substr(first, last - first + 1);
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

}  // namespace ptxbench::build
