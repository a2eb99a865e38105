#include "triton_gate/byte_compile.h"

#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "core/json_check.h"
#include "core/process.h"

namespace ptxbench::triton_gate {
namespace fs = std::filesystem;

namespace {

constexpr int k_compiled = 0;
constexpr int k_does_not_compile = 1;

result<byte_compile_result> parse_answer(const std::string& out) {
  auto doc = parse_json(out, "byte-compile output");
  if (!doc) return doc.err();
  json_errors errs;
  if (!expect_object(*doc, "answer", errs)) return errs.to_error();
  byte_compile_result r;
  r.ok = get_bool(*doc, "ok", "answer", errs).value_or(false);
  if (r.ok) {
    r.python_version = get_string(*doc, "python", "answer", errs).value_or("");
    r.code_objects = static_cast<int>(get_int(*doc, "code_objects", "answer", errs).value_or(0));
  } else {
    r.line = static_cast<int>(get_int(*doc, "line", "answer", errs).value_or(0));
    r.col = static_cast<int>(get_int(*doc, "col", "answer", errs).value_or(0));
    r.kind = get_string(*doc, "kind", "answer", errs).value_or("");
    r.message = get_string(*doc, "message", "answer", errs, true, false).value_or("");
  }
  if (!errs.empty()) return errs.to_error();
  return r;
}

}  // namespace

fs::path byte_compile_script_under(const fs::path& root) { return root / "src" / "triton_gate" / "byte_compile.py"; }

result<byte_compile_result> byte_compile(const fs::path& kernel_py, const gate_options& options) {
  std::error_code ec;
  if (!fs::is_regular_file(kernel_py, ec))
    return make_error(fmt::format("Triton candidate {} is missing or not a file", kernel_py.string()));
  fs::path python = options.python;
  if (python.empty()) {
    auto found = find_executable("python3");
    if (!found) return make_error("python3 not found on PATH (the Triton byte-compile check needs it)");
    python = *found;
  }
  const fs::path script = options.script.empty() ? byte_compile_script_under(scripts_root())
                                                 : options.script.parent_path() / "byte_compile.py";
  if (!fs::is_regular_file(script, ec))
    return make_error(fmt::format("Triton byte-compile script {} is missing", script.string()));

  // An empty working folder: nothing the interpreter might pick up from where it starts.
  std::random_device rd;
  fs::path cwd = fs::temp_directory_path() / fmt::format("ptxbench-bytecompile-{:x}{:x}", rd(), rd());
  fs::create_directories(cwd, ec);
  process_spec spec{.argv = {python.string(), "-I", "-B", script.string(), fs::absolute(kernel_py).string()}};
  spec.cwd = ec ? fs::path() : cwd;
  spec.timeout_s = options.timeout_s;
  spec.max_output_bytes = 64u << 10;
  spec.env_unset = {"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME"};
  const process_result r = run_process(spec);
  fs::remove_all(cwd, ec);

  const std::string what = fmt::format("Triton byte-compile check of {}", kernel_py.filename().string());
  if (!r.started || r.timed_out || r.signal != 0 || r.out_truncated)
    return make_error(fmt::format("{}: {}", what, r.out_truncated ? "output too large" : describe_exit(r, options.timeout_s)));
  if (r.exit_code != k_compiled && r.exit_code != k_does_not_compile) {
    std::string first_line = r.err.substr(0, r.err.find('\n'));
    return make_error(fmt::format("{}: {}{}", what, describe_exit(r), first_line.empty() ? "" : ": " + first_line));
  }
  auto answer = parse_answer(r.out);
  if (!answer) return answer.err().with_context(what);
  if (answer->ok != (r.exit_code == k_compiled))
    return make_error(fmt::format("{}: exit code {} does not match its answer", what, r.exit_code));
  answer->command = spec.argv;
  answer->seconds = r.wall_s;
  return answer;
}

}  // namespace ptxbench::triton_gate
