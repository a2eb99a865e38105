#include "sass/opcode_family.h"

#include <algorithm>

#include "sass/sass_parser.h"

namespace ptxbench::sass {

const std::vector<family_rule>& family_table() {
  // Only UTMALDG/UTMASTG/UTMAREDG move tensor tiles; UTMACCTL (descriptor cache control),
  // UTMACMDFLUSH (bulk-group commit) and UTMAPF (prefetch) appear in TMA code but are no copy, so
  // they must not make a kernel "use TMA" (upstream-ptxbench §5.3 counts the same three).
  static const std::vector<family_rule> table = {
      {"GMMA", {"HGMMA", "QGMMA", "IGMMA", "BGMMA"}, "", true,
       "warpgroup MMA (wgmma.mma_async), sm_90a"},
      {"TMA", {"UTMALDG", "UTMASTG", "UTMAREDG"}, "", true,
       "tensor-map bulk copies (cp.async.bulk.tensor load/store/reduce)"},
      {"TCGEN05", {"LDTM", "STTM"}, "UTC", true,
       "5th-generation tensor core (tcgen05.*: UTCHMMA, UTCBAR, UTCCP, LDTM, ...), sm_100a"},
      {"UBLKCP", {"UBLKCP"}, "", false, "non-tensor bulk copy (cp.async.bulk global<->shared)"},
      {"UBLKRED", {"UBLKRED"}, "", false, "non-tensor bulk reduction (cp.reduce.async.bulk)"},
      {"UTMAPF", {"UTMAPF"}, "", false, "tensor-map L2 prefetch (cp.async.bulk.prefetch.tensor)"},
      {"SYNCS", {"SYNCS"}, "", false, "mbarrier operations (init, arrive, expect_tx, try_wait)"},
      {"WARPGROUP", {"WARPGROUP"}, "", false, "wgmma fence and wait (WARPGROUP.ARRIVE/DEPBAR)"},
      {"ELECT", {"ELECT"}, "", false, "elect.sync (one lane issues TMA/tcgen05)"},
      {"USETMAXREG", {"USETMAXREG"}, "", false, "setmaxnreg register reallocation"},
      {"HMMA", {"HMMA"}, "", false, "pre-Hopper warp MMA (mma.sync), for contrast"},
  };
  return table;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& rule : family_table()) names.emplace_back(rule.family);
  return names;
}

bool is_known_family(std::string_view name) {
  const auto& t = family_table();
  return std::any_of(t.begin(), t.end(), [&](const family_rule& r) { return r.family == name; });
}

std::vector<std::string> classify(std::string_view base_opcode) {
  std::vector<std::string> families;
  if (base_opcode.empty()) return families;
  for (const auto& rule : family_table()) {
    bool hit = std::find(rule.opcodes.begin(), rule.opcodes.end(), base_opcode) != rule.opcodes.end();
    if (!hit && !rule.opcode_prefix.empty()) hit = base_opcode.substr(0, rule.opcode_prefix.size()) == rule.opcode_prefix;
    if (hit) families.emplace_back(rule.family);
  }
  return families;
}

family_counts count_families(const std::vector<sass_instruction>& instructions) {
  family_counts counts;
  for (const auto& inst : instructions)
    for (const auto& f : classify(inst.opcode)) ++counts[f];
  return counts;
}

namespace {

template <typename Field>
family_counts sum_by_family(const opcode_executions& per_opcode, Field field) {
  family_counts counts;
  for (const auto& [opcode, exec] : per_opcode)
    for (const auto& f : classify(opcode)) counts[f] += exec.*field;
  return counts;
}

}  // namespace

family_counts family_pred_on_counts(const opcode_executions& per_opcode) {
  return sum_by_family(per_opcode, &opcode_execution::thread_inst_pred_on);
}

family_counts family_inst_executed_counts(const opcode_executions& per_opcode) {
  return sum_by_family(per_opcode, &opcode_execution::inst_executed);
}

std::vector<std::string> nonzero_families(const family_counts& counts) {
  std::vector<std::string> out;
  for (const auto& [family, n] : counts)
    if (n > 0) out.push_back(family);
  return out;
}

}  // namespace ptxbench::sass
