#include "harbor/instruction.h"

#include <fmt/format.h>

namespace ptxbench::harbor {

std::string remote_eval_command(const task& t, const target_info& target, const std::string& subcommand) {
  return fmt::format("ptxbench {} {} --task {} --target {} --remote \"$PTXBENCH_SERVICE_URL\"", subcommand,
                     k_kernel_path, t.name, target.name);
}

std::string render_instruction(const task& t, const target_info& target, const task_prompt& prompt,
                               const export_settings& s) {
  const std::string families = fmt::format("{}", fmt::join(target.required_families, " or "));
  const std::string baseline = t.baseline.empty() ? std::string("the reference") : t.baseline;
  std::string out;
  out += fmt::format("# PTXBench task `{}` on the {} ({})\n\n", t.name, target.gpu_name, target.arch);
  out += fmt::format(
      "You work in a Linux container with a shell and no GPU. Write a CUDA kernel for the task below in the file "
      "`{}` and make it correct and fast. When you finish, that file is evaluated (its content at the end; nothing you "
      "say counts): the reward is 1 when the kernel is correct and executes {} instructions on the task's workload, "
      "and 0 otherwise; its speedup against {} is recorded beside the reward.\n\n",
      k_kernel_path, families, baseline);
  out += "## Evaluating your kernel here\n\n";
  out += fmt::format(
      "`ptxbench` is installed. A PTXBench service with {} GPUs runs the GPU stages; its URL is in "
      "`$PTXBENCH_SERVICE_URL` (a token, where the service needs one, is in `$PTXBENCH_SERVICE_TOKEN`, which "
      "`ptxbench` reads by itself):\n\n",
      target.gpu_name);
  out += fmt::format("```sh\n{}\n```\n\n", remote_eval_command(t, target, "eval"));
  out += fmt::format(
      "runs every stage (source gate, build, link gate, static SASS check, memory check, correctness, timing, the "
      "runtime count of {} instructions) and prints each stage's result, the compiler log of a failed build, the "
      "errors, the speedup and the verdict; `--json` prints the whole verdict as JSON. The exit code is 0 only for a "
      "correct kernel whose {} instructions executed. `ptxbench check` with the same arguments runs only the CPU "
      "stages (gates, build, static SASS check), which is quicker for compile errors. Evaluate after every "
      "meaningful change; the final evaluation is the same command.\n\n",
      families, families);
  out += fmt::format(
      "The kernel ABI header is `{root}/include/ptxbench/abi.h` and the knowledge pack's headers are under "
      "`{root}/packs/` (the build puts both on the include path); `ptxbench tasks show {task}` prints the task "
      "again.\n\n",
      fmt::arg("root", k_ptxbench_root), fmt::arg("task", t.name));
  out += fmt::format(
      "Everything below is the prompt PTXBench's own agent gives a model for this task (prompt variant `{}`). Its "
      "rules hold here too, except that \"reply\" and \"code block\" mean the file `{}`.\n\n",
      s.variant, k_kernel_path);
  out += "---\n\n";
  out += prompt.system;
  if (!prompt.system.empty() && prompt.system.back() != '\n') out += "\n";
  out += "\n---\n\n";
  out += prompt.user;
  if (!prompt.user.empty() && prompt.user.back() != '\n') out += "\n";
  return out;
}

}  // namespace ptxbench::harbor
