#include "build/compiler_log.h"

#include <regex>
#include <sstream>

namespace ptxbench::build {

compiler_log parse_compiler_log(const std::string& text) {
  compiler_log log;
  log.text = text;
  static const std::regex compiling(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[0\])");
  // "file(12): error: ...", "ptxas fatal   : ...", "nvcc fatal   : ...", "error: ...", the host
  // preprocessor's "file:18:10: fatal error: x.h: No such file or directory" — but not the
  // "2 errors detected in the compilation" summary.
  static const std::regex error_line(R"((: error|^error|\bfatal\s*:|: fatal error|: catastrophic error))",
                                     std::regex::icase);
  static const std::regex warning_line(R"((: warning|^warning|ptxas warning))", std::regex::icase);

  kernel_resources* current = nullptr;
  std::string pending_properties;  // "Function properties for X" applies to the next frame line
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  auto find_kernel = [&](const std::string& name) -> kernel_resources* {
    for (auto& k : log.kernels)
      if (k.kernel == name) return &k;
    return nullptr;
  };
  while (std::getline(in, line)) {
    bool is_ptxas_info = line.find("ptxas info") != std::string::npos;
    if (std::regex_search(line, m, compiling)) {
      log.kernels.push_back({});
      current = &log.kernels.back();
      current->kernel = m[1];
      current->arch = m[2];
      continue;
    }
    if (std::regex_search(line, m, properties)) { pending_properties = m[1]; continue; }
    if (std::regex_search(line, m, frame)) {
      kernel_resources* k = pending_properties.empty() ? current : find_kernel(pending_properties);
      if (k) {
        k->stack_frame_bytes = std::stoll(m[1]);
        k->spill_store_bytes = std::stoll(m[2]);
        k->spill_load_bytes = std::stoll(m[3]);
      }
      pending_properties.clear();
      continue;
    }
    if (is_ptxas_info && std::regex_search(line, m, used) && current) {
      current->registers = std::stoi(m[1]);
      if (std::regex_search(line, m, barriers)) current->barriers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) current->smem_bytes = std::stoll(m[1]);
      if (std::regex_search(line, m, cmem)) current->cmem0_bytes = std::stoll(m[1]);
      continue;
    }
    if (is_ptxas_info) continue;
    if (std::regex_search(line, error_line)) log.errors.push_back(line);
    else if (std::regex_search(line, warning_line)) log.warnings.push_back(line);
  }
  return log;
}

}  // namespace ptxbench::build
