#include "mcp/tool_catalog.h"

#include <fmt/format.h>

#include "verdict/outcome.h"

namespace ptxbench::mcp {
namespace {

ordered_json string_property(const std::string& description) { return {{"type", "string"}, {"description", description}}; }

// The input of check and evaluate: the kernel as text or as a file, for a task and target.
ordered_json kernel_input() {
  ordered_json props = {
      {"task", string_property("the task name (list_tasks lists them), e.g. gemm_n7168_k5120")},
      {"source", string_property("the complete kernel file as text (kernel.cu, or kernel.py with language triton); "
                                 "give this or path")},
      {"path", string_property("a kernel file on the server's machine (.cu: CUDA, .py: Triton); give this or source")},
      {"target", string_property("the target GPU: h100, h200 or b200 (default: the server's --target)")},
      {"language", {{"type", "string"}, {"enum", {"cuda", "triton"}},
                    {"description", "the language of source (default cuda); a path's extension decides for a file"}}}};
  return {{"type", "object"}, {"properties", props}, {"required", {"task"}}, {"additionalProperties", false}};
}

// The verdict's JSON (verdict/verdict_json.h), the structuredContent of check and evaluate.
ordered_json verdict_schema() {
  ordered_json outcomes = ordered_json::array();
  for (auto o : k_all_outcomes) outcomes.push_back(std::string(outcome_name(o)));
  ordered_json nullable_object = {{"type", {"object", "null"}}};
  ordered_json props = {
      {"format", {{"type", "string"}, {"const", "ptxbench.verdict/1"}}},
      {"mode", {{"type", "string"}, {"enum", {"check", "eval"}}, {"description", "check: CPU stages only"}}},
      {"task", {{"type", "string"}}},
      {"target", {{"type", "string"}}},
      {"arch", {{"type", "string"}}},
      {"status", {{"type", {"string", "null"}}, {"description", "FlashInfer's status; null for built and infra_error"}}},
      {"outcome", {{"type", "string"}, {"enum", outcomes}, {"description", "how the evaluation ended"}}},
      {"deciding_stage", {{"type", "string"}, {"description", "the stage that decided; empty when none did"}}},
      {"message", {{"type", "string"}, {"description", "one line for a person"}}},
      {"log", {{"type", "string"}, {"description", "compiler, sanitizer or error text of the deciding stage"}}},
      {"target_correct",
       {{"type", "boolean"}, {"description", "passed and a required instruction family executed on the workload"}}},
      {"stages", {{"type", "array"}, {"items", {{"type", "object"}}}}},
      {"gate_findings", {{"type", "array"}, {"items", {{"type", "object"}}}}},
      {"build", {{"type", "object"}}},
      {"target_instructions", {{"type", "object"}}},
      {"correctness", nullable_object},
      {"timing", nullable_object},
      {"environment", ordered_json::object()},
      {"trace", nullable_object}};
  return {{"type", "object"},
          {"properties", props},
          {"required", {"format", "mode", "task", "target", "outcome", "message", "target_correct", "stages"}}};
}

ordered_json tool(const std::string& name, const std::string& title, const std::string& description,
                  ordered_json input, ordered_json output, bool read_only) {
  return {{"name", name},
          {"title", title},
          {"description", description},
          {"inputSchema", std::move(input)},
          {"outputSchema", std::move(output)},
          {"annotations", {{"readOnlyHint", read_only}, {"openWorldHint", false}}}};
}

}  // namespace

ordered_json tool_list(const std::string& evaluator) {
  ordered_json tasks_output = {
      {"type", "object"},
      {"properties",
       {{"tasks", {{"type", "array"}, {"items", {{"type", "object"}}}}},
        {"targets", {{"type", "array"}, {"items", {{"type", "object"}}}}}}},
      {"required", {"tasks", "targets"}}};
  ordered_json show_input = {
      {"type", "object"},
      {"properties",
       {{"task", string_property("the task name (list_tasks lists them)")},
        {"target", string_property("the target GPU (default: the server's --target)")},
        {"variant", string_property("the prompt variant: a knowledge-pack variant such as base, or builtin-minimal "
                                    "(default: the server's --variant)")}}},
      {"required", {"task"}},
      {"additionalProperties", false}};
  ordered_json show_output = {
      {"type", "object"},
      {"properties",
       {{"task", {{"type", "string"}}},
        {"target", {{"type", "string"}}},
        {"variant", {{"type", "string"}}},
        {"pack", {{"type", "string"}}},
        {"system", {{"type", "string"}, {"description", "the system message"}}},
        {"user", {{"type", "string"}, {"description", "the first user message: the task"}}}}},
      {"required", {"task", "target", "variant", "system", "user"}}};
  ordered_json tools = ordered_json::array();
  tools.push_back(tool(k_list_tasks, "List the PTXBench tasks",
                       "The task suite: every task (problem family, operator, baseline library, status, targets) and "
                       "every target GPU with the instruction families a kernel must execute on it.",
                       {{"type", "object"}, {"properties", ordered_json::object()}, {"additionalProperties", false}},
                       tasks_output, true));
  tools.push_back(tool(k_show_task, "Show a task as the model sees it",
                       "The exact system and user messages PTXBench's agent gives a model for the task: the rules, "
                       "the kernel ABI, the knowledge pack of the chosen variant, the task definition with its "
                       "concrete shapes and the entry point to export.",
                       show_input, show_output, true));
  tools.push_back(tool(k_check, "Check a kernel (CPU stages)",
                       "Source gate, nvcc build, link gate and static SASS check of a kernel for a task, without a GPU. "
                       "Returns the verdict (outcome 'built' when it passes) and its text summary; a compile error "
                       "comes with the compiler log.",
                       kernel_input(), verdict_schema(), true));
  tools.push_back(tool(k_evaluate, "Evaluate a kernel (every stage)",
                       fmt::format("Every stage on {}: the CPU stages, then memory check, correctness against the "
                                   "reference, timing against the vendor library and the runtime count of the "
                                   "target's instructions. Returns the verdict (speedup, errors, target "
                                   "instructions executed) and its text summary. Takes seconds to minutes; progress "
                                   "notifications report the time spent when the request has a progressToken.",
                                   evaluator),
                       kernel_input(), verdict_schema(), true));
  return {{"tools", tools}};
}

bool is_tool(const std::string& name) {
  return name == k_list_tasks || name == k_show_task || name == k_check || name == k_evaluate;
}

}  // namespace ptxbench::mcp
