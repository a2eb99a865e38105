#pragma once
// The pairs note collection works on, from a Fixit pairs directory (`ptxbench fixit pairs`, format
// ptxbench.fixit-pairs/1, docs/adaptation.md "The pairs directory"). The directory is read by the
// one reader of that format, adapt::load_pairs (manifest format, every file present with the sha256
// the line records, paths inside the directory); this adapter only turns its rows into the
// repair_pair records the notes carry, with their provenance.

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "supervision/repair_note.h"

namespace ptxbench::supervision {

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
