#pragma once
// A C/C++/CUDA source split into what the compiler treats as code and what it ignores: comments and
// the insides of string and character literals are blanked (newlines kept, so offsets and line
// numbers stay valid). The source gate matches rules against the code view only, so a rule never
// fires on a word inside a comment or a string (upstream's regex rejected any "cudnn" substring).

#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::build {

struct identifier_token {
  std::string text;
  std::size_t offset = 0;  ///< byte offset in the source
  int line = 1;
  char next_char = 0;      ///< first non-space code character after the token (0 at end)
  char prev_char = 0;      ///< last non-space code character before the token (0 at start)
  bool after_arrow = false;  ///< preceded by "->" (a member access)
};

struct include_directive {
  std::string header;  ///< as written between <> or ""
  int line = 1;
};

struct string_literal {
  std::string text;  ///< the characters between the quotes (or a raw string's delimiters), escapes as written
  int line = 1;
};

struct scanned_source {
  std::string code;  ///< same length as the input; comments and literal contents replaced by spaces
  std::vector<identifier_token> identifiers;
  std::vector<include_directive> includes;
  std::vector<string_literal> literals;  ///< "..." and raw string literals (not character literals)

  /// 1-based line of a byte offset.
  [[nodiscard]] int line_of(std::size_t offset) const;

 private:
  friend scanned_source scan_source(std::string_view text);
  std::vector<std::size_t> m_line_starts;
};

/// Scans a translation unit: handles // and /* */ comments (with backslash-newline continuation),
/// "..." and '...' literals with escapes, raw strings R"delim(...)delim" (with u8/u/U/L prefixes),
/// and #include lines. Never fails: malformed input (an unterminated comment) blanks to the end.
scanned_source scan_source(std::string_view text);

/// The source line (1-based) without its newline, trimmed, for error excerpts.
std::string source_line(std::string_view text, int line);

}  // namespace ptxbench::build
