#include "adapt/rationale.h"

#include <set>

#include <fmt/format.h>

#include "agent/code_extract.h"
#include "core/text.h"

namespace ptxbench::adapt {

ordered_json to_json(const rationale_rules& r) {
  return {{"min_chars", r.min_chars},
          {"max_chars", r.max_chars},
          {"length_unit", "characters (Unicode code points)"},
          {"target_chars", r.target_chars},
          {"forbidden", r.forbidden},
          {"require_block", r.require_block},
          {"no_code", r.no_code},
          {"max_quoted_lines", r.max_quoted_lines >= 0 ? ordered_json(r.max_quoted_lines) : ordered_json(nullptr)},
          {"name_problems", r.name_problems},
          {"max_attempts", r.max_attempts},
          {"tags_left_to_editor", r.tags_left_to_editor}};
}

ordered_json to_json(const teacher_sampling& s) {
  return {{"temperature", s.temperature ? ordered_json(*s.temperature) : ordered_json("models file")},
          {"top_p", s.top_p ? ordered_json(*s.top_p) : ordered_json("models file")}};
}

namespace {

// The prompts below pose upstream's questions (synthesize_pair_reasoning_openrouter.py, prompt
// version v1_trajectory_adopted; synthesize_correct_kernel_reasoning_openrouter.py,
// v1_correct_kernel_adopted) in our own words: the same material in the same order, the same
// requirements, the same output block.

constexpr const char* k_fixit_system =
    "You are an expert in optimising CUDA kernels. You write the internal monologue in which an expert repairs a "
    "wrong CUDA kernel and arrives at a correct, optimised one.\n\n"
    "Requirements:\n"
    "- Think as deeply and as carefully as you can.\n"
    "- Be concrete: name the code structure, the indexing, the data movement, the synchronisation, the arithmetic, "
    "the architecture features and the ways things fail.\n"
    "- Explain why the wrong kernel is wrong and how to fix it.\n"
    "- Do not copy either kernel whole into the reasoning. Snippets, pseudocode and partial implementations are "
    "welcome where they help the reasoning.\n"
    "- Put the monologue inside <my_reasoning>...</my_reasoning> tags.";

constexpr const char* k_kernelgen_system =
    "You are an expert in optimising CUDA kernels. You write the internal monologue in which an expert works out a "
    "correct, optimised CUDA kernel for a task.\n\n"
    "Requirements:\n"
    "- Think as deeply and as carefully as you can.\n"
    "- Be concrete: name the PTX features, the indexing, the memory layout, the synchronisation, the instructions "
    "and the arithmetic.\n"
    "- Do not copy the kernel whole into the reasoning. Short snippets, pseudocode and partial calculations are "
    "welcome where they help.\n"
    "- Put the monologue inside <my_reasoning>...</my_reasoning> tags.";

std::string cpp_fenced(const std::string& code) {
  std::string body = code;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return "```cpp\n" + body + "```";
}

std::string instructions(const reason_item& item, const rationale_rules& r) {
  bool fixit = item.kind == "fixit";
  std::string s = "## Your task\n";
  s += fixit ? "Above is what an expert CUDA developer (\"the expert\") had in front of them when facing a wrong "
               "kernel. The expert's kernel is what the expert wrote next.\n\n"
             : "Above is the knowledge an expert CUDA developer (\"the expert\") had and the task they were given. "
               "The expert's kernel is what the expert wrote next.\n\n";
  s += fmt::format(
      "Write the reasoning the expert went through before writing the expert's kernel, as the expert, in the first "
      "person, between {} and {}: what they noticed, what they weighed, what they decided, and why. It will be "
      "used as training data, so it must be thorough and genuine.\n\n"
      "### Requirements\n",
      k_rationale_open, k_rationale_close);
  s += fixit ? "- First person: \"I notice my previous kernel does X. I should try Y because ...\"\n"
             : "- First person: \"I need these instructions here. I choose this memory layout because ...\"\n";
  s += "- Never refer to the expert's kernel: it does not exist yet while the expert reasons. The monologue leads to "
       "it but must not mention it (nothing like \"in the expert's kernel\" or \"the reference solution\").\n";
  s += fmt::format(
      "- Thorough: aim at about {} characters (do not mention this number). The whole thought process, not a "
      "summary.\n",
      r.target_chars);
  s += fixit ? "- Concrete: specific tile sizes, the specific error message, specific numbers from the kernel and the "
               "error.\n"
               "- Forward: start from the problem and the feedback, go through every decision, end with the strategy "
               "about to be implemented.\n"
             : "- Concrete: specific tile sizes, tensor shapes, index formulas, memory layouts, synchronisation "
               "points, PTX/CUDA instructions and architecture limits from the knowledge and the task.\n"
               "- Forward: start from the task and the hardware knowledge, go through every decision, end with the "
               "implementation strategy about to be written.\n";
  s += "- Alternatives weighed and rejected: \"I could do A, but that would cause B, so I do C.\"\n"
       "- Calculations shown, e.g. shared memory per stage and in total against what one SM has.\n";
  if (fixit) s += "- Cite or paraphrase the CUDA/PTX knowledge above where it justifies a decision.\n";
  s += r.no_code ? "- Write no code blocks and copy no lines of the expert's kernel; name functions, variables and "
                   "instructions in prose where you need them.\n"
                 : "- Small code patterns may be written inline, as an expert sketches on paper.\n";
  s += fmt::format(
      "\n### Output\n- Only the {0}...{1} block: nothing before it, nothing after it.\n- No summary or conclusion "
      "outside the block.\n\nBegin the monologue with {0} now and end it with {1}.",
      k_rationale_open, k_rationale_close);
  return s;
}

}  // namespace

rationale_prompt make_rationale_prompt(const reason_item& item, const rationale_rules& rules,
                                       const std::vector<std::string>& previous_problems) {
  rationale_prompt p;
  if (item.kind == "fixit") {
    p.system = k_fixit_system;
    p.user = fmt::format(
        "# What the expert was shown\n"
        "The knowledge, the task, the wrong kernel and its error message below were shown to the expert.\n\n"
        "## CUDA/PTX knowledge\n{}\n\n"
        "## Task, wrong kernel and error message\n{}\n\n\n"
        "## The expert's kernel\n{}\n\n\n{}",
        item.knowledge, item.task_prompt, cpp_fenced(item.answer_kernel), instructions(item, rules));
  } else {
    p.system = k_kernelgen_system;
    p.user = fmt::format("# Base knowledge\n{}\n\n# Task\n{}\n\n# The expert's kernel\n{}\n\n{}\n", item.knowledge,
                         item.task_prompt, cpp_fenced(item.answer_kernel), instructions(item, rules));
  }
  if (rules.name_problems && !previous_problems.empty()) {
    std::string list;
    for (const auto& pr : previous_problems) list += "\n- " + pr;
    p.user += "\n\nA previous answer to this request was rejected:" + list + "\nWrite it again and follow every rule above.\n";
  }
  return p;
}

std::string problem_kind(const std::string& problem) { return problem.substr(0, problem.find(':')); }

namespace {

// Upstream's reading: every <think>…</think> removed, the rest trimmed; the first block, if any.
std::string read_reply(const std::string& reply, bool* had_block) {
  std::string cleaned(trim(agent::strip_think(reply)));
  auto open = cleaned.find(k_rationale_open);
  auto close = open == std::string::npos ? std::string::npos
                                         : cleaned.find(k_rationale_close, open + std::string(k_rationale_open).size());
  *had_block = open != std::string::npos && close != std::string::npos;
  if (!*had_block) return cleaned;
  std::size_t begin = open + std::string(k_rationale_open).size();
  return std::string(trim(std::string_view(cleaned).substr(begin, close - begin)));
}

}  // namespace

bool has_reasoning_tags(const std::string& text) {
  return text.find(k_rationale_open) != std::string::npos || text.find(k_rationale_close) != std::string::npos;
}

std::string without_reasoning_tags(std::string text) {
  for (std::string tag : {k_rationale_open, k_rationale_close})
    for (auto at = text.find(tag); at != std::string::npos; at = text.find(tag, at)) text.erase(at, tag.size());
  return std::string(trim(text));
}

std::string read_editor_reply(const std::string& reply) {
  bool had_block = false;
  return read_reply(reply, &had_block);
}

rationale_prompt make_editor_prompt(const std::string& rationale, const editor_issues& issues, std::size_t min_chars,
                                    std::size_t max_chars) {
  rationale_prompt p;
  p.system =
      "You edit the reasoning an expert wrote before a CUDA kernel; the edited text becomes training data. Keep its "
      "technical content: the diagnosis, the causes, the numbers and calculations, the constraints, the options "
      "weighed and the plan it settles on. The result must read on its own as the expert's own first-person "
      "thinking before the kernel was written. Do not write the strings <my_reasoning> or </my_reasoning> anywhere. "
      "Answer with the edited reasoning alone: no preface, no closing remark, no fence around it.";
  std::string fixes;
  if (issues.tags) fixes += "- Take out every <my_reasoning> and </my_reasoning> that appears in the text.\n";
  if (issues.over_budget)
    fixes += "- Make it shorter, but only as much as the length range below requires.\n";
  else if (issues.tags)
    fixes += "- Change nothing else: do not condense or summarise it.\n";
  p.user = fmt::format(
      "Edit the reasoning below.\n\nWhat to fix:\n{}\nLength: it has {} characters now; the edited text should have "
      "about {} to {} characters. Stay close to the upper bound and cut no more than needed.\n\n"
      "Keep in mind:\n"
      "- the diagnosis, the calculations, the CUDA constraints, the rejected alternatives and the final design stay;\n"
      "- first person, moving forward, as thought before the kernel existed;\n"
      "- no word about this edit, about length limits, about markers or about having been shortened;\n"
      "- answer with the edited text only, without the two markers; they appear below only to delimit the input.\n\n"
      "{}\n{}\n{}",
      fixes, utf8_length(rationale), min_chars, max_chars, k_rationale_open, rationale, k_rationale_close);
  return p;
}

rationale_check check_rationale(const std::string& reply, const reason_item& item, const rationale_rules& rules) {
  rationale_check c;
  bool had_block = false;
  std::string text = read_reply(reply, &had_block);
  if (!had_block && rules.require_block) {
    c.problems.push_back(fmt::format("missing_block: no {}…{} block in the reply", k_rationale_open, k_rationale_close));
    return c;
  }
  c.chars = utf8_length(text);
  for (const auto& marker : rules.forbidden) {
    if (rules.tags_left_to_editor && (marker == k_rationale_open || marker == k_rationale_close)) continue;
    if (text.find(marker) != std::string::npos) c.problems.push_back(fmt::format("forbidden_marker: contains '{}'", marker));
  }
  if (c.chars < rules.min_chars)
    c.problems.push_back(fmt::format("too_short: {} characters, at least {}", c.chars, rules.min_chars));
  if (c.chars > rules.max_chars)
    c.problems.push_back(fmt::format("too_long: {} characters, at most {}", c.chars, rules.max_chars));
  if (rules.no_code && text.find("```") != std::string::npos)
    c.problems.push_back("code_fence: the rationale contains a code fence");
  if (rules.max_quoted_lines >= 0) {
    // Quoting: distinctive lines of the answer (long enough to be code, not in the wrong kernel).
    std::set<std::string> wrong_lines;
    for (auto l : split_lines(item.wrong_kernel)) wrong_lines.insert(std::string(trim(l)));
    std::set<std::string> quoted;
    for (auto l : split_lines(item.answer_kernel)) {
      std::string line(trim(l));
      if (line.size() < 24 || wrong_lines.count(line)) continue;
      if (text.find(line) != std::string::npos) quoted.insert(line);
    }
    if (static_cast<int>(quoted.size()) > rules.max_quoted_lines)
      c.problems.push_back(fmt::format("quotes_answer: {} lines of the working kernel verbatim (at most {})",
                                       quoted.size(), rules.max_quoted_lines));
  }
  if (c.problems.empty()) c.rationale = std::move(text);
  return c;
}

}  // namespace ptxbench::adapt
