#pragma once
// One trajectory file, in upstream's mini-swe-agent-1.1 layout (docs/trajectory-format.md):
// messages [system, task, then per turn k: assistant at 2+2k, feedback at 3+2k, optional exit], with
// the structured evaluation in each feedback's `extra`. Written atomically after every turn, so a
// kill at any moment leaves the last completed turn on disk and resume continues from there.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "agent/history.h"
#include "agent/prompt.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::agent {

inline constexpr const char* k_trajectory_format = "mini-swe-agent-1.1";
inline constexpr const char* k_agent_type = "ptxbench.MiniPTXAgent";

struct trajectory_meta {
  std::string model, task, target, arch, variant;
  int trajectory_index = 0;
  int turn_limit = 8;
  double target_speedup = 1.2;
  std::string history_policy = "full";
  uint64_t seed = 0;
  std::string language = "cuda";  ///< the candidates' language: "cuda" or "triton" (absent in older files: cuda)
};

/// Exit statuses. The first three end a trajectory for good; the others leave it resumable.
namespace exit_names {
inline constexpr const char* submitted = "Submitted";                 ///< target met by a target-correct kernel
inline constexpr const char* limits_exceeded = "LimitsExceeded";      ///< every turn used
inline constexpr const char* context_exceeded = "ContextWindowExceeded";  ///< even system + task + one pair overflow
inline constexpr const char* api_error = "APIError";
inline constexpr const char* auth_error = "AuthError";
inline constexpr const char* infra_error = "InfraError";
inline constexpr const char* interrupted = "Interrupted";
inline constexpr const char* running = "Running";
}  // namespace exit_names

class trajectory {
 public:
  /// A new trajectory holding the system and task messages. `config` becomes info.config.
  static trajectory start(const trajectory_meta& meta, ordered_json config, const prompt_pair& prompts);

  /// Reads a trajectory and checks its layout: roles alternate, feedback k says turn k. Errors name
  /// the file and the message index.
  static result<trajectory> load(const std::filesystem::path& path);

  /// The metadata in info.ptxbench.
  [[nodiscard]] trajectory_meta meta() const;
  [[nodiscard]] std::string exit_status() const;
  /// Turns whose feedback was written and was not an infrastructure failure.
  [[nodiscard]] int completed_turns() const;
  /// True when the trajectory ended for good (Submitted, ContextWindowExceeded, or LimitsExceeded
  /// with every turn of `turn_limit` done).
  [[nodiscard]] bool finished(int turn_limit) const;

  /// Cuts everything after the completed turns: a reply without feedback, an infra_error pair, the
  /// exit message. Returns the assistant message of a trailing reply that has no feedback yet (a
  /// kill during its evaluation) or only an infra_error feedback, which the loop evaluates again
  /// instead of paying for a new reply.
  std::optional<ordered_json> trim_to_completed();

  void append_turn(ordered_json assistant, ordered_json feedback);
  /// The two halves of a turn, for a reply saved before it is evaluated.
  void append_reply(ordered_json assistant);
  void append_feedback(ordered_json feedback);

  /// Model calls are recorded before they are made, so a kill during the call (or before the
  /// reply is saved) never loses one: begin_call counts the call and notes it in
  /// info.ptxbench.open_call; end_call settles it with its cost (unknown: calls_without_cost), or
  /// takes it back when the request never left this process (`sent` false).
  void begin_call(ordered_json record);
  void end_call(std::optional<double> cost_usd, bool sent);
  /// On resume: a call still open was cut off by a kill. It stays counted, its cost is unknown
  /// (calls_without_cost), and an interruption of kind "lost_call" says so. Returns whether
  /// there was one.
  bool settle_lost_call(const std::string& timestamp);
  /// Sets info.exit_status (and submission); appends the exit message when one is given.
  void set_exit(const std::string& status, const std::string& submission, std::optional<ordered_json> exit_message);
  void set_turn_limit(int turn_limit);
  /// Appends to info.ptxbench.dropped_pairs / info.ptxbench.interruptions.
  void record_dropped_pairs(ordered_json record);
  void record_interruption(ordered_json record);
  /// info.ptxbench.supervision (agent/turn_supervision.h); null when the trajectory has none.
  void set_supervision(ordered_json record);
  [[nodiscard]] ordered_json supervision() const;

  /// The conversation so far, for the history policy.
  [[nodiscard]] conversation to_conversation() const;

  /// Writes the file atomically (temp file + rename).
  [[nodiscard]] status save(const std::filesystem::path& path) const;

  [[nodiscard]] const ordered_json& json() const { return m_doc; }

 private:
  ordered_json m_doc;
};

/// Reads chat messages out of trajectory message JSON.
chat_message message_from_json(const ordered_json& m);

}  // namespace ptxbench::agent
