#pragma once
// One failed turn taken from a trajectory (`ptxbench fixit mine`): which run, trajectory and turn,
// how it failed, and the exact texts the student wrote and was told. The texts live in files of the
// mined directory (files/<id>/...), each named with its sha256 in mined.jsonl; the system and task
// prompts are stored once per content under prompts/<sha256>.txt.

#include <filesystem>
#include <string>
#include <vector>

#include "adapt/error_type.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_mined_format = "ptxbench.fixit-mined/1";

struct mined_row {
  std::string id;                 ///< <run>__<trajectory file stem>__turn<k>
  std::string run_dir;            ///< absolute
  std::string trajectory;         ///< absolute path of the trajectory file
  std::string model;              ///< the student (info.ptxbench.model)
  std::string task, target, arch, variant;
  int trajectory_index = 0;
  int plan_index = 0;             ///< the trajectory's index in its run's plan (not stored; mining order)
  int turn = 0;
  eval_outcome label = eval_outcome::compile_error;
  adapt::error_type type = error_type::compile;
  std::string verdict_message;    ///< the verdict's one line, when there was a verdict
  // The texts (exact bytes).
  std::string reply;              ///< the assistant message content, verbatim
  std::string feedback;           ///< the feedback message content, verbatim
  std::string error_log;          ///< the evaluator's text (extra.raw_output): what the repair prompt shows
  std::string kernel;             ///< the source that was evaluated (extra.ptxbench.kernel_source)
  std::string system_prompt;      ///< messages[0] of the trajectory
  std::string task_prompt;        ///< messages[1]

  /// "<error type>/turn<k>", the stratum of the cap.
  [[nodiscard]] std::string stratum() const;
  /// The stratum's sort key as upstream's: (its error label, the turn as text).
  [[nodiscard]] std::string stratum_sort() const;
};

/// Reads MINED/mined.jsonl with every file it names, checking each file's sha256. Errors are one
/// line naming the row and the file.
result<std::vector<mined_row>> load_mined(const std::filesystem::path& dir);

/// mined.jsonl's JSON for a row whose files were written at the given relative paths.
struct mined_files {
  std::string system_prompt_file, task_prompt_file, kernel_file, kernel_sha256, log_file, log_sha256, reply_file,
      reply_sha256, feedback_file, feedback_sha256;
};
ordered_json mined_row_json(const mined_row& r, const mined_files& f);

/// Characters other than letters, digits, '.', '-' and '_' become '_'.
std::string file_safe(const std::string& s);

}  // namespace ptxbench::adapt
