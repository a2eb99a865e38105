#pragma once
// Deterministic, seeded, proportional down-sampling: at most `cap` items per group (a task
// definition), spread over the group's strata ((error type, turn) for Fixit) in proportion to their
// sizes. Upstream did the same ("downsampled deterministically and proportionally over
// (error_type, turn) strata", cap 33 per definition); the allocation rule here is written down:
//
//  1. a group with at most `cap` items keeps them all;
//  2. when cap ≥ the number of strata, every stratum first gets one item (coverage of rare failure
//     kinds is what the paper found to matter), and the rest of the cap is shared in proportion to
//     (size − 1) by the largest-remainder method;
//     when cap < the number of strata, the `cap` largest strata get one item each;
//  3. ties (equal remainders, equal sizes) and the choice of items inside a stratum follow a seeded
//     order: sha256(seed, key), so the selection depends on the seed and the ids, never on the order
//     the items were read in.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ptxbench::adapt {

struct strat_item {
  std::string group;    ///< e.g. the task
  std::string stratum;  ///< e.g. "compile/turn0"
  std::string id;       ///< unique; orders items inside a stratum (seeded)
};

struct stratum_count {
  int candidates = 0;
  int selected = 0;
};

struct stratified_selection {
  std::vector<std::size_t> selected;                                    ///< indices into the input, ascending
  std::map<std::string, std::map<std::string, stratum_count>> strata;   ///< group → stratum → counts
};

/// Selects at most `cap` items per group (cap < 0: no cap, everything selected).
stratified_selection stratified_cap(const std::vector<strat_item>& items, int cap, uint64_t seed);

/// The seeded ordering key of an id (hex sha256 of "seed:id").
std::string seeded_key(uint64_t seed, const std::string& id);

}  // namespace ptxbench::adapt
