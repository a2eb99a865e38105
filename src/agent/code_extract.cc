#include "agent/code_extract.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/text.h"

namespace ptxbench::agent {
namespace {

struct block {
  std::string tag;
  std::string body;
  bool closed = false;
};

// A fence line: up to 3 spaces, then 3+ backticks or tildes, then an info string.
bool parse_fence(const std::string& line, char& ch, std::size_t& len, std::string& info) {
  std::size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return false;
  ch = line[i];
  std::size_t start = i;
  while (i < line.size() && line[i] == ch) ++i;
  len = i - start;
  if (len < 3) return false;
  info = line.substr(i);
  if (ch == '`' && info.find('`') != std::string::npos) return false;  // inline code, not a fence
  return true;
}

std::string first_word_lower(const std::string& info) {
  std::size_t i = 0;
  while (i < info.size() && std::isspace(static_cast<unsigned char>(info[i]))) ++i;
  std::size_t j = i;
  while (j < info.size() && !std::isspace(static_cast<unsigned char>(info[j])) && info[j] != '{') ++j;
  return lower(info.substr(i, j - i));
}

std::vector<block> find_blocks(const std::string& text) {
  std::vector<block> blocks;
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // the text's final newline
  for (std::size_t i = 0; i < lines.size(); ++i) {
    char ch;
    std::size_t len;
    std::string info;
    if (!parse_fence(lines[i], ch, len, info)) continue;
    block b;
    b.tag = first_word_lower(info);
    std::size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      char ch2;
      std::size_t len2;
      std::string info2;
      if (parse_fence(lines[j], ch2, len2, info2) && ch2 == ch && len2 >= len &&
          info2.find_first_not_of(" \t") == std::string::npos) {
        b.closed = true;
        break;
      }
      b.body += lines[j];
      b.body += '\n';
    }
    blocks.push_back(std::move(b));
    i = j;
  }
  return blocks;
}

bool is_triton(const std::string& language) { return language == "triton"; }

bool has_kernel(const std::string& code, const std::string& language) {
  return code.find(is_triton(language) ? "@triton.jit" : "__global__") != std::string::npos;
}

// A top-level `def run(` (at the start of a line): the entry the Triton runner calls.
bool has_python_entry(const std::string& code) {
  return code.rfind("def run(", 0) == 0 || code.find("\ndef run(") != std::string::npos;
}

bool is_valid(const std::string& code, const std::string& language) {
  if (is_triton(language)) return has_kernel(code, language) && has_python_entry(code);
  return has_kernel(code, language) && code.find("PTXBENCH_EXPORT") != std::string::npos;
}

bool accepted(const block& b, const std::string& language) {
  static const std::set<std::string> cuda_tags = {"cpp", "c++", "cuda", "cu", "cxx", "cuh"};
  static const std::set<std::string> python_tags = {"python", "py", "python3", "triton"};
  if ((is_triton(language) ? python_tags : cuda_tags).count(b.tag)) return true;
  return b.tag.empty() && has_kernel(b.body, language);
}

}  // namespace

std::string strip_think(const std::string& s) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    auto open = s.find("<think>", pos);
    if (open == std::string::npos) break;
    auto close = s.find("</think>", open);
    if (close == std::string::npos) break;  // an unclosed tag: keep the text, it may be all there is
    out.append(s, pos, open - pos);
    pos = close + 8;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

extraction extract_kernel(const std::string& reply, std::size_t max_code_bytes, const std::string& language) {
  extraction out;
  std::string text = strip_think(reply);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    out.problem = "the reply has no text outside its reasoning";
    return out;
  }
  auto blocks = find_blocks(text);
  if (blocks.empty()) {
    out.problem = "the reply contains no fenced code block";
    return out;
  }
  int chosen = -1;
  for (int i = static_cast<int>(blocks.size()) - 1; i >= 0 && chosen < 0; --i)
    if (accepted(blocks[i], language) && is_valid(blocks[i].body, language)) chosen = i;
  for (int i = static_cast<int>(blocks.size()) - 1; i >= 0 && chosen < 0; --i)
    if (accepted(blocks[i], language) && blocks[i].body.find_first_not_of(" \t\r\n") != std::string::npos) chosen = i;
  if (chosen < 0) {
    std::set<std::string> seen;
    for (const auto& b : blocks) seen.insert(b.tag.empty() ? "untagged" : b.tag);
    std::string list;
    for (const auto& t : seen) list += (list.empty() ? "" : ", ") + t;
    out.problem = is_triton(language)
                      ? fmt::format("found {} code block(s) ({}), but none is tagged python or contains a @triton.jit kernel",
                                    blocks.size(), list)
                      : fmt::format(
                            "found {} code block(s) ({}), but none is tagged cpp, cuda, cu or c++ or contains a __global__ kernel",
                            blocks.size(), list);
    return out;
  }
  const block& b = blocks[chosen];
  if (b.body.size() > max_code_bytes) {
    out.problem = fmt::format("the code block is {} bytes, over the limit of {}", b.body.size(), human_bytes(max_code_bytes));
    return out;
  }
  extracted_code code;
  code.code = b.body;
  code.fence_tag = b.tag;
  code.block_index = chosen;
  code.blocks_found = static_cast<int>(blocks.size());
  code.valid = is_valid(b.body, language);
  code.unterminated = !b.closed;
  out.code = std::move(code);
  return out;
}

}  // namespace ptxbench::agent
