#include "metrics/upstream_import.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/text.h"

namespace ptxbench::metrics {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_max_csv_bytes = std::size_t{256} << 20;

struct columns {
  std::size_t model, arch, definition, exp_dir, trajectory_id, turn, correctness, speedup, correct_with_arch;
  std::optional<std::size_t> reasoning_tokens, arch_tag;
};

result<columns> find_columns(const csv_table& t) {
  columns c{};
  std::string missing;
  auto need = [&](const char* name, std::size_t& slot) {
    if (auto i = t.column(name)) slot = *i;
    else missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  need("model", c.model);
  need("arch", c.arch);
  need("definition", c.definition);
  need("exp_dir", c.exp_dir);
  need("trajectory_id", c.trajectory_id);
  need("turn", c.turn);
  need("correctness", c.correctness);
  need("speedup", c.speedup);
  need("correct_with_arch", c.correct_with_arch);
  if (!missing.empty()) return make_error(fmt::format("{}: missing column(s): {}", t.source(), missing));
  c.reasoning_tokens = t.column("reasoning_tokens");
  c.arch_tag = t.column("arch_tag");
  return c;
}

template <typename T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The first column where two rows differ, as "correctness: 'Correct' vs 'Runtime error'"; empty
// when they are identical.
std::string first_difference(const csv_table& t, std::size_t a, std::size_t b) {
  for (std::size_t col = 0; col < t.columns(); ++col)
    if (t.at(a, col) != t.at(b, col))
      return fmt::format("{}: '{}' vs '{}'", t.header()[col], t.at(a, col), t.at(b, col));
  return "";
}

}  // namespace


std::string upstream_variant(std::string_view trajectory_id, int block) {
  if (block <= 0 || trajectory_id.substr(0, 4) != "exp_") return "";
  auto n = parse_number<int>(trajectory_id.substr(4));
  if (!n || *n < 0) return "";
  int first = *n / block * block;
  return fmt::format("exp_{:03}-{:03}", first, first + block - 1);
}

// Upstream names its Triton runs triton-* (its prompt tags triton-hopper-..., its run folders);
// the per-turn export has no language column, so the run folder's name is the only evidence.
static std::string upstream_language(const std::string& exp_dir) {
  return lower(exp_dir).find("triton") != std::string::npos ? "triton" : "cuda";
}

result<upstream_turns> import_upstream_turns(const csv_table& t, const upstream_options& options) {
  auto cols = find_columns(t);
  if (!cols) return cols.err();
  const columns& c = *cols;
  upstream_turns result_turns;
  std::vector<turn_record>& out = result_turns.records;
  out.reserve(t.rows());
  // identity -> first row with it. '\x1f' (unit separator) cannot occur unescaped between fields.
  std::unordered_map<std::string, std::size_t> first_row;
  first_row.reserve(t.rows());
  std::size_t dropped = 0;
  std::optional<std::pair<std::size_t, std::size_t>> first_copy;  // (copy row, original row)
  const std::size_t identity_cols[] = {c.model, c.arch, c.definition, c.exp_dir, c.trajectory_id, c.turn};
  for (std::size_t row = 0; row < t.rows(); ++row) {
    auto where = [&](const std::string& what) { return make_error(fmt::format("{}:{}: {}", t.source(), t.line_of(row), what)); };
    std::string identity;
    for (std::size_t col : identity_cols) identity.append(t.at(row, col)).push_back('\x1f');
    if (auto [it, inserted] = first_row.try_emplace(std::move(identity), row); !inserted) {
      std::string diff = first_difference(t, it->second, row);
      if (!diff.empty())
        return where(fmt::format("the turn of line {} again (run {}, trajectory {}, turn {}) with different content "
                                 "({}); which row is right cannot be known, so nothing is computed",
                                 t.line_of(it->second), t.at(row, c.exp_dir), t.at(row, c.trajectory_id),
                                 t.at(row, c.turn), diff));
      if (!first_copy) first_copy = std::pair{row, it->second};
      ++dropped;
      continue;
    }
    turn_record r;
    r.model = t.at(row, c.model);
    r.arch = t.at(row, c.arch);
    r.definition = t.at(row, c.definition);
    r.exp_dir = t.at(row, c.exp_dir);
    r.language = upstream_language(r.exp_dir);
    r.trajectory = t.at(row, c.trajectory_id);
    r.variant = upstream_variant(r.trajectory, options.variant_block);
    auto turn = parse_number<int>(t.at(row, c.turn));
    if (!turn || *turn < 0) return where(fmt::format("turn: expected a non-negative integer, got '{}'", t.at(row, c.turn)));
    r.turn = *turn;
    r.source_label = t.at(row, c.correctness);
    auto label = outcome_from_upstream_label(r.source_label);
    if (!label) return where(fmt::format("correctness: unknown class '{}'", r.source_label));
    r.label = *label;
    std::string_view arch_ok = t.at(row, c.correct_with_arch);
    if (arch_ok != "0" && arch_ok != "1") return where(fmt::format("correct_with_arch: expected 0 or 1, got '{}'", arch_ok));
    r.target_correct = arch_ok == "1";
    if (r.target_correct && !r.correct()) return where(fmt::format("correct_with_arch is 1 but correctness is '{}'", r.source_label));
    // Upstream writes speedup 0.0 for every failed turn; only a correct turn has a speedup.
    if (r.correct()) {
      auto s = parse_number<double>(t.at(row, c.speedup));
      if (!s) return where(fmt::format("speedup: expected a number, got '{}'", t.at(row, c.speedup)));
      r.speedup = *s;
    }
    if (c.reasoning_tokens && !t.at(row, *c.reasoning_tokens).empty()) {
      auto n = parse_number<int64_t>(t.at(row, *c.reasoning_tokens));
      if (!n) return where(fmt::format("reasoning_tokens: expected an integer, got '{}'", t.at(row, *c.reasoning_tokens)));
      r.reasoning_tokens = *n;
    }
    if (c.arch_tag) r.arch_tag = t.at(row, *c.arch_tag);
    out.push_back(std::move(r));
  }
  if (dropped > 0)
    result_turns.warnings.push_back(
        {warning_kind::duplicate_rows, t.source(),
         fmt::format("{}: {} duplicated rows dropped: identical copies of earlier rows with the same model, arch, "
                     "definition, exp_dir, trajectory_id and turn (first: line {}, a copy of line {}); {} turns counted",
                     t.source(), dropped, t.line_of(first_copy->first), t.line_of(first_copy->second), out.size())});
  return result_turns;
}

result<upstream_turns> read_upstream_turns(const fs::path& file, const upstream_options& options) {
  auto text = read_text_file(file, k_max_csv_bytes);
  if (!text) return text.err();
  auto table = csv_table::parse(std::move(*text), file.string());
  if (!table) return table.err();
  return import_upstream_turns(*table, options);
}

result<std::vector<upstream_experiment>> read_upstream_experiments(const fs::path& file) {
  auto text = read_text_file(file, k_max_csv_bytes);
  if (!text) return text.err();
  auto t = csv_table::parse(std::move(*text), file.string());
  if (!t) return t.err();
  std::array<std::optional<std::size_t>, 5> idx = {t->column("model"), t->column("arch"), t->column("definition"),
                                                   t->column("workload"), t->column("exp_dir")};
  for (const auto& i : idx)
    if (!i) return make_error(file.string() + ": expected columns model, arch, definition, workload, exp_dir");
  std::vector<upstream_experiment> out;
  for (std::size_t row = 0; row < t->rows(); ++row)
    out.push_back({std::string(t->at(row, *idx[0])), std::string(t->at(row, *idx[1])), std::string(t->at(row, *idx[2])),
                   std::string(t->at(row, *idx[3])), std::string(t->at(row, *idx[4]))});
  return out;
}

std::vector<data_warning> align_with_experiments(std::vector<turn_record>& records,
                                                const std::vector<upstream_experiment>& experiments) {
  using run_key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<run_key, std::size_t> rank;
  for (const auto& e : experiments) rank.emplace(run_key{e.model, e.arch, e.definition, e.exp_dir}, rank.size());
  std::set<run_key> seen, unlisted;
  for (const auto& r : records) {
    run_key k{r.model, r.arch, r.definition, r.exp_dir};
    seen.insert(k);
    if (!rank.count(k)) unlisted.insert(k);
  }
  std::vector<data_warning> notes;
  for (const auto& k : unlisted)
    notes.push_back({warning_kind::run_not_in_experiments, std::get<3>(k),
                     fmt::format("run {} ({}, {}, {}) has turns but no experiments.csv row", std::get<3>(k),
                                 std::get<0>(k), std::get<1>(k), std::get<2>(k))});
  for (const auto& e : experiments)
    if (!seen.count(run_key{e.model, e.arch, e.definition, e.exp_dir}))
      notes.push_back({warning_kind::experiment_without_turns, e.exp_dir,
                       fmt::format("experiment {} ({}, {}, {}) has no turns in the per-turn export", e.exp_dir,
                                   e.model, e.arch, e.definition)});
  // Rank each record once (key lookups build strings), then reorder by a stable index sort.
  std::vector<std::size_t> record_rank(records.size()), order(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    auto it = rank.find(run_key{r.model, r.arch, r.definition, r.exp_dir});
    record_rank[i] = it == rank.end() ? rank.size() : it->second;
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return record_rank[a] < record_rank[b]; });
  std::vector<turn_record> sorted;
  sorted.reserve(records.size());
  for (std::size_t i : order) sorted.push_back(std::move(records[i]));
  records = std::move(sorted);
  return notes;
}

}  // namespace ptxbench::metrics
