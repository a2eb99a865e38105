#include "adapt/rationale.h"

#include <set>

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::adapt {

ordered_json to_json(const rationale_rules& r) {
  return {{"min_chars", r.min_chars},         {"max_chars", r.max_chars}, {"forbidden", r.forbidden},
          {"max_quoted_lines", r.max_quoted_lines}, {"max_attempts", r.max_attempts}};
}

namespace {

constexpr const char* k_system =
    "You write the private reasoning of an expert CUDA kernel engineer: the thoughts they have while they work, in "
    "the first person. You are shown what the engineer knows and, for your eyes only, where the work ends up. The "
    "reasoning must read as the engineer's own discovery; never reveal or hint that you were shown the outcome.";

std::string fenced(const std::string& code) {
  std::string body = code;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return "```cuda\n" + body + "```";
}

std::string rules_text(const rationale_rules& r) {
  return fmt::format(
      "Write in the first person, as thinking, not as an explanation to someone else. Never mention or hint that a "
      "working kernel was shown to you. Do not write code blocks and do not copy lines of the working kernel; name "
      "functions, variables and instructions in prose where you need them. Write at least {} characters (at most {}). "
      "Put the monologue between {} and {} and write nothing after the closing tag.",
      r.min_chars, r.max_chars, k_rationale_open, k_rationale_close);
}

}  // namespace

rationale_prompt make_rationale_prompt(const reason_item& item, const rationale_rules& rules,
                                       const std::vector<std::string>& previous_problems) {
  rationale_prompt p;
  p.system = k_system;
  if (item.kind == "fixit") {
    p.user = fmt::format(
        "Below are a CUDA kernel task, a kernel an engineer wrote for it, and the feedback its evaluation returned. "
        "You are also shown a corrected kernel that passes, for reference only.\n\n"
        "Write the engineer's internal monologue from the moment they read the feedback until they know exactly what "
        "to change: read the error, find its cause in their own kernel, reason about why it happens on this GPU, and "
        "arrive at the concrete changes the corrected kernel makes. {}\n\n"
        "## Task\n\n{}\n\n## The engineer's kernel\n\n{}\n\n## Feedback\n\n{}\n\n"
        "## Corrected kernel (for reference only; never mention it)\n\n{}\n",
        rules_text(rules), item.task_prompt, fenced(item.wrong_kernel), item.feedback, fenced(item.answer_kernel));
  } else {
    p.user = fmt::format(
        "Below is a CUDA kernel task. You are also shown a kernel that solves it correctly, for reference only.\n\n"
        "Write the engineer's internal monologue from reading the task until they know exactly which kernel to write: "
        "understand the computation and the workload, weigh the hardware features and the design choices, and arrive "
        "at the decisions the reference kernel embodies. {}\n\n"
        "## Task\n\n{}\n\n## Reference kernel (for reference only; never mention it)\n\n{}\n",
        rules_text(rules), item.task_prompt, fenced(item.answer_kernel));
  }
  if (!previous_problems.empty()) {
    std::string list;
    for (const auto& pr : previous_problems) list += "\n- " + pr;
    p.user += "\nA previous answer to this request was rejected:" + list + "\nWrite it again and follow every rule above.\n";
  }
  return p;
}

std::string problem_kind(const std::string& problem) { return problem.substr(0, problem.find(':')); }

rationale_check check_rationale(const std::string& reply, const reason_item& item, const rationale_rules& rules) {
  rationale_check c;
  auto open = reply.find(k_rationale_open);
  auto close = reply.rfind(k_rationale_close);
  if (open == std::string::npos || close == std::string::npos || close < open) {
    c.problems.push_back(fmt::format("missing_block: no {}…{} block in the reply", k_rationale_open, k_rationale_close));
    return c;
  }
  std::size_t begin = open + std::string(k_rationale_open).size();
  std::string text(trim(std::string_view(reply).substr(begin, close - begin)));
  for (const auto& marker : rules.forbidden)
    if (text.find(marker) != std::string::npos) c.problems.push_back(fmt::format("forbidden_marker: contains '{}'", marker));
  if (text.size() < rules.min_chars)
    c.problems.push_back(fmt::format("too_short: {} characters, at least {}", text.size(), rules.min_chars));
  if (text.size() > rules.max_chars)
    c.problems.push_back(fmt::format("too_long: {} characters, at most {}", text.size(), rules.max_chars));
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
    c.problems.push_back(fmt::format("quotes_answer: {} lines of the working kernel verbatim (at most {})", quoted.size(),
                                     rules.max_quoted_lines));
  if (c.problems.empty()) c.rationale = std::move(text);
  return c;
}

}  // namespace ptxbench::adapt
