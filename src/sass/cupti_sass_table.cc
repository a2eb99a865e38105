#include "sass/cupti_sass_table.h"

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::sass {
namespace {

constexpr std::string_view k_header = "kernel\tfunction\tpc\tinst_executed\tthread_inst\tthread_inst_pred_on\tsass";

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    auto tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) return out;
    start = tab + 1;
  }
}

result<cupti_pc_record> read_record(std::string_view line, int line_no) {
  auto where = [&](std::string_view what) { return make_error(fmt::format("CUPTI TSV line {}: {}", line_no, what)); };
  auto f = split_tabs(line);
  if (f.size() != 7) return where(fmt::format("{} columns, expected 7", f.size()));
  cupti_pc_record r;
  r.kernel = std::string(f[0]);
  r.function = std::string(f[1]);
  std::string_view pc = f[2];
  if (!starts_with(pc, "0x") || pc.size() < 3 || pc.size() > 18 ||
      pc.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string_view::npos)
    return where(fmt::format("cannot read the pc '{}'", pc));
  r.pc_offset = std::stoull(std::string(pc.substr(2)), nullptr, 16);
  auto a = parse_count(f[3]), b = parse_count(f[4]), c = parse_count(f[5]);
  if (!a || !b || !c) return where("cannot read the counts");
  r.inst_executed = *a;
  r.thread_inst = *b;
  r.thread_inst_pred_on = *c;
  auto inst = split_instruction(f[6]);
  if (!inst) return where(fmt::format("cannot read the SASS instruction '{}'", f[6]));
  r.instruction = std::move(*inst);
  r.instruction.offset = r.pc_offset;
  return r;
}

}  // namespace

result<std::vector<cupti_pc_record>> parse_cupti_joined_tsv(std::string_view text) {
  std::vector<cupti_pc_record> records;
  int line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    if (line_no == 1) {
      if (trim(line) != k_header)
        return make_error(fmt::format("CUPTI TSV line 1: expected the header '{}'", k_header));
      continue;
    }
    if (trim(line).empty()) continue;
    auto r = read_record(line, line_no);
    if (!r) return r.err();
    records.push_back(std::move(*r));
  }
  if (line_no == 0) return make_error("CUPTI TSV is empty");
  return records;
}

std::map<std::string, opcode_executions> cupti_per_opcode(const std::vector<cupti_pc_record>& records) {
  std::map<std::string, opcode_executions> out;
  for (const auto& r : records) {
    auto& e = out[r.function][r.instruction.opcode];
    e.inst_executed += r.inst_executed;
    e.thread_inst_pred_on += r.thread_inst_pred_on;
  }
  return out;
}

}  // namespace ptxbench::sass
