#include "metrics/arms.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/file_io.h"
#include "metrics/table1.h"

namespace ptxbench::metrics {
namespace {

// base, guidance, notes, notes+kernel, then the rest (combinations) in name order.
int arm_rank(const std::string& arm) {
  if (arm == "base") return 0;
  if (arm.rfind("guidance:", 0) == 0 && arm.find('+') == std::string::npos) return 1;
  if (arm == "notes") return 2;
  if (arm == "notes+kernel") return 3;
  return 4;
}

}  // namespace

bool is_solution_bearing(const std::string& arm) {
  std::size_t pos = 0;
  while (pos <= arm.size()) {
    std::size_t plus = arm.find('+', pos);
    // "notes+kernel" spans a '+': look for the part "notes" followed by the part "kernel".
    if (arm.compare(pos, 12, "notes+kernel") == 0 && (pos + 12 == arm.size() || arm[pos + 12] == '+')) return true;
    if (plus == std::string::npos) break;
    pos = plus + 1;
  }
  return false;
}

std::string arm_label(const std::string& arm) { return is_solution_bearing(arm) ? arm + " †" : arm; }

bool has_supervision_arms(const std::vector<turn_record>& records) {
  return std::any_of(records.begin(), records.end(), [](const turn_record& r) { return r.arm != "base"; });
}

std::vector<arm_group> group_by_arm(const std::vector<turn_record>& records) {
  std::vector<arm_group> groups;
  std::map<arm_key, std::size_t> index;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> cell_order;
  for (const auto& r : records) {
    arm_key k{r.model, r.arch, r.definition, r.arm};
    cell_order.try_emplace({r.model, r.arch, r.definition}, cell_order.size());
    auto [it, added] = index.try_emplace(k, groups.size());
    if (added) groups.push_back({k, {}, {}});
    auto& g = groups[it->second];
    g.turns.push_back(r);
    if (std::find(g.exp_dirs.begin(), g.exp_dirs.end(), r.exp_dir) == g.exp_dirs.end()) g.exp_dirs.push_back(r.exp_dir);
  }
  std::stable_sort(groups.begin(), groups.end(), [&](const arm_group& a, const arm_group& b) {
    auto ca = cell_order[{a.key.model, a.key.arch, a.key.definition}];
    auto cb = cell_order[{b.key.model, b.key.arch, b.key.definition}];
    if (ca != cb) return ca < cb;
    int ra = arm_rank(a.key.arm), rb = arm_rank(b.key.arm);
    if (ra != rb) return ra < rb;
    return ra == 4 && a.key.arm < b.key.arm;
  });
  return groups;
}

arm_tables compute_arm_tables(const std::vector<arm_group>& groups, const metrics_options& options) {
  arm_tables t;
  for (const auto& g : groups)
    for (int limit : options.turn_limits) {
      t.rates.push_back({g.key, limit, compute_turn_rates(g.turns, limit)});
      for (const auto& pt : compute_fast_p(g.turns, limit, options.p_values)) t.fast_p.push_back({g.key, limit, pt});
    }
  return t;
}

std::string render_table4_markdown(const arm_tables& tables, const std::vector<int>& turn_limits) {
  // Layout: per arch, rows (model, arm) in table order, columns definitions in first-appearance order.
  struct row {
    std::string model, arm;
    std::map<std::string, std::pair<std::vector<std::optional<double>>, std::vector<std::optional<double>>>> cells;
  };
  std::vector<std::string> archs;
  std::map<std::string, std::vector<std::string>> definitions;
  std::map<std::string, std::vector<row>> rows;
  for (const auto& r : tables.rates) {
    auto slot = std::find(turn_limits.begin(), turn_limits.end(), r.turn_limit);
    if (slot == turn_limits.end()) continue;
    if (std::find(archs.begin(), archs.end(), r.key.arch) == archs.end()) archs.push_back(r.key.arch);
    auto& defs = definitions[r.key.arch];
    if (std::find(defs.begin(), defs.end(), r.key.definition) == defs.end()) defs.push_back(r.key.definition);
    auto& rs = rows[r.key.arch];
    auto it = std::find_if(rs.begin(), rs.end(), [&](const row& x) { return x.model == r.key.model && x.arm == r.key.arm; });
    if (it == rs.end()) it = rs.insert(rs.end(), row{r.key.model, r.key.arm, {}});
    auto& cell = it->cells[r.key.definition];
    if (cell.first.empty()) {
      cell.first.resize(turn_limits.size());
      cell.second.resize(turn_limits.size());
    }
    auto i = static_cast<std::size_t>(slot - turn_limits.begin());
    cell.first[i] = r.value.target_rate;
    cell.second[i] = r.value.rate;
  }
  auto join = [](const std::vector<std::optional<double>>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " / ") + percent_text(x);
    return s;
  };
  std::string out = fmt::format(
      "Supervision arms (Table 4 layout): target-instruction turn correctness rate (%) at {} turns; plain turn "
      "correctness rate in parentheses below it. Arms: base (no supervision), guidance:<sha256 prefix> (expert "
      "guidance in the prompt), notes (retrieved repair notes in the failure feedback), notes+kernel (notes and the "
      "best fixed kernel).\n",
      limits_text(turn_limits));
  bool any_solution = false;
  for (const auto& arch : archs) {
    out += fmt::format("\n### {}\n\n| Model | Arm |", arch);
    for (const auto& d : definitions[arch]) out += " " + d + " |";
    out += "\n|---|---|";
    for (std::size_t i = 0; i < definitions[arch].size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : rows[arch]) {
      any_solution = any_solution || is_solution_bearing(r.arm);
      std::string first = "| " + r.model + " | " + arm_label(r.arm) + " |", second = "|  |  |";
      for (const auto& d : definitions[arch]) {
        auto it = r.cells.find(d);
        first += " " + (it == r.cells.end() ? std::string() : join(it->second.first)) + " |";
        second += " " + (it == r.cells.end() ? std::string() : "(" + join(it->second.second) + ")") + " |";
      }
      out += first + "\n" + second + "\n";
    }
  }
  if (any_solution)
    out += "\n† solution-bearing arm: the failure feedback showed a fixed kernel of a similar earlier failure, so a "
           "gain here can come from copying that solution; it is not evidence that the model reasoned its way to "
           "the fix.\n";
  return out;
}

std::string arm_rates_csv(const std::vector<arm_rate_row>& rows) {
  csv_builder csv({"model", "arch", "definition", "arm", "solution_bearing", "turn_limit", "n_turns", "correct_turns",
                   "target_correct_turns", "turn_correctness_rate", "target_turn_correctness_rate"});
  for (const auto& r : rows)
    csv.cell(r.key.model).cell(r.key.arch).cell(r.key.definition).cell(r.key.arm).cell(is_solution_bearing(r.key.arm))
        .cell(r.turn_limit).cell(r.value.n_turns).cell(r.value.correct_turns).cell(r.value.target_correct_turns)
        .cell(r.value.rate).cell(r.value.target_rate).end_row();
  return csv.text();
}

std::string arm_fast_p_csv(const std::vector<arm_fast_p_row>& rows) {
  csv_builder csv({"model", "arch", "definition", "arm", "solution_bearing", "turn_limit", "p", "fast_p", "fast_inst_p",
                   "n_turns", "n_variants"});
  for (const auto& r : rows)
    csv.cell(r.key.model).cell(r.key.arch).cell(r.key.definition).cell(r.key.arm).cell(is_solution_bearing(r.key.arm))
        .cell(r.turn_limit).cell(r.value.p).cell(r.value.fast).cell(r.value.inst).cell(r.value.n_turns)
        .cell(r.value.n_variants).end_row();
  return csv.text();
}

status write_arm_files(const std::filesystem::path& out_dir, const arm_tables& tables, const std::vector<int>& turn_limits) {
  const std::pair<const char*, std::string> files[] = {
      {"arms.csv", arm_rates_csv(tables.rates)},
      {"arms_fast_p.csv", arm_fast_p_csv(tables.fast_p)},
      {"table4.md", render_table4_markdown(tables, turn_limits)},
  };
  for (const auto& [name, text] : files)
    if (auto st = write_file_atomic(out_dir / name, text); !st) return st.err();
  return ok();
}

}  // namespace ptxbench::metrics
