#pragma once
// The reasoning teacher's job (upstream-ptxbench.md §9.1 stage 00, §9 KernelGen), as upstream's
// synthesis scripts posed it: the teacher sees what the expert saw — the knowledge pack (the system
// prompt), for Fixit the repair prompt (task, wrong kernel, error message: the repair trajectory's
// first user message), for KernelGen the first task prompt — and the kernel the expert wrote next,
// in a ```cpp fence. It writes the expert's first-person monologue before that kernel, aiming at a
// long text (about 40,000 characters), inside <my_reasoning>…</my_reasoning>; code snippets are
// welcome, the kernel itself must not be referred to. Sampling: temperature 1.0, top_p 0.95.
//
// A reply is read as upstream read it: <think>…</think> blocks are dropped, the first
// <my_reasoning>…</my_reasoning> block is the rationale (the whole reply when there is none), and
// it is accepted when its length in characters lies within [min_chars, max_chars] and it holds no
// marker that would break the SFT row (the reasoning tags, which upstream's parquet builder
// refused, <think>/</think> and chat-template markers). A reply that fails is asked for again with
// the same prompt, up to max_attempts replies per row (upstream's synthesis made up to 20 passes
// over the rows still missing). The stricter rules of earlier versions are options: a required
// block, no code fences, a bound on lines quoted from the answer kernel, the problems named on a
// retry.

#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::adapt {

inline constexpr const char* k_rationale_open = "<my_reasoning>";
inline constexpr const char* k_rationale_close = "</my_reasoning>";

struct rationale_rules {
  std::size_t min_chars = 2000;     ///< characters (code points); upstream's Fixit downstream default
  std::size_t max_chars = 190000;   ///< upstream's downstream default
  std::size_t target_chars = 40000; ///< the length the prompt asks for (upstream's v1 prompt: 40,000)
  /// Never inside a rationale: the reasoning tags (upstream's FORBIDDEN_PARQUET_TOKENS) and the
  /// markers that would break the exported row (<think>, </think>, chat-template markers).
  std::vector<std::string> forbidden = {"<my_reasoning>", "</my_reasoning>", "<think>",       "</think>",
                                        "<|im_start|>",   "<|im_end|>",      "<|endoftext|>", "<|eot_id|>"};
  bool require_block = false;       ///< option: refuse a reply without a <my_reasoning> block
  bool no_code = false;             ///< option: refuse code fences in the rationale (and ask for none)
  int max_quoted_lines = -1;        ///< option: at most N distinctive lines of the answer verbatim; < 0: off
  bool name_problems = false;       ///< option: a retry tells the teacher what was wrong
  int max_attempts = 20;            ///< replies asked for per row, retries included (upstream: 20 passes)
  /// The editor (upstream's stage 01, `sft export`) cleans a rationale that still holds the reasoning
  /// tags: when set, <my_reasoning>/</my_reasoning> inside the text are left to it instead of asking
  /// again (Fixit's default, as upstream's synthesis accepted such text; `--no-editor` clears it).
  bool tags_left_to_editor = false;
};

ordered_json to_json(const rationale_rules& r);

/// The teacher's sampling: set in the request whatever model answers (upstream's synthesis passed
/// temperature 1.0 and top_p 0.95 for every model). nullopt leaves the models file's value.
struct teacher_sampling {
  std::optional<double> temperature = 1.0;
  std::optional<double> top_p = 0.95;
};

ordered_json to_json(const teacher_sampling& s);

/// What a reasoning teacher is given for one row.
struct reason_item {
  std::string id;
  std::string kind;           ///< "fixit" or "kernelgen"
  std::string task;
  std::string knowledge;      ///< the system prompt the expert worked under (the knowledge pack)
  std::string task_prompt;    ///< fixit: the repair prompt; kernelgen: the first task prompt
  std::string wrong_kernel;   ///< fixit only (the quote rule ignores lines it shares with the answer)
  std::string answer_kernel;  ///< the kernel the expert wrote next
};

/// The teacher's system and user messages. `previous_problems` (retries) is appended to the user
/// message only when rules.name_problems is set.
struct rationale_prompt {
  std::string system, user;
};
rationale_prompt make_rationale_prompt(const reason_item& item, const rationale_rules& rules,
                                       const std::vector<std::string>& previous_problems);

struct rationale_check {
  std::optional<std::string> rationale;  ///< the accepted text (trimmed), when there is no problem
  std::size_t chars = 0;                 ///< the extracted text's length in characters
  std::vector<std::string> problems;     ///< one line each, e.g. "too_short: 812 characters, at least 2000"
};

/// Takes the rationale out of a reply and applies the rules.
rationale_check check_rationale(const std::string& reply, const reason_item& item, const rationale_rules& rules);

/// The editor (upstream's stage 01: resynthesize_filtered_reasonings_openrouter.py): one request per
/// rationale that still holds the reasoning tags or whose row is over the token budget, asking for the
/// same reasoning without the tags and, when over the budget, shortened to [min_chars, max_chars]
/// (otherwise kept at [min_chars, max_chars] = [0.95 × its length, its length]). In our own words.
struct editor_issues {
  bool tags = false;         ///< the text contains <my_reasoning> or </my_reasoning>
  bool over_budget = false;  ///< the exported row is longer than the token limit
};
rationale_prompt make_editor_prompt(const std::string& rationale, const editor_issues& issues, std::size_t min_chars,
                                    std::size_t max_chars);
/// The editor's reply read as the teacher's is (<think> blocks dropped, the first <my_reasoning> block,
/// else the whole reply), trimmed.
std::string read_editor_reply(const std::string& reply);
/// True when the text holds either reasoning tag.
bool has_reasoning_tags(const std::string& text);
/// The text with every reasoning tag taken out, trimmed (how upstream measured such a row).
std::string without_reasoning_tags(std::string text);

/// The problem's kind: the text before ':' ("too_short", "forbidden_marker", ...).
std::string problem_kind(const std::string& problem);

}  // namespace ptxbench::adapt
