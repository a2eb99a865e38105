#include "eval/gpu_stage.h"

namespace ptxbench::eval {

status run_gpu_stages(const task&, const target_info&, const build::build_result&, const pipeline_config&, verdict&) {
  return make_error("the GPU stages are not available in this build");
}

}  // namespace ptxbench::eval
