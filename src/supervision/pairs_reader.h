#pragma once
// Reads a Fixit pairs directory (`ptxbench fixit pairs`, format ptxbench.fixit-pairs/1, defined in
// docs/adaptation.md "The pairs directory") into the pairs note collection works on. Written against
// that documented format (fixit branch commit dfa8e16) and checked against what the fixit branch's
// writer produces (adapt::collect_pairs at fixit 259ee38, mirrored byte for byte in
// tests/supervision/pairs_reader_test.cc), without linking the Fixit library: manifest.json must say
// the format, and its "files" map, when present, must give pairs.jsonl's sha256; every line names its
// files relative to the directory, each present with the sha256 the line gives; prompts are stored
// as prompts/<sha256 of the content>.txt.

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
