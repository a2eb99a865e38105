#include "eval/static_stage.h"

#include <fmt/format.h>

#include "core/process.h"
#include "eval/stage_timer.h"

namespace ptxbench::eval {

status run_static_sass_stage(const build::build_result& built, const target_info& target,
                             const std::filesystem::path& cuda_root, verdict& v) {
  stage_timer timer(stage_id::static_sass);
  (void)built;
  auto tool = find_executable("cuobjdump", {cuda_root / "bin"});
  if (!tool) {
    v.targets.verdict = target_verdict::deferred;
    v.targets.reason = "static SASS check deferred to the GPU host: no cuobjdump on this machine";
    timer.finish(v, stage_outcome::deferred, v.targets.reason);
    return ok();
  }
  (void)target;
  return make_error("static SASS parsing is not integrated yet");
}

}  // namespace ptxbench::eval
