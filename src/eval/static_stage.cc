#include "eval/static_stage.h"

#include <fmt/format.h>

#include "core/file_io.h"
#include "sass/disassembler.h"
#include "sass/sass_parser.h"
#include "sass/static_check.h"
#include "verdict/stage_timer.h"

namespace ptxbench::eval {

status run_static_sass_stage(const build::build_result& built, const target_info& target,
                             const std::filesystem::path& cuda_root, verdict& v) {
  stage_timer timer(stage_id::static_sass);
  sass::disassembler_options opts;
  opts.cuda_root = cuda_root;
  // The listing of a cached build is kept beside its object (the build cache's entry is
  // content-addressed and checked on reuse): a cached evaluation does not run cuobjdump again.
  const std::filesystem::path kept = built.dir.empty() ? std::filesystem::path() : built.dir / "sass.cuobjdump.txt";
  sass::disassembly dis;
  if (auto text = kept.empty() ? result<std::string>(make_error("")) : read_text_file(kept, opts.max_output_bytes);
      text && !text->empty()) {
    dis.state = sass::disassembly_state::ok;
    dis.text = std::move(*text);
    dis.tool_path = kept;
  } else {
    dis = sass::disassemble(built.shared_object, opts);
    if (dis.ok() && !kept.empty()) (void)write_file_atomic(kept, dis.text);
  }
  if (dis.state == sass::disassembly_state::tool_missing) {
    v.targets.verdict = target_verdict::deferred;
    v.targets.reason = "static SASS check deferred to the GPU host: no cuobjdump on this machine";
    v.stages.push_back(timer.finish(stage_outcome::deferred, v.targets.reason));
    return ok();
  }
  if (!dis.ok()) {
    v.stages.push_back(timer.finish(stage_outcome::error, fmt::format("cuobjdump {}: {}", sass::state_name(dis.state), dis.message)));
    return make_error(fmt::format("static SASS: cuobjdump {}: {}", sass::state_name(dis.state), dis.message));
  }
  auto functions = sass::parse_sass(dis.text);
  if (!functions) return functions.err().with_context("static SASS");
  auto check = sass::static_check(*functions, {target.required_families, target.arch});
  if (!check) return check.err().with_context("static SASS");

  v.targets.static_counts = check->total;
  for (const auto& k : check->kernels) v.targets.static_per_kernel[k.name] = k.families;
  ordered_json details = {{"tool", dis.tool_path.string()}, {"functions", check->kernels.size()}};
  if (check->required_present) {
    // Present is necessary, not sufficient: the verdict stays open until the dynamic check.
    v.targets.verdict = target_verdict::deferred;
    v.targets.reason = "present in SASS (" + check->reason + "); whether it executes is decided on the GPU";
    v.stages.push_back(timer.finish(stage_outcome::passed, check->reason, details));
  } else {
    v.targets.verdict = target_verdict::absent_in_sass;
    v.targets.reason = check->reason;
    v.stages.push_back(timer.finish(stage_outcome::failed, check->reason, details));
  }
  return ok();
}

}  // namespace ptxbench::eval

namespace ptxbench::eval {

status run_static_sass_on_cubins(const std::vector<std::filesystem::path>& cubins, const target_info& target,
                                 const std::filesystem::path& cuda_root, verdict& v) {
  stage_timer timer(stage_id::static_sass);
  auto replace = [&v](stage_record record) {
    for (auto& s : v.stages)
      if (s.id == stage_id::static_sass) {
        s = std::move(record);
        return;
      }
    v.stages.push_back(std::move(record));
  };
  if (cubins.empty()) {
    std::string why = "no cubin to check: the candidate's runner compiled no Triton kernel";
    if (v.targets.verdict == target_verdict::deferred && !v.passed()) v.targets.reason = "not established: " + why;
    replace(timer.finish(stage_outcome::deferred, why));
    return ok();
  }
  sass::disassembler_options opts;
  opts.cuda_root = cuda_root;
  std::string text;
  std::vector<std::string> files;
  for (const auto& cubin : cubins) {
    auto dis = sass::disassemble(cubin, opts);
    if (dis.state == sass::disassembly_state::tool_missing) {
      std::string why = "no cuobjdump on this machine: the cubins Triton compiled were not disassembled";
      replace(timer.finish(stage_outcome::deferred, why, {{"cubins", cubins.size()}}));
      return ok();
    }
    if (!dis.ok()) {
      replace(timer.finish(stage_outcome::error, fmt::format("cuobjdump {}: {}", sass::state_name(dis.state), dis.message)));
      return make_error(fmt::format("static SASS of {}: cuobjdump {}: {}", cubin.filename().string(),
                                    sass::state_name(dis.state), dis.message));
    }
    text += dis.text;
    text += '\n';
    files.push_back(cubin.filename().string());
  }
  auto functions = sass::parse_sass(text);
  if (!functions) return functions.err().with_context("static SASS of the Triton cubins");
  auto check = sass::static_check(*functions, {target.required_families, target.arch});
  if (!check) return check.err().with_context("static SASS of the Triton cubins");
  v.targets.static_counts = check->total;
  v.targets.reason = check->reason;  // decide_target_verdict keeps it for "absent", replaces it otherwise
  v.targets.static_per_kernel.clear();
  for (const auto& k : check->kernels)  // specialisations of one kernel share its name: their counts add up
    for (const auto& [fam, n] : k.families) v.targets.static_per_kernel[k.name][fam] += n;
  ordered_json details = {{"tool", "cuobjdump"}, {"cubins", files}, {"functions", check->kernels.size()},
                          {"source", "the cubins Triton wrote during the warm-up"}};
  replace(timer.finish(check->required_present ? stage_outcome::passed : stage_outcome::failed,
                       "Triton's cubins: " + check->reason, details));
  return ok();
}

}  // namespace ptxbench::eval
