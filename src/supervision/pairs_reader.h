#pragma once
// Reads a Fixit pairs directory (`ptxbench fixit pairs`, format ptxbench.fixit-pairs/1, defined in
// docs/adaptation.md "The pairs directory") into the pairs note collection works on. Written against
// that documented format (fixit branch commit dfa8e16), not against the Fixit code, so this layer
// needs nothing from it: manifest.json must say the format; every line of pairs.jsonl names its
// files relative to the directory, and each file must exist there with the sha256 the line gives.

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "supervision/repair_note.h"

namespace ptxbench::supervision {

inline constexpr const char* k_pairs_format = "ptxbench.fixit-pairs/1";

struct pairs_input {
  std::filesystem::path dir;
  std::string manifest_sha256;
  std::vector<repair_pair> pairs;  ///< in pairs.jsonl order
  std::vector<std::string> task_prompts;  ///< parallel to pairs: the first task prompt the student saw
};

/// Reads PAIRS (the directory, or its pairs.jsonl). Fails with one line naming the pair and the file
/// for anything else: another format, a missing or changed file, a path leaving the directory.
result<pairs_input> read_pairs(const std::filesystem::path& path);

}  // namespace ptxbench::supervision
