#include "adapt/stratified_cap.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/sha256.h"

namespace ptxbench::adapt {

std::string seeded_key(uint64_t seed, const std::string& id) { return sha256_hex(std::to_string(seed) + ":" + id); }

std::string cap_rule_name(cap_rule r) { return r == cap_rule::upstream ? "upstream" : "every-stratum"; }

std::optional<cap_rule> parse_cap_rule(const std::string& name) {
  if (name == "upstream") return cap_rule::upstream;
  if (name == "every-stratum") return cap_rule::every_stratum;
  return std::nullopt;
}

namespace {

// Hands out `extra` slots by the largest remainder: `weight[i] × extra / total` each, floors first,
// then one more to the largest remainders (exact integers: numerator weight×extra − floor×total),
// ties to the larger stratum, then the smaller sort key. Never more than room[i] to stratum i.
void share_by_remainder(const std::vector<int64_t>& weight, const std::vector<int>& sizes,
                        const std::vector<std::string>& keys, int extra, const std::vector<int>& room,
                        std::vector<int>& counts) {
  int64_t total = std::accumulate(weight.begin(), weight.end(), int64_t{0});
  if (extra <= 0 || total <= 0) return;
  std::vector<int64_t> remainder(weight.size());
  std::vector<int> added(weight.size(), 0);
  int given = 0;
  for (std::size_t i = 0; i < weight.size(); ++i) {
    int64_t whole = std::min<int64_t>(weight[i] * extra / total, room[i]);
    added[i] = static_cast<int>(whole);
    given += added[i];
    remainder[i] = weight[i] * extra - whole * total;
  }
  std::vector<std::size_t> order(weight.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (remainder[a] != remainder[b]) return remainder[a] > remainder[b];
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    return keys[a] < keys[b];
  });
  for (std::size_t i : order) {  // one pass suffices: the floors leave fewer slots than strata
    if (given >= extra) break;
    if (added[i] < room[i]) {
      ++added[i];
      ++given;
    }
  }
  for (std::size_t i = 0; i < weight.size(); ++i) counts[i] += added[i];
}

// The every_stratum rule: one each first, then the rest in proportion to (size − 1).
std::vector<int> every_stratum_counts(const std::vector<int>& sizes, const std::vector<std::string>& keys, int cap) {
  std::vector<int> counts(sizes.size(), 0);
  std::vector<std::size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (cap < static_cast<int>(sizes.size())) {
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : keys[a] < keys[b];
    });
    for (int i = 0; i < cap; ++i) counts[order[static_cast<std::size_t>(i)]] = 1;
    return counts;
  }
  std::vector<int64_t> weight;
  std::vector<int> room;
  for (int s : sizes) {
    weight.push_back(s - 1);
    room.push_back(s - 1);
  }
  std::fill(counts.begin(), counts.end(), 1);
  share_by_remainder(weight, sizes, keys, cap - static_cast<int>(sizes.size()), room, counts);
  return counts;
}

}  // namespace

std::vector<int> largest_remainder_counts(const std::vector<int>& sizes, const std::vector<std::string>& sort_keys,
                                          int cap) {
  std::vector<int> counts(sizes.size(), 0);
  std::vector<int64_t> weight(sizes.begin(), sizes.end());
  share_by_remainder(weight, sizes, sort_keys, cap, sizes, counts);
  return counts;
}

result<stratified_selection> stratified_cap(const std::vector<strat_item>& items, const cap_options& o) {
  stratified_selection out;
  // group → stratum name → member indices
  std::map<std::string, std::map<std::string, std::vector<std::size_t>>> groups;
  for (std::size_t i = 0; i < items.size(); ++i) groups[items[i].group][items[i].stratum].push_back(i);
  for (auto& [group, by_stratum] : groups) {
    std::size_t total = 0;
    for (const auto& [name, members] : by_stratum) total += members.size();
    bool capped = o.cap >= 0 && total > static_cast<std::size_t>(o.cap);
    if (o.cap >= 0 && total < static_cast<std::size_t>(o.cap)) {
      if (!o.allow_underfilled)
        return make_error(fmt::format("{} has only {} rows, need {}; lower --cap-per-definition or pass "
                                      "--allow-underfilled-definitions",
                                      group, total, o.cap));
      out.underfilled.push_back(group);
    }
    // Strata in their sort-key order (upstream iterates sorted (error type, turn) keys).
    struct stratum {
      std::string name, key;
      std::vector<std::size_t> members;
    };
    std::vector<stratum> strata;
    for (auto& [name, members] : by_stratum) {
      const std::string& key = items[members.front()].stratum_sort.empty() ? name : items[members.front()].stratum_sort;
      std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
        if (o.seed) return seeded_key(*o.seed, items[a].id) < seeded_key(*o.seed, items[b].id);
        if (items[a].order != items[b].order) return items[a].order < items[b].order;
        return items[a].id < items[b].id;
      });
      strata.push_back({name, key, members});
    }
    std::sort(strata.begin(), strata.end(), [](const stratum& a, const stratum& b) { return a.key < b.key; });
    std::vector<int> sizes;
    std::vector<std::string> keys;
    for (const auto& s : strata) {
      sizes.push_back(static_cast<int>(s.members.size()));
      keys.push_back(s.key);
    }
    std::vector<int> counts = sizes;
    if (capped)
      counts = o.rule == cap_rule::upstream ? largest_remainder_counts(sizes, keys, o.cap)
                                            : every_stratum_counts(sizes, keys, o.cap);
    for (std::size_t s = 0; s < strata.size(); ++s) {
      auto& count = out.strata[group][strata[s].name];
      count.candidates = sizes[s];
      count.selected = counts[s];
      for (int k = 0; k < counts[s]; ++k) out.selected.push_back(strata[s].members[static_cast<std::size_t>(k)]);
    }
  }
  std::sort(out.selected.begin(), out.selected.end());
  return out;
}

}  // namespace ptxbench::adapt
