#pragma once
// Small text helpers shared by the parsers of tool output (SASS, Nsight Compute, compute-sanitizer)
// and of data files.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench {

/// Returns s without leading and trailing spaces, tabs, CR and LF.
std::string_view trim(std::string_view s);

/// Splits text into lines on '\n', dropping a trailing '\r' from each; a final newline adds no line.
std::vector<std::string_view> split_lines(std::string_view text);

/// True when s starts with prefix.
bool starts_with(std::string_view s, std::string_view prefix);

/// s with ASCII letters in lower case (bytes >= 0x80 unchanged): names, headers, tool output.
std::string lower(std::string_view s);

/// Parses a non-negative integer that may carry thousands separators ("11,776"). Returns nullopt for
/// anything else (empty, sign, decimal point, stray characters, overflow).
std::optional<int64_t> parse_count(std::string_view s);

/// s with every CR and LF turned into a space: a message that must stay on one line (an HTTP detail,
/// a warning naming a remote error).
std::string one_line(std::string s);

/// Characters of UTF-8 text as Python's len() counts them (code points): every byte that is not a
/// continuation byte (10xxxxxx) starts one.
std::size_t utf8_length(std::string_view s);


}  // namespace ptxbench
