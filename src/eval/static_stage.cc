#include "eval/static_stage.h"

#include <fmt/format.h>

#include "verdict/stage_timer.h"
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
  auto dis = sass::disassemble(built.shared_object, opts);
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
