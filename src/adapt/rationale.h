#pragma once
// The reasoning teacher's job (upstream-ptxbench.md §9.1 stage 00, §9 KernelGen): given the problem,
// what the student wrote and was told, and — for the teacher's eyes only — the kernel that works,
// write the first-person monologue that leads from the failure (or the task) to that kernel without
// quoting it. The reply carries the monologue inside <my_reasoning>…</my_reasoning> (upstream's
// tags). A rationale is accepted only when it passes every rule below; a reply that breaks one is
// asked for again, up to max_attempts times.

#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::adapt {

inline constexpr const char* k_rationale_open = "<my_reasoning>";
inline constexpr const char* k_rationale_close = "</my_reasoning>";

struct rationale_rules {
  std::size_t min_chars = 2000;    ///< upstream's downstream default
  std::size_t max_chars = 190000;  ///< upstream's downstream default
  /// Never inside a rationale: the tags themselves (a nested or repeated block), the reasoning and
  /// chat-template markers the export adds or the student's template uses, and code fences (the
  /// rationale talks about code, it does not paste it).
  std::vector<std::string> forbidden = {"<my_reasoning>", "</my_reasoning>", "<think>", "</think>", "<|im_start|>",
                                        "<|im_end|>",     "<|endoftext|>",   "<|eot_id|>", "```"};
  /// Lines of the answer kernel (at least 24 characters once trimmed, and not in the wrong kernel)
  /// the rationale may contain verbatim before it counts as quoting the answer.
  int max_quoted_lines = 2;
  int max_attempts = 4;            ///< replies asked for per row, retries included
};

ordered_json to_json(const rationale_rules& r);

/// What a reasoning teacher is given for one row.
struct reason_item {
  std::string id;
  std::string kind;           ///< "fixit" or "kernelgen"
  std::string task;
  std::string task_prompt;    ///< the first user message the student saw
  std::string wrong_kernel;   ///< fixit only
  std::string feedback;       ///< fixit only: the evaluator's text the student received
  std::string answer_kernel;  ///< the kernel that works
};

/// The teacher's system and user messages. `previous_problems` (retries) is appended to the user
/// message so the teacher knows what to avoid.
struct rationale_prompt {
  std::string system, user;
};
rationale_prompt make_rationale_prompt(const reason_item& item, const rationale_rules& rules,
                                       const std::vector<std::string>& previous_problems);

struct rationale_check {
  std::optional<std::string> rationale;  ///< the accepted text (trimmed), when there is no problem
  std::vector<std::string> problems;     ///< one line each, e.g. "too_short: 812 characters, at least 2000"
};

/// Takes the rationale out of a reply and applies the rules.
rationale_check check_rationale(const std::string& reply, const reason_item& item, const rationale_rules& rules);

/// The problem's kind: the text before ':' ("too_short", "forbidden_marker", ...).
std::string problem_kind(const std::string& problem);

}  // namespace ptxbench::adapt
