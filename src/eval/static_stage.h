#pragma once
// The static SASS stage: disassemble the very artifact that was built and count the instruction
// families per kernel. Presence in SASS is necessary, not sufficient: only the GPU's dynamic check
// says whether the instructions ran.

#include <filesystem>

#include "build/build_stage.h"
#include "core/result.h"
#include "suite/task.h"
#include "verdict/verdict.h"

namespace ptxbench::eval {

/// Disassembles `built` (cuobjdump from cuda_root or PATH) and fills v.targets' static counts and a
/// stage record. Without a disassembler the stage is "deferred" (never "passed"). An error means the
/// disassembler ran but its output could not be used.
status run_static_sass_stage(const build::build_result& built, const target_info& target,
                             const std::filesystem::path& cuda_root, verdict& v);

}  // namespace ptxbench::eval
