#include "cli/commands.h"

namespace ptxbench::cli {

const std::vector<command>& all_commands() {
  static const std::vector<command> table = {
      {"tasks", "list the task suite, or show one task as the model sees it", add_tasks_command},
      {"check", "gate, build, link-gate and statically check a candidate kernel (no GPU needed)", add_check_command},
      {"sass", "static SASS check of a built kernel; with --ncu, which families executed", add_sass_command},
  };
  return table;
}

}  // namespace ptxbench::cli
