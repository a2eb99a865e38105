#include "sass/sass_parser.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::sass {

std::string_view format_name(sass_format f) {
  return f == sass_format::cuobjdump ? "cuobjdump" : "nvdisasm";
}

namespace {

bool is_opcode_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// "/*0a30*/ rest" -> offset and rest. The encoding continuation "/* 0x000fe2... */" has a space and
// "0x", so it never matches.
std::optional<std::pair<uint64_t, std::string_view>> split_offset_comment(std::string_view line) {
  line = trim(line);
  if (line.substr(0, 2) != "/*") return std::nullopt;
  auto close = line.find("*/", 2);
  if (close == std::string_view::npos || close == 2) return std::nullopt;
  std::string_view digits = line.substr(2, close - 2);
  if (digits.size() > 16 || !std::all_of(digits.begin(), digits.end(), is_hex)) return std::nullopt;
  return std::make_pair(std::stoull(std::string(digits), nullptr, 16), line.substr(close + 2));
}

// The token after `prefix` up to whitespace or ',' ("code for sm_90a" -> "sm_90a").
std::string token_after(std::string_view line, std::string_view prefix) {
  auto rest = trim(line.substr(prefix.size()));
  auto end = rest.find_first_of(" \t,");
  return std::string(rest.substr(0, end));
}

// `//--------------------- .text._Z5probev ----------` -> "_Z5probev"; other sections -> "".
std::optional<std::string> nvdisasm_section_header(std::string_view t) {
  if (t.substr(0, 5) != "//---") return std::nullopt;
  auto dot = t.find(" .");
  if (dot == std::string_view::npos) return std::nullopt;
  auto section = t.substr(dot + 1);
  section = section.substr(0, section.find(' '));
  if (section.substr(0, 6) != ".text.") return std::string();
  return std::string(section.substr(6));
}

// `//## File "./probe.cu", line 95` (nvdisasm -g) -> "./probe.cu:95".
std::string line_info(std::string_view t) {
  auto q1 = t.find('"');
  auto q2 = q1 == std::string_view::npos ? q1 : t.find('"', q1 + 1);
  auto ln = t.find("line ", q2 == std::string_view::npos ? 0 : q2);
  if (q2 == std::string_view::npos || ln == std::string_view::npos) return "";
  auto num = t.substr(ln + 5);
  num = num.substr(0, num.find_first_not_of("0123456789"));
  return fmt::format("{}:{}", t.substr(q1 + 1, q2 - q1 - 1), num);
}

struct parse_state {
  std::vector<sass_function> functions;
  int current = -1;  // index into functions; -1 outside a function
  std::string arch;
  std::string location;
  bool saw_marker = false;

  void begin(std::string name, sass_format format, int line_no) {
    functions.push_back(sass_function{std::move(name), arch, format, line_no, {}});
    current = static_cast<int>(functions.size()) - 1;
    location.clear();
  }
  void end() { current = -1; }
  sass_function* function() { return current < 0 ? nullptr : &functions[current]; }
};

// Reads a line that is not an instruction: headers set the arch and open or close functions;
// everything else (labels, directives, comments, encodings) is ignored.
void read_structure_line(std::string_view t, int line_no, parse_state& st) {
  if (t.substr(0, 12) == "Fatbin elf c" || t.substr(0, 12) == "Fatbin ptx c") {
    st.saw_marker = true;
    st.end();
    st.arch.clear();
  } else if (t.substr(0, 6) == "arch =") {
    st.arch = token_after(t, "arch =");
  } else if (t.substr(0, 8) == "code for") {
    st.saw_marker = true;
    st.arch = token_after(t, "code for");
  } else if (t.substr(0, 7) == ".target") {
    st.saw_marker = true;
    st.arch = token_after(t, ".target");
  } else if (t.substr(0, 10) == "Function :") {
    st.saw_marker = true;
    st.begin(std::string(trim(t.substr(10))), sass_format::cuobjdump, line_no);
  } else if (t.substr(0, 10) == "..........") {
    st.end();
  } else if (auto section = nvdisasm_section_header(t)) {
    st.saw_marker = true;
    if (section->empty()) st.end();
    else st.begin(*section, sass_format::nvdisasm, line_no);
  } else if (t.substr(0, 14) == ".section\t.text" || t.substr(0, 14) == ".section .text") {
    // A .section line without the comment header (e.g. text pasted without it) still opens a function.
    std::string name(trim(t.substr(14)));
    name = name.substr(name.find('.') == 0 ? 1 : 0);
    name = name.substr(0, name.find(','));
    st.saw_marker = true;
    if (!st.function() || st.function()->name != name) st.begin(name, sass_format::nvdisasm, line_no);
  } else if (t.substr(0, 4) == "//##") {
    st.location = line_info(t);
  }
}

// Drops functions that repeat an earlier one exactly (same key and instructions).
void drop_duplicates(std::vector<sass_function>& fns) {
  std::vector<sass_function> kept;
  for (auto& f : fns) {
    bool dup = std::any_of(kept.begin(), kept.end(), [&](const sass_function& k) {
      return k.name == f.name && k.arch == f.arch && k.format == f.format && k.instructions == f.instructions;
    });
    if (!dup) kept.push_back(std::move(f));
  }
  fns = std::move(kept);
}

}  // namespace

std::optional<sass_instruction> split_instruction(std::string_view text) {
  std::string_view t = trim(text);
  if (!t.empty() && t.front() == '{') t = trim(t.substr(1));  // dual-issue braces of older archs
  sass_instruction inst;
  if (!t.empty() && t.front() == '@') {
    auto sp = t.find_first_of(" \t");
    if (sp == std::string_view::npos) return std::nullopt;
    inst.guard = std::string(t.substr(0, sp));
    t = trim(t.substr(sp));
  }
  if (t.empty() || !(t.front() >= 'A' && t.front() <= 'Z')) return std::nullopt;
  auto end = t.find_first_of(" \t;");
  std::string_view mnemonic = t.substr(0, end);
  std::string_view opcode = mnemonic.substr(0, mnemonic.find('.'));
  if (!std::all_of(opcode.begin(), opcode.end(), is_opcode_char)) return std::nullopt;
  inst.mnemonic = std::string(mnemonic);
  inst.opcode = std::string(opcode);
  std::string_view rest = end == std::string_view::npos ? std::string_view() : t.substr(end);
  auto semi = rest.find(';');
  if (semi == std::string_view::npos) semi = rest.find("/*");
  inst.operands = std::string(trim(rest.substr(0, semi)));
  return inst;
}

result<std::vector<sass_function>> parse_sass(std::string_view text) {
  if (trim(text).empty()) return make_error("SASS text is empty");
  parse_state st;
  int line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    std::string_view t = trim(line);
    if (t.empty()) continue;
    if (auto off = split_offset_comment(t)) {
      auto inst = split_instruction(off->second);
      if (!inst) continue;  // an offset comment with no opcode (e.g. an encoding-only line)
      if (!st.function())
        return make_error(fmt::format("line {}: SASS instruction '{}' appears before any function header "
                                      "('Function :' or an nvdisasm .text section)", line_no, inst->mnemonic));
      inst->offset = off->first;
      inst->source_location = st.location;
      st.function()->instructions.push_back(std::move(*inst));
      continue;
    }
    read_structure_line(t, line_no, st);
  }
  if (!st.saw_marker)
    return make_error("no SASS found: expected `cuobjdump -sass` or `nvdisasm` output "
                      "(no 'Function :', 'code for sm_', '.target' or .text section line)");
  drop_duplicates(st.functions);
  return std::move(st.functions);
}

}  // namespace ptxbench::sass
