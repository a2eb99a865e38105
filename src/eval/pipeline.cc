#include "eval/pipeline.h"

#include <fmt/format.h>

#include "build/entry_check.h"
#include "build/binding_includes.h"
#include "build/link_gate.h"
#include "build/toolchain.h"
#include "core/sha256.h"
#include "core/file_io.h"
#include "verdict/stage_timer.h"
#include "eval/static_stage.h"
#include "eval/triton_stages.h"

namespace ptxbench::eval {
namespace fs = std::filesystem;

void decide(verdict& v, stage_id stage, eval_outcome outcome, std::string message, std::string log) {
  v.decided = {outcome, stage, std::move(message), std::move(log)};
  if (v.targets.reason.empty())
    v.targets.reason = fmt::format("not established: the pipeline stopped at {}", stage_name(stage));
  mark_skipped_after(v.stages, stage, last_stage(v.mode));
}

stage_id last_stage(eval_mode mode) { return mode == eval_mode::eval ? stage_id::dynamic_check : stage_id::static_sass; }

solution solution_for_kernel_file(const std::string& file_name, const std::string& content, const task& t,
                                  const target_info& target) {
  solution s;
  s.name = fs::path(file_name).stem().string();
  s.definition = t.name;
  s.author = "ptxbench-cli";
  s.spec.language = "cuda";
  s.spec.target_hardware = {target.name};
  s.spec.entry_point = file_name + "::run";
  s.spec.destination_passing_style = true;
  s.spec.binding = "ptxbench";
  s.sources = {{file_name, content}};
  return s;
}

namespace {

std::string findings_text(const std::vector<gate_finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += f.line > 0 ? fmt::format("{}:{}: [{}] {}\n", f.file, f.line, f.rule, f.message)
                      : fmt::format("{}: [{}] {}\n", f.file, f.rule, f.message);
    if (!f.excerpt.empty() && f.line > 0) out += "    " + f.excerpt + "\n";
  }
  return out;
}

ordered_json findings_json(const std::vector<gate_finding>& findings) {
  ordered_json j = ordered_json::array();
  for (const auto& f : findings) j.push_back({{"rule", f.rule}, {"file", f.file}, {"line", f.line}, {"message", f.message}});
  return j;
}

void fill_build_summary(verdict& v, const build::build_result& b) {
  v.build.attempted = true;
  v.build.succeeded = b.outcome == build::build_outcome::built;
  v.build.cache_hit = b.cache_hit;
  v.build.cache_key = b.key;
  v.build.seconds = b.seconds;
  v.build.command = b.command;
  v.build.nvcc_version = b.nvcc_version;
  v.build.log = b.log.text;
  v.build.errors = b.log.errors;
  v.build.warnings = b.log.warnings;
  v.build.kernels = b.log.kernels;
  if (v.build.succeeded) {
    v.build.artifact = b.shared_object.string();
    auto bytes = read_file(b.shared_object, 1u << 30);
    if (bytes) v.build.artifact_sha256 = sha256_hex(*bytes);
  }
}

}  // namespace

result<std::optional<build::build_result>> run_cpu_stages(const task& t, const target_info& target,
                                                          const solution& candidate, const pipeline_config& config,
                                                          verdict& v) {
  if (is_triton(candidate)) return run_triton_cpu_stages(t, target, candidate, config, v);
  v.targets.target = target.name;
  v.targets.arch = target.arch;
  v.targets.required_families = target.required_families;
  const std::optional<build::build_result> stopped;

  // source_gate
  {
    stage_timer timer(stage_id::source_gate);
    auto findings = build::check_sources(candidate.sources, config.gate);
    if (!findings.empty()) {
      v.gate_findings = findings;
      const auto& f = findings.front();
      std::string where = f.line > 0 ? fmt::format("{}:{}", f.file, f.line) : f.file;
      v.stages.push_back(timer.finish(stage_outcome::failed, fmt::format("{} at {}: {}", f.rule, where, f.message),
                                      findings_json(findings)));
      decide(v, stage_id::source_gate, eval_outcome::rejected,
             fmt::format("rejected by the source gate ({} at {})", f.rule, where), findings_text(findings));
      return stopped;
    }
    v.stages.push_back(timer.finish(
        stage_outcome::passed,
        fmt::format("{} source file(s), no vendor library, dynamic loading or process spawning", candidate.sources.size())));
  }

  // build
  build::build_result built;
  {
    stage_timer timer(stage_id::build);
    auto tc = build::find_toolchain(config.cuda_root, config.cache_dir);
    if (!tc) return tc.err();
    build::build_request req;
    req.sources = candidate.sources;
    req.gencode = target.gencode;
    req.include_dirs = candidate_include_dirs(config.root, target);
    auto binding = binding_of(candidate);  // an upstream (TVM-FFI) kernel builds against our compat headers
    if (!binding) {
      v.stages.push_back(timer.finish(stage_outcome::failed, binding.err().message));
      decide(v, stage_id::build, eval_outcome::compile_error, binding.err().message);
      return stopped;
    }
    for (auto& dir : build::binding_include_dirs(*binding, config.root)) req.include_dirs.push_back(dir);
    req.cache_dir = config.cache_dir;
    req.timeout_s = config.compile_timeout_s;
    auto r = build::build_candidate(req, *tc);
    if (!r) return r.err().with_context("build");
    built = std::move(*r);
    fill_build_summary(v, built);
    ordered_json details = {{"cache_hit", built.cache_hit}, {"key", built.key},
                            {"compile_seconds", built.compile_seconds}};
    if (built.outcome != build::build_outcome::built) {
      std::string why = built.outcome == build::build_outcome::timeout
                            ? fmt::format("compilation timed out after {:g} s", config.compile_timeout_s)
                            : (built.log.errors.empty() ? std::string("nvcc failed") : built.log.errors.front());
      v.stages.push_back(timer.finish(stage_outcome::failed, why, details));
      decide(v, stage_id::build, eval_outcome::compile_error, "compile error: " + why, built.log.text);
      return stopped;
    }
    v.stages.push_back(timer.finish(stage_outcome::passed,
                                    fmt::format("built for {}{} ({} kernel(s))", target.arch,
                                                built.cache_hit ? " (cache hit)" : "", built.log.kernels.size()),
                                    details));
  }

  // link_gate
  {
    stage_timer timer(stage_id::link_gate);
    auto findings = build::check_linkage_of(built.shared_object);
    if (!findings) return findings.err().with_context("link gate");
    if (!findings->empty()) {
      v.gate_findings = *findings;
      const auto& f = findings->front();
      v.stages.push_back(timer.finish(stage_outcome::failed, fmt::format("{}: {}", f.rule, f.message), findings_json(*findings)));
      decide(v, stage_id::link_gate, eval_outcome::rejected,
             fmt::format("rejected by the link gate ({}: {})", f.rule, f.excerpt), findings_text(*findings));
      return stopped;
    }
    // The entry point: exported at all, and for the task's tensors (a file that exports nothing
    // would otherwise count as "built" although it can never run).
    const std::string symbol = candidate.entry_symbol();
    auto exported = build::read_entry_export(built.shared_object, symbol);
    if (!exported) return exported.err().with_context("link gate");
    if (auto problem = build::check_entry_export(*exported, symbol, t.def)) {
      v.stages.push_back(timer.finish(stage_outcome::failed, problem->message));
      decide(v, stage_id::link_gate, problem->outcome, problem->message);
      return stopped;
    }
    v.stages.push_back(timer.finish(
        stage_outcome::passed,
        fmt::format("links only the CUDA runtime/driver and the C/C++ runtime; exports {} (kernel ABI {})", symbol,
                    exported->has_signature ? fmt::format("v{}, {} tensors", exported->signature_abi, exported->dtypes.size())
                                            : std::string("v1 or unrecorded signature"))));
  }

  // static_sass
  if (auto st = run_static_sass_stage(built, target, config.cuda_root, v); !st) return st.err();
  return std::optional<build::build_result>{std::move(built)};
}

std::vector<fs::path> candidate_include_dirs(const fs::path& root, const target_info& target) {
  std::vector<fs::path> dirs = {root / "include"};
  for (const auto& pack : {fs::path("common"), fs::path(target.pack)})
    if (fs::is_directory(root / "packs" / pack / "include")) dirs.push_back(root / "packs" / pack / "include");
  if (fs::is_directory(root / "packs" / "common" / "include" / "ptxkit"))
    dirs.push_back(root / "packs" / "common" / "include" / "ptxkit");
  return dirs;
}

}  // namespace ptxbench::eval
