// The source-page format: `ncu --page source --print-source sass --csv --metrics
// inst_executed,thread_inst_executed_true`. Per kernel a block:
//   "Kernel Name","wgmma_probe(float *)",
//   "Address","Source","inst_executed","thread_inst_executed_true"
//   "0x7f7e5f7a0050","@P1   BRA 0x7f7e5f7a0110","4","0"
// Nsight Compute 2025.3.1 on an H200 printed every block twice in a row, identically, for a program
// that launched each kernel once (fixture ncu/probe_source_page.csv). The page carries no launch ID,
// so an identical immediate repeat is taken as that duplicate printout and dropped (counted in
// duplicate_blocks_dropped). Two launches with identical counts would be merged the same way; the
// executed/not-executed decision does not change, only the totals would be halved.

#include <fmt/format.h>

#include "sass/ncu_report.h"
#include "sass/sass_parser.h"
#include "core/csv.h"
#include "core/text.h"

namespace ptxbench::sass {
namespace {

constexpr std::string_view k_source_page_command_hint =
    "--page source --print-source sass --csv --metrics inst_executed,thread_inst_executed_true";

bool same_rows(const std::vector<ncu_source_row>& a, const std::vector<ncu_source_row>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    if (x.address != y.address || x.mnemonic != y.mnemonic || x.guard != y.guard || x.operands != y.operands ||
        x.inst_executed != y.inst_executed || x.thread_inst_pred_on != y.thread_inst_pred_on)
      return false;
  }
  return true;
}

struct columns {
  std::size_t count = 0, address = 0, source = 0, inst = 0, thread = 0;
};

result<columns> read_header(const std::vector<std::string>& h, int line_no) {
  columns c;
  c.count = h.size();
  auto find = [&](std::string_view name, std::size_t& out) {
    for (std::size_t i = 0; i < h.size(); ++i)
      if (h[i] == name) { out = i; return true; }
    return false;
  };
  for (auto [name, slot] : {std::pair<std::string_view, std::size_t*>{"Address", &c.address},
                            {"Source", &c.source}, {"inst_executed", &c.inst},
                            {"thread_inst_executed_true", &c.thread}})
    if (!find(name, *slot))
      return make_error(fmt::format("ncu CSV line {}: source-page header has no \"{}\" column; run ncu with {}",
                                    line_no, name, k_source_page_command_hint));
  return c;
}

result<ncu_source_row> read_row(const std::vector<std::string>& f, const columns& c, int line_no) {
  auto where = [&](std::string_view what) { return fmt::format("ncu CSV line {}: {}", line_no, what); };
  if (f.size() != c.count) return make_error(where(fmt::format("{} fields, header has {}", f.size(), c.count)));
  ncu_source_row row;
  const std::string& addr = f[c.address];
  if (!starts_with(addr, "0x") || addr.size() < 3 || addr.size() > 18 ||
      addr.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos)
    return make_error(where(fmt::format("cannot read the address '{}'", addr)));
  row.address = std::stoull(addr.substr(2), nullptr, 16);
  auto inst = split_instruction(f[c.source]);
  if (!inst) return make_error(where(fmt::format("cannot read the SASS instruction '{}'", f[c.source])));
  row.guard = std::move(inst->guard);
  row.mnemonic = std::move(inst->mnemonic);
  row.opcode = std::move(inst->opcode);
  row.operands = std::move(inst->operands);
  auto warp = parse_count(f[c.inst]);
  auto thread = parse_count(f[c.thread]);
  if (!warp || !thread)
    return make_error(where(fmt::format("cannot read the counts '{}', '{}'", f[c.inst], f[c.thread])));
  row.inst_executed = *warp;
  row.thread_inst_pred_on = *thread;
  return row;
}

void close_block(ncu_profile& profile, ncu_kernel& block) {
  if (block.name.empty()) return;
  if (!profile.kernels.empty() && profile.kernels.back().name == block.name &&
      same_rows(profile.kernels.back().rows, block.rows)) {
    ++profile.duplicate_blocks_dropped;
  } else {
    if (!block.rows.empty()) {
      uint64_t base = block.rows.front().address;
      for (auto& r : block.rows) r.offset = r.address - base;
    }
    for (const auto& r : block.rows) {
      auto& e = block.per_opcode[r.opcode];
      e.inst_executed += r.inst_executed;
      e.thread_inst_pred_on += r.thread_inst_pred_on;
    }
    block.id = std::to_string(profile.kernels.size());
    detail::finish_kernel(block);
    profile.kernels.push_back(std::move(block));
  }
  block = ncu_kernel{};
}

}  // namespace

result<ncu_profile> detail::parse_ncu_source_page(const std::vector<std::pair<int, std::string_view>>& csv_lines) {
  ncu_profile profile;
  profile.format = ncu_format::source_page;
  ncu_kernel block;
  columns cols;
  bool have_cols = false;  // (std::optional here trips g++ 12's -Wmaybe-uninitialized)
  for (const auto& [line_no, line] : csv_lines) {
    auto fields = split_csv_line(line);
    if (!fields) return make_error(fmt::format("ncu CSV line {}: unterminated quote", line_no));
    if (fields->size() >= 2 && (*fields)[0] == "Kernel Name") {
      close_block(profile, block);
      block.name = (*fields)[1];
      have_cols = false;
      continue;
    }
    if (block.name.empty()) continue;  // quoted program output before the first block
    if (!have_cols) {
      auto c = read_header(*fields, line_no);
      if (!c) return c.err();
      cols = *c;
      have_cols = true;
      continue;
    }
    auto row = read_row(*fields, cols, line_no);
    if (!row) return row.err().with_context(block.name);
    block.rows.push_back(std::move(*row));
  }
  close_block(profile, block);
  return profile;
}

}  // namespace ptxbench::sass
