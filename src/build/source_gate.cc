#include "build/source_gate.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

#include "build/measurement_rules.h"
#include "build/source_scan.h"
#include "core/file_io.h"
#include "core/text.h"

namespace ptxbench::build {
namespace {

// Vendor math libraries whose use makes a candidate not a hand-written kernel.
constexpr std::array<std::string_view, 2> k_vendor_prefixes = {"cublas", "cudnn"};

// Any reference to these (a call, or taking their address) loads code the gate cannot see.
constexpr std::array<std::string_view, 7> k_dynamic_loading = {"dlopen", "dlmopen", "dlsym", "dlvsym",
                                                               "__libc_dlopen_mode", "__libc_dlsym", "dlinfo"};

// Called as functions, these start other programs (or, for syscall, anything at all).
constexpr std::array<std::string_view, 18> k_process_spawn = {
    "system", "popen",  "execl",       "execle",       "execlp", "execv",  "execve",  "execvp", "execvpe",
    "fexecve", "fork",  "vfork",       "posix_spawn",  "posix_spawnp", "clone", "clone3", "syscall", "_exit_group"};

std::string header_basename(const std::string& header) {
  auto slash = header.find_last_of('/');
  return slash == std::string::npos ? header : header.substr(slash + 1);
}

// Measurement machinery (measurement_rules.h): in headers, identifiers, the runner's namespace and
// the two kinds of string literal that only a lookup by name or a /proc path needs.
template <typename Add>
void check_measurement_machinery(const scanned_source& scanned, Add& add) {
  constexpr const char* rule = "measurement-machinery";
  auto message = [](const std::string& what, const std::string& why) {
    return fmt::format("{} ({}); candidates may not touch the measurement machinery: CUPTI, the CUDA profiler API, "
                       "NVTX, the runner's own code or the loaded images",
                       what, why);
  };
  for (const auto& inc : scanned.includes)
    if (auto why = measurement_header(inc.header)) add(rule, inc.line, message("includes <" + inc.header + ">", *why));
  const auto& ids = scanned.identifiers;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (auto why = measurement_identifier(ids[i].text)) {
      add(rule, ids[i].line, message("uses '" + ids[i].text + "'", *why));
      continue;
    }
    // ptxbench::gpu (and the other internal namespaces): the runner's code; the kernel ABI lives
    // directly in namespace ptxbench (ptxbench::tensor_view, ptxbench::abi_error, ptxbench::shape_error).
    if (i > 0 && ids[i - 1].text == "ptxbench" && ids[i].prev_char == ':') {
      std::size_t from = ids[i - 1].offset + ids[i - 1].text.size();
      std::string between = scanned.code.substr(from, ids[i].offset - from);
      between.erase(std::remove_if(between.begin(), between.end(), [](unsigned char c) { return std::isspace(c); }),
                    between.end());
      static const std::array<std::string_view, 11> internal = {"gpu",   "eval",  "build",   "sass",    "suite",
                                                                "core",  "cli",   "agent",   "metrics", "prompts",
                                                                "baselines"};
      if (between == "::" && std::find(internal.begin(), internal.end(), ids[i].text) != internal.end())
        add(rule, ids[i].line, message("uses 'ptxbench::" + ids[i].text + "'", "the runner's own code"));
    }
  }
  for (const auto& lit : scanned.literals)
    if (auto why = measurement_string(lit.text))
      add(rule, lit.line, message("names \"" + lit.text + "\" in a string", *why));
}

void check_one(const source_file& file, std::vector<gate_finding>& out) {
  scanned_source scanned = scan_source(file.content);
  auto add = [&](const char* rule, int line, std::string message) {
    out.push_back({rule, file.path, line, source_line(file.content, line), std::move(message)});
  };
  for (const auto& inc : scanned.includes) {
    std::string base = lower(header_basename(inc.header));
    for (auto prefix : k_vendor_prefixes)
      if (starts_with(base, prefix))
        add("vendor-library", inc.line,
            fmt::format("includes the vendor library header <{}>; write the kernel yourself (cuBLAS, cuBLASLt "
                        "and cuDNN are not allowed)", inc.header));
  }
  for (const auto& tok : scanned.identifiers) {
    std::string low = lower(tok.text);
    for (auto prefix : k_vendor_prefixes) {
      if (starts_with(low, prefix)) {
        add("vendor-library", tok.line,
            fmt::format("uses the vendor library API '{}'; cuBLAS, cuBLASLt and cuDNN are not allowed", tok.text));
        break;
      }
    }
    if (std::find(k_dynamic_loading.begin(), k_dynamic_loading.end(), tok.text) != k_dynamic_loading.end())
      add("dynamic-loading", tok.line,
          fmt::format("uses '{}'; loading code at run time is not allowed", tok.text));
    bool is_call = tok.next_char == '(' && tok.prev_char != '.' && !tok.after_arrow;
    if (is_call && std::find(k_process_spawn.begin(), k_process_spawn.end(), tok.text) != k_process_spawn.end())
      add("process-spawn", tok.line, fmt::format("calls '{}'; starting processes is not allowed", tok.text));
  }
  check_measurement_machinery(scanned, add);
}

}  // namespace

std::vector<gate_finding> check_sources(const std::vector<source_file>& sources,
                                              const source_gate_config& config) {
  std::vector<gate_finding> out;
  std::size_t total = 0;
  for (const auto& f : sources) total += f.content.size();
  if (total > config.max_total_bytes) {
    out.push_back({"size", sources.empty() ? "" : sources.front().path, 0, "",
                   fmt::format("sources are {} bytes in total, over the limit of {}", total,
                               human_bytes(config.max_total_bytes))});
    return out;  // do not scan a runaway input
  }
  for (const auto& f : sources) check_one(f, out);
  return out;
}

}  // namespace ptxbench::build
