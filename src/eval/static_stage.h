#pragma once
// The static SASS stage: disassemble the very artifact that was built and count the instruction
// families per kernel. Presence in SASS is necessary, not sufficient: only the GPU's dynamic check
// says whether the instructions ran.

#include <filesystem>
#include <vector>

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

/// The static SASS stage of a Triton candidate, run after the GPU stages on the cubins Triton wrote
/// during the candidate's warm-up (harness result jit_cubins): the same disassembler, parser and
/// family check as for a built object, over every cubin. It replaces the "deferred" record the CPU
/// stages left. No cubins (the candidate failed before compiling): the record stays deferred with
/// that reason. An error means cuobjdump ran but its output could not be used.
status run_static_sass_on_cubins(const std::vector<std::filesystem::path>& cubins, const target_info& target,
                                 const std::filesystem::path& cuda_root, verdict& v);

}  // namespace ptxbench::eval
