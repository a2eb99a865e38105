#pragma once
// Prompt-time supervision as the turn loop sees it (docs/supervision.md): what a trajectory records
// about the supervision arm it runs under, and a hook called after every failed turn that may
// append text to the feedback (retrieved repair notes) and record what it did. The loop knows
// nothing of guidance documents, notes or retrieval; src/supervision builds these values and the
// CLI hands them to the sweep. With no supervision every field is empty and nothing changes.

#include <functional>
#include <optional>
#include <string>

#include "core/json_check.h"
#include "suite/task.h"
#include "verdict/outcome.h"

namespace ptxbench::agent {

/// A failed turn: a kernel was evaluated and did not pass.
struct failed_turn {
  const task* t = nullptr;
  std::string variant;
  int trajectory_index = 0;
  std::string trajectory_id;  ///< the trajectory file's stem, e.g. "gemm_n7168_k5120__h200__base__t0"
  int turn = 0;
  eval_outcome label = eval_outcome::other_error;
  const std::string* kernel = nullptr;         ///< the evaluated source
  const std::string* feedback_text = nullptr;  ///< the <output> text the model would get without supervision
};

struct feedback_supplement {
  std::string text;     ///< appended to the feedback text after a blank line; empty: nothing appended
  ordered_json record;  ///< stored at extra.ptxbench.supervision.retrieval of the turn's feedback
};

struct turn_supervision {
  /// info.ptxbench.supervision of the trajectory (arm, guidance, notes, exclusions); null: none.
  /// A resumed trajectory whose file records another value is refused, naming the difference.
  ordered_json trajectory_record;
  /// Written to extra.ptxbench.supervision of every feedback message (e.g. the arm and the guidance
  /// document's sha256); null: nothing is written.
  ordered_json turn_record;
  /// Called after a failed turn; may be empty.
  std::function<std::optional<feedback_supplement>(const failed_turn&)> on_failed_turn;

  [[nodiscard]] bool active() const { return !trajectory_record.is_null(); }
};

/// Why a trajectory file recording `have` cannot be resumed under `want`, naming the first field
/// that differs ("supervision.guidance.sha256 is \"ab…\" in the file but \"cd…\" now"), or "".
std::string supervision_mismatch(const ordered_json& have, const ordered_json& want);

}  // namespace ptxbench::agent
