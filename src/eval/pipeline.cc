#include "eval/pipeline.h"

#include <fmt/format.h>

#include "build/binding_includes.h"
#include "build/link_gate.h"
#include "build/toolchain.h"
#include "core/sha256.h"
#include "core/file_io.h"
#include "eval/stage_timer.h"
#include "eval/static_stage.h"

namespace ptxbench::eval {
namespace fs = std::filesystem;

void decide(verdict& v, stage_id stage, std::optional<eval_status> status, std::string outcome, std::string message,
            bool gpu_mode) {
  v.status = status;
  v.outcome = std::move(outcome);
  v.deciding_stage = std::string(stage_name(stage));
  v.message = std::move(message);
  if (v.targets.reason.empty())
    v.targets.reason = fmt::format("not established: the pipeline stopped at {}", stage_name(stage));
  stage_id last = gpu_mode ? stage_id::dynamic_check : stage_id::static_sass;
  for (int s = static_cast<int>(stage) + 1; s <= static_cast<int>(last); ++s) {
    auto id = static_cast<stage_id>(s);
    if (!v.stage(id)) v.stages.push_back({id, stage_outcome::skipped, 0, "not run: an earlier stage decided", nullptr});
  }
}

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

result<std::optional<build::build_result>> run_cpu_stages(const task&, const target_info& target,
                                                          const solution& candidate, const pipeline_config& config,
                                                          verdict& v) {
  const bool gpu_mode = v.mode == "eval";
  v.targets.target = target.name;
  v.targets.arch = target.arch;
  v.targets.required_families = target.required_families;

  // source_gate
  {
    stage_timer timer(stage_id::source_gate);
    auto findings = build::check_sources(candidate.sources, config.gate);
    if (!findings.empty()) {
      v.gate_findings = findings;
      v.log = findings_text(findings);
      const auto& f = findings.front();
      std::string where = f.line > 0 ? fmt::format("{}:{}", f.file, f.line) : f.file;
      timer.finish(v, stage_outcome::failed, fmt::format("{} at {}: {}", f.rule, where, f.message), findings_json(findings));
      decide(v, stage_id::source_gate, eval_status::COMPILE_ERROR, "rejected",
             fmt::format("rejected by the source gate ({} at {})", f.rule, where), gpu_mode);
      return std::optional<build::build_result>{};
    }
    timer.finish(v, stage_outcome::passed, fmt::format("{} source file(s), no vendor library, dynamic loading or "
                                                       "process spawning", candidate.sources.size()));
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
    req.include_dirs = {config.root / "include"};
    if (fs::is_directory(config.root / "packs" / target.pack / "include"))
      req.include_dirs.push_back(config.root / "packs" / target.pack / "include");
    auto binding = binding_of(candidate);  // an upstream (TVM-FFI) kernel builds against our compat headers
    if (!binding) {
      timer.finish(v, stage_outcome::failed, binding.err().message);
      decide(v, stage_id::build, eval_status::COMPILE_ERROR, "compile_error", binding.err().message, gpu_mode);
      return std::optional<build::build_result>{};
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
      v.log = built.log.text;
      std::string why = built.outcome == build::build_outcome::timeout
                            ? fmt::format("compilation timed out after {:g} s", config.compile_timeout_s)
                            : (built.log.errors.empty() ? std::string("nvcc failed") : built.log.errors.front());
      timer.finish(v, stage_outcome::failed, why, details);
      decide(v, stage_id::build, eval_status::COMPILE_ERROR, "compile_error", "compile error: " + why, gpu_mode);
      return std::optional<build::build_result>{};
    }
    timer.finish(v, stage_outcome::passed,
                 fmt::format("built for {}{} ({} kernel(s))", target.arch, built.cache_hit ? " (cache hit)" : "",
                             built.log.kernels.size()),
                 details);
  }

  // link_gate
  {
    stage_timer timer(stage_id::link_gate);
    auto findings = build::check_linkage_of(built.shared_object);
    if (!findings) return findings.err().with_context("link gate");
    if (!findings->empty()) {
      v.gate_findings = *findings;
      v.log = findings_text(*findings);
      const auto& f = findings->front();
      timer.finish(v, stage_outcome::failed, fmt::format("{}: {}", f.rule, f.message), findings_json(*findings));
      decide(v, stage_id::link_gate, eval_status::COMPILE_ERROR, "rejected",
             fmt::format("rejected by the link gate ({}: {})", f.rule, f.excerpt), gpu_mode);
      return std::optional<build::build_result>{};
    }
    timer.finish(v, stage_outcome::passed, "links only the CUDA runtime/driver and the C/C++ runtime");
  }

  // static_sass
  if (auto st = run_static_sass_stage(built, target, config.cuda_root, v); !st) return st.err();
  return std::optional<build::build_result>{std::move(built)};
}

}  // namespace ptxbench::eval
