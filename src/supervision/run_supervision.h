#pragma once
// One run's prompt-time supervision, assembled for the agent (docs/supervision.md): the guidance
// document goes into the system prompt of the tasks it names; the repair notes are retrieved after
// every failed turn; the arm names what a trajectory ran under ("base", "guidance:1a2b3c4d",
// "notes", "notes+kernel", or a combination joined by "+"), and the records say which files (by
// sha256) and which exclusions were used.

#include <memory>
#include <optional>
#include <string>

#include "agent/prompt.h"
#include "agent/turn_supervision.h"
#include "core/json_check.h"
#include "supervision/guidance.h"
#include "supervision/retrieval.h"

namespace ptxbench::supervision {

inline constexpr const char* k_base_arm = "base";

struct run_supervision {
  std::shared_ptr<const guidance_doc> guidance;  ///< null: no guidance arm
  std::shared_ptr<const note_corpus> notes;      ///< null: no retrieval
  retrieval_options retrieval;
  /// Leak control: notes whose pair came from the same task and trajectory (id) as the running one
  /// are excluded unless this is set.
  bool allow_same_trajectory_notes = false;

  [[nodiscard]] bool active() const { return guidance || notes; }
  /// The arm of a trajectory of task t.
  [[nodiscard]] std::string arm(const task& t) const;
  /// plan.json's "supervision": files by sha256, retrieval settings, the exclusion policy; null when
  /// inactive. (File paths are not part of it: the same content under another path is the same run.)
  [[nodiscard]] ordered_json plan_record() const;
  /// The supervision of one trajectory: its record, the per-turn record and the retrieval hook.
  [[nodiscard]] agent::turn_supervision for_trajectory(const task& t, const std::string& trajectory_id) const;
  /// The prompt builder with the guidance added to the system prompt of the tasks it names.
  [[nodiscard]] agent::prompt_builder wrap_prompts(agent::prompt_builder base) const;
};

/// True when a note's pair came from this task and trajectory (the leak that is excluded by default).
bool same_trajectory(const repair_note& n, const task& t, const std::string& trajectory_id);

}  // namespace ptxbench::supervision
