#include "harbor/verdict_scan.h"

#include <cctype>

namespace ptxbench::harbor {
namespace {

constexpr std::string_view k_marker = "\"ptxbench.verdict/1\"";
constexpr std::string_view k_format_key = "\"format\"";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The end (one past the closing brace) of the JSON object that opens at `open`, honouring strings
// and escapes; npos when it never closes. Each character looked at costs one of `budget`, so hostile
// text (many unclosed objects, each scanned to the end) costs linear time, not quadratic.
std::size_t object_end(std::string_view text, std::size_t open, std::size_t& budget) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (budget == 0) return std::string_view::npos;
    --budget;
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{') ++depth;
    else if (c == '}' && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

// The opening brace of the object whose first member is `"format": "ptxbench.verdict/1"` with the
// value at `marker`, or npos.
std::size_t opening_brace(std::string_view text, std::size_t marker, std::size_t from) {
  std::size_t i = marker;
  while (i > from && is_space(text[i - 1])) --i;
  if (i == from || text[i - 1] != ':') return std::string_view::npos;
  --i;
  while (i > from && is_space(text[i - 1])) --i;
  if (i < from + k_format_key.size() || text.substr(i - k_format_key.size(), k_format_key.size()) != k_format_key)
    return std::string_view::npos;
  i -= k_format_key.size();
  while (i > from && is_space(text[i - 1])) --i;
  if (i == from || text[i - 1] != '{') return std::string_view::npos;
  return i - 1;
}

}  // namespace

std::vector<ordered_json> find_verdicts(std::string_view text, std::size_t max_found) {
  std::vector<ordered_json> out;
  std::size_t from = 0;
  std::size_t budget = 8 * text.size() + (std::size_t{1} << 20);
  for (std::size_t marker = text.find(k_marker); marker != std::string_view::npos && out.size() < max_found;
       marker = text.find(k_marker, marker + 1)) {
    if (marker < from) continue;
    const std::size_t open = opening_brace(text, marker, from);
    if (open == std::string_view::npos) continue;
    const std::size_t end = object_end(text, open, budget);
    if (end == std::string_view::npos) continue;
    auto j = ordered_json::parse(text.substr(open, end - open), nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    out.push_back(std::move(j));
    from = end;
  }
  return out;
}

}  // namespace ptxbench::harbor
