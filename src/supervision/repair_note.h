#pragma once
// A repair note and the notes file (NOTES.jsonl, docs/supervision.md): one JSON object per line,
// "format": "ptxbench.repair-note/1", holding the teacher's note (fitting note_schema.h), the pair it
// was written from (wrong kernel, the feedback it got, the fixed kernel, with their sha256) and
// where that pair came from (task, variant, trajectory, turn), which leak control needs.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::supervision {

inline constexpr const char* k_note_format = "ptxbench.repair-note/1";

/// Where a wrong kernel came from.
struct pair_source {
  std::string run;         ///< the run directory it was mined from, as recorded; may be empty
  std::string task;
  std::string variant;
  std::string trajectory;  ///< the trajectory id (its file's stem)
  int turn = -1;
  std::string label;       ///< how the wrong turn ended (eval_outcome name)
};

/// One wrong/fixed pair, as note collection reads it from a pairs file.
struct repair_pair {
  std::string key;  ///< unique per pair; the resume key of note collection
  pair_source source;
  std::string wrong_kernel, feedback, fixed_kernel;
  std::string wrong_sha256, feedback_sha256, fixed_sha256;
  std::optional<double> fixed_speedup;
  std::optional<bool> fixed_target_correct;
  ordered_json origin;  ///< what the pairs file said about the pair beyond this (paths, hashes), kept verbatim
};

struct instruction_note {
  std::string instruction, shape_context, correct_example, wrong_example, operand_contract;
  std::vector<std::string> required_sequence;
  std::string diagnostics;
  std::vector<std::string> do_not_do;
};

struct repair_note {
  repair_pair pair;
  std::string summary;
  std::vector<instruction_note> instructions;
  std::vector<std::string> tags;
  ordered_json note;     ///< the teacher's object exactly as validated
  ordered_json teacher;  ///< {model, attempts, timestamp, prompt_version}
};

/// Builds a note from a teacher's schema-valid object (validated again here).
result<repair_note> make_note(const repair_pair& pair, const ordered_json& teacher_object, ordered_json teacher);

/// One notes-file line.
ordered_json to_json(const repair_note& n);

/// Reads one notes-file line; `where` ("NOTES.jsonl:3") prefixes every complaint. Checks the format,
/// the schema, and that each kernel's sha256 matches its text.
result<repair_note> note_from_json(const ordered_json& j, const std::string& where);

struct note_set {
  std::filesystem::path file;
  std::string sha256;  ///< of the file's bytes: which note set a run used
  std::vector<repair_note> notes;
};

/// Largest notes file read (notes carry whole kernels).
inline constexpr std::size_t k_max_notes_file_bytes = std::size_t{1} << 30;

/// Reads a notes file strictly: every line a note, keys unique, no torn last line (a collection
/// that was interrupted must be finished first). Errors are one line naming file:line.
result<note_set> read_note_set(const std::filesystem::path& file);

}  // namespace ptxbench::supervision
