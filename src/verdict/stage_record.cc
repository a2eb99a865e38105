#include "verdict/stage_record.h"

#include <array>

namespace ptxbench {
namespace {

constexpr std::array<std::string_view, 8> k_stage_names = {"source_gate", "build",       "link_gate", "static_sass",
                                                           "sanitize",    "correctness", "timing",    "dynamic_check"};
constexpr std::array<std::string_view, 5> k_stage_outcome_names = {"passed", "failed", "skipped", "deferred", "error"};

template <std::size_t N>
std::optional<std::size_t> index_of(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return i;
  return std::nullopt;
}

}  // namespace

std::string_view stage_name(stage_id s) { return k_stage_names[static_cast<std::size_t>(s)]; }

std::optional<stage_id> parse_stage(std::string_view name) {
  auto i = index_of(k_stage_names, name);
  return i ? std::optional<stage_id>(static_cast<stage_id>(*i)) : std::nullopt;
}

std::string_view stage_outcome_name(stage_outcome o) { return k_stage_outcome_names[static_cast<std::size_t>(o)]; }

std::optional<stage_outcome> parse_stage_outcome(std::string_view name) {
  auto i = index_of(k_stage_outcome_names, name);
  return i ? std::optional<stage_outcome>(static_cast<stage_outcome>(*i)) : std::nullopt;
}

const stage_record* find_stage(const std::vector<stage_record>& stages, stage_id id) {
  for (const auto& s : stages)
    if (s.id == id) return &s;
  return nullptr;
}

void mark_skipped_after(std::vector<stage_record>& stages, stage_id decided, stage_id last) {
  for (int s = static_cast<int>(decided) + 1; s <= static_cast<int>(last); ++s) {
    auto id = static_cast<stage_id>(s);
    if (!find_stage(stages, id)) stages.push_back({id, stage_outcome::skipped, 0, "not run: an earlier stage decided", nullptr});
  }
}

}  // namespace ptxbench
