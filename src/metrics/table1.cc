#include "metrics/table1.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace ptxbench::metrics {
namespace {

template <typename T>
std::size_t index_of_or_add(std::vector<T>& v, const T& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) return static_cast<std::size_t>(it - v.begin());
  v.push_back(x);
  return v.size() - 1;
}

std::string join_rates(const std::vector<std::optional<double>>& rates) {
  std::string out;
  for (const auto& r : rates) out += (out.empty() ? "" : " / ") + percent_text(r);
  return out;
}

std::string short_dir(const std::string& exp_dir) {
  auto slash = exp_dir.find_last_of('/', exp_dir.size() > 1 ? exp_dir.size() - 2 : 0);
  return slash == std::string::npos ? exp_dir : exp_dir.substr(slash + 1);
}

}  // namespace

std::string limits_text(const std::vector<int>& limits) {
  std::string out;
  for (int t : limits) out += (out.empty() ? "" : " / ") + fmt::format("≤{}", t);
  return out;
}

std::string percent_text(const std::optional<double>& rate) {
  return rate ? fmt::format("{:.1f}", *rate * 100.0) : std::string("–");
}

std::vector<table1_block> build_table1(const std::vector<turn_rate_row>& rows, const std::vector<int>& turn_limits,
                                       std::optional<double> min_coverage) {
  // One run = (model, arch, definition, exp_dir); collect its rates at each limit in limit order.
  struct run_rates {
    group_key key;
    std::vector<std::optional<double>> target, plain, coverage;
  };
  std::vector<run_rates> runs;
  std::map<group_key, std::size_t> run_index;
  for (const auto& r : rows) {
    auto pos = std::find(turn_limits.begin(), turn_limits.end(), r.turn_limit);
    if (pos == turn_limits.end()) continue;
    auto [it, added] = run_index.try_emplace(r.key, runs.size());
    if (added) runs.push_back({r.key, std::vector<std::optional<double>>(turn_limits.size()),
                               std::vector<std::optional<double>>(turn_limits.size()),
                               std::vector<std::optional<double>>(turn_limits.size())});
    auto slot = static_cast<std::size_t>(pos - turn_limits.begin());
    runs[it->second].target[slot] = r.value.target_rate;
    runs[it->second].plain[slot] = r.value.rate;
    runs[it->second].coverage[slot] = r.value.coverage_target_rate;
  }
  std::vector<table1_block> blocks;
  std::vector<std::string> archs;
  for (const auto& run : runs) {
    std::size_t b = index_of_or_add(archs, run.key.arch);
    if (b == blocks.size()) blocks.push_back({run.key.arch, {}, {}, {}});
    index_of_or_add(blocks[b].definitions, run.key.definition);
  }
  // A model's Triton runs are rows of their own ("Model · Triton"), next to its CUDA-PTX rows.
  auto who = [](const group_key& k) { return k.language == "triton" ? k.model + " · Triton" : k.model; };
  for (auto& block : blocks) {
    std::map<std::tuple<std::string, std::string>, int> runs_seen;  // (model, definition) -> runs so far
    std::map<std::string, std::vector<std::string>> notes;          // model -> run descriptions
    for (const auto& run : runs) {
      if (run.key.arch != block.arch) continue;
      int n = runs_seen[{who(run.key), run.key.definition}]++;
      auto row_it = std::find_if(block.rows.begin(), block.rows.end(),
                                 [&](const table1_row& r) { return r.model == who(run.key) && r.run == n; });
      if (row_it == block.rows.end()) {
        table1_row row{who(run.key), n, n == 0 ? who(run.key) : fmt::format("{} (run {})", who(run.key), n + 1),
                       std::vector<table1_cell>(block.definitions.size())};
        // Keep a model's extra runs right below its first row.
        auto after = std::find_if(block.rows.rbegin(), block.rows.rend(),
                                  [&](const table1_row& r) { return r.model == who(run.key); });
        row_it = block.rows.insert(after == block.rows.rend() ? block.rows.end() : after.base(), std::move(row));
      }
      std::size_t col = index_of_or_add(block.definitions, run.key.definition);
      row_it->cells[col] = {true, join_rates(run.target), "(" + join_rates(run.plain) + ")",
                            min_coverage ? fmt::format("[cov≥{:g}%: {}]", *min_coverage * 100, join_rates(run.coverage))
                                         : std::string(),
                            run.key.exp_dir};
      notes[who(run.key)].push_back(fmt::format("{} run {} = {}", run.key.definition, n + 1, short_dir(run.key.exp_dir)));
    }
    for (const auto& row : block.rows)
      if (row.run > 0 && notes.count(row.model)) {
        std::string list;
        for (const auto& s : notes[row.model]) list += (list.empty() ? "" : "; ") + s;
        block.notes.push_back(fmt::format("{} has several runs on {}: {}", row.model, block.arch, list));
        notes.erase(row.model);
      }
  }
  return blocks;
}

std::string render_table1_markdown(const std::vector<table1_block>& blocks, const std::vector<int>& turn_limits) {
  std::string out = fmt::format(
      "Target-instruction turn correctness rate (%) at {} turns; plain turn correctness rate in parentheses "
      "below it.\n",
      limits_text(turn_limits));
  bool any_coverage = false;
  for (const auto& b : blocks)
    for (const auto& row : b.rows)
      for (const auto& c : row.cells) any_coverage = any_coverage || !c.coverage_line.empty();
  if (any_coverage)
    out += "Third line, in brackets: the same target-instruction rate counting only turns whose executed target "
           "family did at least the given share of the task's work (work coverage, beyond the paper).\n";
  for (const auto& b : blocks) {
    out += fmt::format("\n### {}\n\n| Model |", b.arch);
    for (const auto& d : b.definitions) out += " " + d + " |";
    out += "\n|---|";
    for (std::size_t i = 0; i < b.definitions.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& row : b.rows) {
      out += "| " + row.label + " |";
      for (const auto& c : row.cells) out += " " + c.target_line + " |";
      out += "\n|  |";
      for (const auto& c : row.cells) out += " " + c.plain_line + " |";
      out += "\n";
      bool coverage = false;
      for (const auto& c : row.cells) coverage = coverage || !c.coverage_line.empty();
      if (!coverage) continue;
      out += "|  |";
      for (const auto& c : row.cells) out += " " + c.coverage_line + " |";
      out += "\n";
    }
    for (const auto& n : b.notes) out += "\n- " + n;
    if (!b.notes.empty()) out += "\n";
  }
  return out;
}

std::string render_table1_file(const std::string& table_markdown, const std::vector<data_warning>& warnings,
                               const std::vector<std::string>& notes) {
  std::string out = "# Table 1 (turn correctness)\n\n";
  if (!warnings.empty()) {
    out += fmt::format("> **{} warning{} about the data behind these numbers** (also in warnings.csv and "
                       "metrics.json):\n>\n",
                       warnings.size(), warnings.size() == 1 ? "" : "s");
    for (const auto& w : warnings) out += "> - " + w.message + "\n";
    out += "\n";
  }
  if (!notes.empty()) {
    for (const auto& n : notes) out += "> Note: " + n + "\n>\n";
    out.resize(out.size() - 2);  // no empty quote line after the last note
    out += "\n";
  }
  return out + table_markdown;
}

}  // namespace ptxbench::metrics
