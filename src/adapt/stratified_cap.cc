#include "adapt/stratified_cap.h"

#include <algorithm>
#include <cmath>

#include "core/sha256.h"

namespace ptxbench::adapt {

std::string seeded_key(uint64_t seed, const std::string& id) { return sha256_hex(std::to_string(seed) + ":" + id); }

namespace {

struct stratum {
  std::string name;
  std::vector<std::size_t> members;  // in seeded order
  int quota = 0;
};

void allocate(std::vector<stratum>& strata, int cap, uint64_t seed) {
  auto by_size_then_key = [&](const stratum* a, const stratum* b) {
    if (a->members.size() != b->members.size()) return a->members.size() > b->members.size();
    return seeded_key(seed, "stratum:" + a->name) < seeded_key(seed, "stratum:" + b->name);
  };
  std::vector<stratum*> order;
  for (auto& s : strata) {
    s.quota = 0;
    order.push_back(&s);
  }
  if (cap < static_cast<int>(strata.size())) {
    std::sort(order.begin(), order.end(), by_size_then_key);
    for (int i = 0; i < cap; ++i) order[static_cast<std::size_t>(i)]->quota = 1;
    return;
  }
  int rest = cap - static_cast<int>(strata.size());
  long total_extra = 0;
  for (auto& s : strata) {
    s.quota = 1;
    total_extra += static_cast<long>(s.members.size()) - 1;
  }
  if (rest <= 0 || total_extra <= 0) return;
  struct share {
    stratum* s;
    double remainder;
  };
  std::vector<share> shares;
  int given = 0;
  for (auto& s : strata) {
    double exact = static_cast<double>(rest) * static_cast<double>(s.members.size() - 1) / static_cast<double>(total_extra);
    int whole = static_cast<int>(std::floor(exact));
    whole = std::min<int>(whole, static_cast<int>(s.members.size()) - 1);
    s.quota += whole;
    given += whole;
    shares.push_back({&s, exact - std::floor(exact)});
  }
  std::sort(shares.begin(), shares.end(), [&](const share& a, const share& b) {
    if (a.remainder != b.remainder) return a.remainder > b.remainder;
    return by_size_then_key(a.s, b.s);
  });
  for (std::size_t i = 0; given < rest && i < shares.size() * 2; ++i) {
    stratum* s = shares[i % shares.size()].s;
    if (s->quota < static_cast<int>(s->members.size())) {
      ++s->quota;
      ++given;
    }
  }
}

}  // namespace

stratified_selection stratified_cap(const std::vector<strat_item>& items, int cap, uint64_t seed) {
  stratified_selection out;
  std::map<std::string, std::map<std::string, std::vector<std::size_t>>> groups;
  for (std::size_t i = 0; i < items.size(); ++i) groups[items[i].group][items[i].stratum].push_back(i);
  for (auto& [group, by_stratum] : groups) {
    std::vector<stratum> strata;
    std::size_t total = 0;
    for (auto& [name, members] : by_stratum) {
      std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
        return seeded_key(seed, items[a].id) < seeded_key(seed, items[b].id);
      });
      strata.push_back({name, members, static_cast<int>(members.size())});
      total += members.size();
    }
    if (cap >= 0 && total > static_cast<std::size_t>(cap)) allocate(strata, cap, seed);
    for (const auto& s : strata) {
      auto& count = out.strata[group][s.name];
      count.candidates = static_cast<int>(s.members.size());
      count.selected = s.quota;
      for (int k = 0; k < s.quota; ++k) out.selected.push_back(s.members[static_cast<std::size_t>(k)]);
    }
  }
  std::sort(out.selected.begin(), out.selected.end());
  return out;
}

}  // namespace ptxbench::adapt
