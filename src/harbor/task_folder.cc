#include "harbor/task_folder.h"

#include <cctype>

#include <fmt/format.h>

#include "harbor/environment_files.h"
#include "harbor/instruction.h"
#include "harbor/task_toml.h"
#include "harbor/verifier_script.h"

namespace ptxbench::harbor {

bool is_plain_name(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.front() == '-') return false;
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

result<std::vector<folder_file>> task_folder_files(const task& t, const target_info& target, const task_prompt& prompt,
                                                   const export_settings& s) {
  // These names go into a shell script, TOML and a folder name unquoted.
  for (const auto& [what, name] : {std::pair<const char*, const std::string&>{"task", t.name},
                                   {"target", target.name}, {"arch", target.arch}, {"variant", s.variant}})
    if (!is_plain_name(name))
      return make_error(fmt::format("{} name '{}' cannot be exported: only letters, digits, '_', '.' and '-'", what, name));
  if (target.verification != "runtime")
    return make_error(fmt::format("target {} is checked statically only here (no such GPU): a Harbor reward needs the "
                                  "kernel to run; export for a target whose GPU the service has (h100, h200)",
                                  target.name));
  if (s.image.empty() || s.image.find_first_of(" \t\r\n") != std::string::npos)
    return make_error(fmt::format("--image '{}': expected one word, a Docker image name", s.image));
  return std::vector<folder_file>{
      {"task.toml", render_task_toml(t, target, s)},
      {"instruction.md", render_instruction(t, target, prompt, s)},
      {"environment/Dockerfile", render_dockerfile(t, target, s)},
      {"environment/docker-compose.yaml", render_compose_file()},
      {"tests/test.sh", render_test_script(t, target, s), true},
  };
}

}  // namespace ptxbench::harbor
