#include "sass/disassembler.h"

#include <unistd.h>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/process.h"
#include "core/text.h"

namespace ptxbench::sass {
namespace fs = std::filesystem;

std::string_view tool_name(disassembler_tool t) {
  return t == disassembler_tool::cuobjdump ? "cuobjdump" : "nvdisasm";
}

std::string_view state_name(disassembly_state s) {
  switch (s) {
    case disassembly_state::ok: return "ok";
    case disassembly_state::tool_missing: return "tool_missing";
    case disassembly_state::bad_input: return "bad_input";
    case disassembly_state::tool_failed: return "tool_failed";
  }
  return "unknown";
}

std::optional<fs::path> find_disassembler(const disassembler_options& options) {
  std::string name(tool_name(options.tool));
  if (options.search_path)
    if (auto p = find_executable(name)) return p;
  if (!options.cuda_root.empty()) {
    fs::path candidate = options.cuda_root / "bin" / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

namespace {

std::string where_searched(const disassembler_options& options) {
  std::vector<std::string> places;
  if (options.search_path) places.push_back("PATH");
  if (!options.cuda_root.empty()) places.push_back((options.cuda_root / "bin").string());
  std::string out;
  for (const auto& p : places) out += (out.empty() ? "" : " or ") + p;
  return out.empty() ? "nowhere (no PATH search, no CUDA root)" : out;
}

// The last part of stderr is where tools put the reason; keep it readable in a one-line summary.
std::string stderr_tail(const std::string& err) {
  constexpr std::size_t k_max_bytes = 4000;
  std::string_view e = trim(err);
  if (e.size() > k_max_bytes) e = e.substr(e.size() - k_max_bytes);
  return std::string(e);
}

}  // namespace

disassembly disassemble(const fs::path& file, const disassembler_options& options) {
  disassembly d;
  auto tool = find_disassembler(options);
  if (!tool) {
    d.state = disassembly_state::tool_missing;
    d.message = fmt::format("{} is not installed here (searched {})", tool_name(options.tool), where_searched(options));
    return d;
  }
  d.tool_path = *tool;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    d.state = disassembly_state::bad_input;
    d.message = fmt::format("{}: {}", file.string(), fs::exists(file, ec) ? "not a regular file" : "no such file");
    return d;
  }
  process_spec spec;
  d.command = {tool->string(), options.tool == disassembler_tool::cuobjdump ? "-sass" : "-c", file.string()};
  spec.argv = d.command;
  spec.timeout_s = options.timeout_s;
  spec.max_output_bytes = options.max_output_bytes;
  process_result r = run_process(spec);
  d.seconds = r.wall_s;
  if (!r.succeeded() || r.out_truncated) {
    d.state = disassembly_state::tool_failed;
    std::string why = r.out_truncated && r.succeeded()
                          ? fmt::format("printed more than {}", human_bytes(options.max_output_bytes))
                          : describe_exit(r, options.timeout_s);
    std::string err = stderr_tail(r.err);
    d.message = fmt::format("{} {}{}{}", tool_name(options.tool), why, err.empty() ? "" : ": ", err);
    return d;
  }
  d.state = disassembly_state::ok;
  d.text = std::move(r.out);
  d.message = stderr_tail(r.err);
  return d;
}

}  // namespace ptxbench::sass
