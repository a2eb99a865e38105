#include "eval/triton_stages.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/file_io.h"
#include "core/process.h"
#include "core/sha256.h"
#include "triton_gate/byte_compile.h"
#include "triton_gate/triton_gate.h"
#include "verdict/stage_timer.h"

namespace ptxbench::eval {
namespace fs = std::filesystem;

namespace {

constexpr const char* k_entry_file = "kernel.py";

ordered_json triton_findings_json(const std::vector<gate_finding>& findings) {
  ordered_json j = ordered_json::array();
  for (const auto& f : findings)
    j.push_back({{"rule", f.rule}, {"file", f.file}, {"line", f.line}, {"excerpt", f.excerpt}, {"message", f.message}});
  return j;
}

std::string triton_findings_text(const std::vector<gate_finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += f.line > 0 ? fmt::format("{}:{}: [{}] {}\n", f.file, f.line, f.rule, f.message)
                      : fmt::format("{}: [{}] {}\n", f.file, f.rule, f.message);
    if (!f.excerpt.empty() && f.line > 0) out += "    " + f.excerpt + "\n";
  }
  return out;
}

// The stored source: content-addressed, so every later stage (and the GPU runner) reads exactly
// the bytes the gate read.
result<fs::path> store_source(const fs::path& cache_dir, const std::string& content, std::string& key) {
  sha256_builder h;
  h.update("ptxbench-triton-source/1").update(content);
  key = h.hex_digest();
  fs::path file = cache_dir / "triton" / key / k_entry_file;
  auto existing = read_file(file, content.size() + 1);
  if (existing && *existing == content) return file;
  if (auto st = write_file_atomic(file, content); !st) return st.err().with_context("storing the Triton candidate");
  return file;
}

std::string compile_log(const triton_gate::byte_compile_result& r) {
  return r.line > 0 ? fmt::format("{}:{}:{}: {}: {}\n", k_entry_file, r.line, r.col, r.kind, r.message)
                    : fmt::format("{}: {}: {}\n", k_entry_file, r.kind, r.message);
}

}  // namespace

bool is_triton(const solution& s) { return s.spec.language == "triton"; }

std::optional<fs::path> triton_python(const pipeline_config& config) {
  if (!config.python.empty()) return config.python;
  if (const char* env = std::getenv("PTXBENCH_PYTHON"); env && *env) return fs::path(env);
  return find_executable("python3");
}

solution solution_for_triton_file(const std::string& file_name, const std::string& content, const task& t,
                                  const target_info& target) {
  solution s;
  s.name = fs::path(file_name).stem().string();
  s.definition = t.name;
  s.author = "ptxbench-cli";
  s.spec.language = "triton";
  s.spec.target_hardware = {target.name};
  s.spec.entry_point = std::string(k_entry_file) + "::run";
  s.spec.destination_passing_style = true;
  s.sources = {{k_entry_file, content}};
  return s;
}

std::vector<int> scalar_positions(const definition& d) {
  std::vector<int> out;
  int i = 0;
  for (const auto* list : {&d.inputs, &d.outputs})
    for (const auto& tensor : *list) {
      if (!tensor.shape) out.push_back(i);
      ++i;
    }
  return out;
}

result<std::optional<build::build_result>> run_triton_cpu_stages(const task& t, const target_info& target,
                                                                 const solution& candidate,
                                                                 const pipeline_config& config, verdict& v) {
  v.targets.target = target.name;
  v.targets.arch = target.arch;
  v.targets.required_families = target.required_families;
  const std::optional<build::build_result> stopped;
  const std::string entry_file = candidate.entry_file();

  // source_gate: the Python gate (its rules: docs/kernel-abi.md, "Triton candidates (gate)").
  std::string key;
  fs::path stored;
  {
    stage_timer timer(stage_id::source_gate);
    const source_file* source = candidate.find_source(entry_file);
    if (candidate.sources.size() != 1 || !source || fs::path(entry_file).extension() != ".py") {
      std::string why = fmt::format(
          "a Triton solution is one Python file whose run(...) the entry point names (kernel.py::run); this one has "
          "{} source(s) and entry point '{}'",
          candidate.sources.size(), candidate.spec.entry_point);
      v.stages.push_back(timer.finish(stage_outcome::failed, why));
      decide(v, stage_id::source_gate, eval_outcome::rejected, why);
      return stopped;
    }
    auto file = store_source(config.cache_dir, source->content, key);
    if (!file) return file.err();
    stored = *file;
    triton_gate::gate_options options;
    options.entry = candidate.entry_symbol();
    options.scalar_positions = scalar_positions(t.def);
    if (auto python = triton_python(config)) options.python = *python;
    if (!config.root.empty()) options.script = triton_gate::gate_script_under(config.root);
    auto findings = triton_gate::check_triton_source(stored, options);
    if (!findings) return findings.err().with_context("source gate");
    if (!findings->empty()) {
      for (const auto& f : *findings) v.gate_findings.push_back({f.rule, entry_file, f.line, f.excerpt, f.message});
      const auto& f = v.gate_findings.front();
      std::string where = f.line > 0 ? fmt::format("{}:{}", f.file, f.line) : f.file;
      v.stages.push_back(timer.finish(stage_outcome::failed, fmt::format("{} at {}: {}", f.rule, where, f.message),
                                      triton_findings_json(v.gate_findings)));
      decide(v, stage_id::source_gate, eval_outcome::rejected,
             fmt::format("rejected by the Triton source gate ({} at {})", f.rule, where), triton_findings_text(v.gate_findings));
      return stopped;
    }
    v.stages.push_back(timer.finish(
        stage_outcome::passed,
        "Python gate: host code only allocates, views, copies and queries tensors; no torch compute, vendor "
        "library, native code, dynamic code or process spawning"));
  }

  // build: a byte-compile check; the artifact is the stored source.
  build::build_result built;
  {
    stage_timer timer(stage_id::build);
    triton_gate::gate_options options;
    if (auto python = triton_python(config)) options.python = *python;
    if (!config.root.empty()) options.script = triton_gate::gate_script_under(config.root);
    auto compiled = triton_gate::byte_compile(stored, options);
    if (!compiled) return compiled.err().with_context("build");
    built.key = key;
    built.dir = stored.parent_path();
    built.command = compiled->command;
    built.seconds = compiled->seconds;
    built.compile_seconds = compiled->seconds;
    built.nvcc_version = compiled->ok ? "Python " + compiled->python_version + " (byte-compile check; Triton compiles on the GPU)" : "";
    v.build.attempted = true;
    v.build.cache_key = key;
    v.build.seconds = compiled->seconds;
    v.build.command = compiled->command;
    v.build.nvcc_version = built.nvcc_version;
    ordered_json details = {{"kind", "python byte-compile"}, {"key", key}};
    if (!compiled->ok) {
      built.outcome = build::build_outcome::compile_error;
      v.build.log = compile_log(*compiled);
      v.build.errors = {v.build.log.substr(0, v.build.log.size() - 1)};
      std::string why = fmt::format("Python cannot compile {}{}: {}", entry_file,
                                    compiled->line > 0 ? fmt::format(" (line {})", compiled->line) : "", compiled->message);
      v.stages.push_back(timer.finish(stage_outcome::failed, why, details));
      decide(v, stage_id::build, eval_outcome::compile_error, "compile error: " + why, v.build.log);
      return stopped;
    }
    built.outcome = build::build_outcome::built;
    built.shared_object = stored;
    v.build.succeeded = true;
    v.build.artifact = stored.string();
    v.build.artifact_sha256 = sha256_hex(candidate.find_source(entry_file)->content);
    details["python"] = compiled->python_version;
    details["code_objects"] = compiled->code_objects;
    v.stages.push_back(timer.finish(
        stage_outcome::passed,
        fmt::format("byte-compiled with Python {} ({} code objects); no nvcc: Triton compiles the kernels on the GPU",
                    compiled->python_version, compiled->code_objects),
        details));
  }

  // link_gate: nothing native to link here; on the GPU host it is the kernels' provenance.
  v.stages.push_back({stage_id::link_gate, stage_outcome::deferred, 0,
                      "deferred to the GPU host: run() is captured there, and every kernel it launches must be "
                      "recompiled from kernel.py to the same cubin (kernel provenance) before the launch plan is replayed",
                      nullptr});

  // static_sass: deferred to the GPU, where Triton writes the cubins.
  v.targets.verdict = target_verdict::deferred;
  v.targets.reason = std::string("static SASS check deferred: ") + k_triton_static_deferred;
  v.stages.push_back({stage_id::static_sass, stage_outcome::deferred, 0, k_triton_static_deferred, nullptr});
  return std::optional<build::build_result>{std::move(built)};
}

}  // namespace ptxbench::eval
