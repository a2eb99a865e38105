#pragma once
// The CPU stages of a Triton candidate (spec.language "triton", one Python file kernel.py whose
// run(...) takes the task's inputs then outputs as torch tensors; docs/kernel-abi.md, "Triton
// candidates"). The stage names stay the pipeline's, with what each means for Python:
//   source_gate  the Python gate (src/triton_gate: Python's own ast, an allowlist of torch
//                operations); each rejection names its rule and line; outcome `rejected`
//   build        no nvcc: a byte-compile check of the file (compile(), never import) in a confined
//                child process; the artifact is the source itself, stored content-addressed, and
//                its sha256
//   link_gate    deferred: on the GPU host the harness captures run() in a sandbox, turns the capture
//                into a launch plan and requires every kernel to recompile from kernel.py to the same
//                cubin (kernel provenance, gpu/harness/stage_triton_plan.cc); the plan is then replayed
//                by the C++ runner with no Python in the process
//   static_sass  deferred: Triton compiles on the GPU; the verified cubins of the plan are
//                disassembled after the GPU stages (eval/harness_session.cc)

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "build/build_stage.h"
#include "core/result.h"
#include "eval/pipeline.h"
#include "suite/definition.h"
#include "suite/solution.h"
#include "suite/task.h"
#include "verdict/verdict.h"

namespace ptxbench::eval {

/// What the static_sass stage and the target verdict say for a Triton candidate before the GPU.
inline constexpr const char* k_triton_static_deferred = "Triton compiles on the GPU; checked after warm-up";

/// True for a Solution written in Triton (spec.language == "triton").
bool is_triton(const solution& s);

/// Wraps one Triton file as a Solution for a task: source "kernel.py" (whatever the file is called
/// on disk), entry "kernel.py::run", language "triton", destination-passing.
solution solution_for_triton_file(const std::string& file_name, const std::string& content, const task& t,
                                  const target_info& target);

/// The python3 that runs Triton candidates (the gate, the byte-compile check and, on the GPU host,
/// the runner, which needs torch and Triton): config.python, else $PTXBENCH_PYTHON, else python3 on
/// PATH; nullopt when none is found.
std::optional<std::filesystem::path> triton_python(const pipeline_config& config);

/// Positions of the definition's scalar parameters (shape null) among inputs then outputs: the
/// gate then knows every other parameter of run(...) is a tensor.
std::vector<int> scalar_positions(const definition& d);

/// Runs the Triton candidate's CPU stages and fills `v`, like run_cpu_stages. The build result's
/// shared_object is the stored kernel.py (what the runner imports), its key the source's sha256.
result<std::optional<build::build_result>> run_triton_cpu_stages(const task& t, const target_info& target,
                                                                 const solution& candidate,
                                                                 const pipeline_config& config, verdict& v);

}  // namespace ptxbench::eval
