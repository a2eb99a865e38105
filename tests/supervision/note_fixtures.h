#pragma once
// Notes, notes files and pairs directories for the supervision tests.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "supervision/repair_note.h"

namespace ptxbench::testing {

/// A schema-valid teacher object with one instruction note per name.
ordered_json note_object(const std::vector<std::string>& instructions, const std::string& summary = "A summary.");

struct note_spec {
  std::string key, task = "gemm_n7168_k5120", trajectory = "other__h200__base__t0";
  std::string wrong_kernel, fixed_kernel = "__global__ void fixed() {}\n";
  std::vector<std::string> instructions = {"wgmma.fence"};
  std::optional<double> fixed_speedup;
  std::string label = "compile_error";
};

/// A note as `notes collect` writes it.
supervision::repair_note make_test_note(const note_spec& s);

/// Writes notes as a notes file; returns its path.
std::filesystem::path write_notes_file(const std::filesystem::path& file, const std::vector<supervision::repair_note>& notes);

/// A pair of a Fixit pairs directory (docs/adaptation.md).
struct pair_spec {
  std::string id, task = "gemm_n7168_k5120", trajectory_stem = "gemm_n7168_k5120__h200__base__t0";
  std::string wrong = "__global__ void wrong() {}\n", feedback = "error: identifier \"x\" is undefined",
              correct = "__global__ void right() {}\n";
  int turn = 0;
};

/// Writes a pairs directory with manifest.json, pairs.jsonl and the files each pair names.
void write_pairs_dir(const std::filesystem::path& dir, const std::vector<pair_spec>& pairs);

}  // namespace ptxbench::testing
