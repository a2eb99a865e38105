#include "supervision/code_terms.h"

#include <cctype>

#include "build/source_scan.h"

namespace ptxbench::supervision {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A word glued to a digit or a backslash is the tail of a number (1.5f, 0x1f) or an escape (\n).
bool is_tail(std::string_view text, std::size_t start) {
  if (start == 0) return false;
  char before = text[start - 1];
  return std::isdigit(static_cast<unsigned char>(before)) || before == '\\';
}

void append_words(std::string_view text, std::vector<std::string>& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (!ident_start(text[i]) || (i > 0 && ident_char(text[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t e = i;
    while (e < text.size() && ident_char(text[e])) ++e;
    if (!is_tail(text, i)) out.emplace_back(text.substr(i, e - i));
    i = e;
  }
}

}  // namespace

std::vector<std::string> source_terms(std::string_view source) {
  build::scanned_source scanned = build::scan_source(source);
  std::vector<std::string> out;
  out.reserve(scanned.identifiers.size());
  for (const auto& tok : scanned.identifiers)
    if (!is_tail(source, tok.offset)) out.push_back(tok.text);
  for (const auto& lit : scanned.literals) append_words(lit.text, out);
  return out;
}

std::vector<std::string> text_terms(std::string_view text) {
  std::vector<std::string> out;
  append_words(text, out);
  return out;
}

}  // namespace ptxbench::supervision
