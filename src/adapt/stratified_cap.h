#pragma once
// Deterministic, proportional down-sampling: at most `cap` items per group (a task definition),
// spread over the group's strata ((error type, turn) for Fixit) in proportion to their sizes.
//
// The default rule is upstream's, as build_rebalanced_fixit_error_collection.py wrote it down
// (upstream-ptxbench.md §9.1 source-01):
//
//  1. a group with fewer items than `cap` is an error (upstream stops: "has only N rows, need CAP")
//     unless underfilled groups are allowed, in which case it keeps them all;
//  2. every stratum gets floor(size × cap / total) items; the rest of the cap goes, one each, to the
//     strata with the largest remainder (size × cap mod total, compared exactly), ties broken by the
//     larger stratum, then by the stratum's sort key (upstream's (error-type label, turn) strings);
//  3. inside a stratum the first items in the group's stable order are kept (upstream's row key:
//     turn, trajectory, run directory, kernel path).
//
// So 8 compile rows and 1 numerical row with cap 3 keep 3 compile rows and no numerical one.
//
// Options (each a deliberate difference, documented in docs/adaptation.md):
//  - rule every_stratum: every stratum first gets one item (coverage of rare failure kinds), the
//    rest of the cap is shared in proportion to (size − 1) by the largest remainder; with fewer
//    slots than strata the largest strata get one each;
//  - seed: the items kept inside a stratum follow sha256(seed, id) instead of the stable order, so
//    another seed selects other rows with the same per-stratum counts.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxbench::adapt {

struct strat_item {
  std::string group;         ///< e.g. the task
  std::string stratum;       ///< e.g. "compile/turn0" (the name counts are reported under)
  std::string stratum_sort;  ///< orders strata for ties (upstream's key); empty: the name
  std::string order;         ///< the item's place in the group's stable order (upstream's row key)
  std::string id;            ///< unique; the seeded order's key
};

enum class cap_rule { upstream, every_stratum };
std::string cap_rule_name(cap_rule r);
std::optional<cap_rule> parse_cap_rule(const std::string& name);

struct cap_options {
  int cap = -1;                   ///< < 0: no cap, everything selected
  cap_rule rule = cap_rule::upstream;
  std::optional<uint64_t> seed;   ///< nullopt: the stable order inside a stratum (upstream)
  bool allow_underfilled = false; ///< a group with fewer items than the cap keeps them all
};

struct stratum_count {
  int candidates = 0;
  int selected = 0;
};

struct stratified_selection {
  std::vector<std::size_t> selected;                                    ///< indices into the input, ascending
  std::map<std::string, std::map<std::string, stratum_count>> strata;   ///< group → stratum → counts
  std::vector<std::string> underfilled;                                 ///< groups with fewer items than the cap
};

/// Selects at most `o.cap` items per group. Fails (one line) for an underfilled group unless allowed.
result<stratified_selection> stratified_cap(const std::vector<strat_item>& items, const cap_options& o);

/// upstream's allocation for one group: counts per stratum (in the order given) for `cap` of `total`
/// items; `sort_keys` break ties. Exposed for the tests of the rule itself.
std::vector<int> largest_remainder_counts(const std::vector<int>& sizes, const std::vector<std::string>& sort_keys,
                                          int cap);

/// The seeded ordering key of an id (hex sha256 of "seed:id").
std::string seeded_key(uint64_t seed, const std::string& id);

}  // namespace ptxbench::adapt
