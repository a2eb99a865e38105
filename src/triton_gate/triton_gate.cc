#include "triton_gate/triton_gate.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "core/json_check.h"
#include "core/process.h"

namespace ptxbench::triton_gate {
namespace fs = std::filesystem;

namespace {

// Exit codes of triton_gate.py.
constexpr int k_clean = 0;
constexpr int k_findings = 1;
constexpr int k_cannot_parse = 2;

std::string join_positions(const std::vector<int>& positions) {
  std::string joined;
  for (int p : positions) joined += (joined.empty() ? "" : ",") + std::to_string(p);
  return joined;
}

result<std::vector<finding>> parse_findings(const std::string& out) {
  auto doc = parse_json(out, "triton gate output");
  if (!doc) return doc.err();
  json_errors errs;
  std::vector<finding> findings;
  if (!expect_array(*doc, "findings", errs)) return errs.to_error().with_context("triton gate output");
  for (std::size_t i = 0; i < doc->size(); ++i) {
    const auto& item = (*doc)[i];
    const std::string path = json_index("findings", i);
    if (!expect_object(item, path, errs)) continue;
    auto rule = get_string(item, "rule", path, errs);
    auto line = get_int(item, "line", path, errs);
    auto col = get_int(item, "col", path, errs);
    auto excerpt = get_string(item, "excerpt", path, errs, true, false);
    auto message = get_string(item, "message", path, errs);
    if (rule && line && col && excerpt && message)
      findings.push_back({*rule, static_cast<int>(*line), static_cast<int>(*col), *excerpt, *message});
  }
  if (!errs.empty()) return errs.to_error().with_context("triton gate output");
  return findings;
}

// The stripped text of a 1-based line of a file ("" when there is none), for a syntax finding.
std::string line_of(const fs::path& path, int number) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  for (int i = 1; i <= number && std::getline(in, line); ++i) {
    if (i == number) {
      const auto first = line.find_first_not_of(" \t\r");
      const auto last = line.find_last_not_of(" \t\r");
      return first == std::string::npos ? "" : line.substr(first, std::min<std::size_t>(last - first + 1, 200));
    }
  }
  return "";
}

result<finding> parse_syntax_error(const std::string& out, const fs::path& kernel_py) {
  auto doc = parse_json(out, "triton gate output");
  if (!doc) return doc.err();
  json_errors errs;
  if (!expect_object(*doc, "error", errs)) return errs.to_error().with_context("triton gate output");
  auto line = get_int(*doc, "line", "error", errs);
  auto col = get_int(*doc, "col", "error", errs);
  auto message = get_string(*doc, "message", "error", errs);
  if (!errs.empty()) return errs.to_error().with_context("triton gate output");
  return finding{"syntax", static_cast<int>(*line), static_cast<int>(*col),
                 *line > 0 ? line_of(kernel_py, static_cast<int>(*line)) : "",
                 "Python cannot parse the file: " + *message};
}

}  // namespace

fs::path scripts_root() {
  const char* root = std::getenv("PTXBENCH_ROOT");
  return (root && *root) ? fs::path(root) : fs::path(PTXBENCH_SOURCE_ROOT);
}

fs::path gate_script_under(const fs::path& root) { return root / "src" / "triton_gate" / "triton_gate.py"; }

result<std::vector<finding>> check_triton_source(const fs::path& kernel_py, const gate_options& options) {
  std::error_code ec;
  if (!fs::is_regular_file(kernel_py, ec))
    return make_error(fmt::format("Triton candidate {} is missing or not a file", kernel_py.string()));

  fs::path python = options.python;
  if (python.empty()) {
    auto found = find_executable("python3");
    if (!found) return make_error("python3 not found on PATH (the Triton source gate needs it)");
    python = *found;
  }
  const fs::path script = options.script.empty() ? gate_script_under(scripts_root()) : options.script;
  if (!fs::is_regular_file(script, ec))
    return make_error(fmt::format("Triton source gate script {} is missing", script.string()));

  // -I: isolated mode (no PYTHONPATH, no user site, no script folder on sys.path); -B: no .pyc.
  process_spec spec{.argv = {python.string(), "-I", "-B", script.string(), "--entry", options.entry}};
  if (options.scalar_positions) {
    spec.argv.push_back("--scalar-positions=" + join_positions(*options.scalar_positions));
  }
  if (options.arity) spec.argv.push_back("--arity=" + std::to_string(*options.arity));
  spec.argv.push_back(kernel_py.string());
  spec.timeout_s = options.timeout_s;
  spec.env_unset = {"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME"};

  const process_result r = run_process(spec);
  const std::string what = fmt::format("Triton source gate on {}", kernel_py.filename().string());
  if (!r.started || r.timed_out || r.signal != 0 || r.out_truncated)
    return make_error(fmt::format("{}: {}", what, r.out_truncated ? "output too large" : describe_exit(r, options.timeout_s)));

  switch (r.exit_code) {
    case k_clean:
    case k_findings: {
      auto findings = parse_findings(r.out);
      if (!findings) return findings.err().with_context(what);
      if ((r.exit_code == k_clean) != findings->empty())
        return make_error(fmt::format("{}: exit code {} does not match {} findings", what, r.exit_code,
                                      findings->size()));
      return findings;
    }
    case k_cannot_parse: {
      // Exit 2 with a JSON object on stdout: the candidate's fault (it is not valid Python).
      // Exit 2 without one: the gate was called wrongly or could not read the file.
      if (r.out.find('{') == std::string::npos) {
        std::string first_line = r.err.substr(0, r.err.find('\n'));
        return make_error(fmt::format("{}: {}", what, first_line.empty() ? describe_exit(r) : first_line));
      }
      auto syntax = parse_syntax_error(r.out, kernel_py);
      if (!syntax) return syntax.err().with_context(what);
      return std::vector<finding>{*syntax};
    }
    default: {
      std::string first_line = r.err.substr(0, r.err.find('\n'));
      return make_error(fmt::format("{}: {}{}", what, describe_exit(r), first_line.empty() ? "" : ": " + first_line));
    }
  }
}

}  // namespace ptxbench::triton_gate
