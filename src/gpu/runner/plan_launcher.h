#pragma once
// The runner's replay of a launch plan (gpu/common/launch_plan.h): a Triton candidate evaluated with
// no Python in the process. The plan's cubins — each one recompiled by the trusted side and found
// byte-identical to what the candidate's capture recorded — are loaded with the driver API before the
// sandbox goes on (loading a module runs no host code), and every call launches the plan's steps on
// the call's stream with the call's tensors bound into the parameters. The plan then looks like any
// candidate's entry point to the rest of the runner: the same calls, launch audit and timing.

#include <string>

#include "core/result.h"
#include "ptxbench/abi.h"

namespace ptxbench::gpu {

/// Loads the plan file and its cubins into the current context. An error is the harness's problem
/// (it wrote and verified the plan) or a cubin the driver refuses.
status load_plan(const std::string& plan_file);

/// The entry point of the loaded plan (kernel ABI version 2): launches every step on `stream`. A
/// call with the wrong number of tensors is an argument-count error; a driver error is an
/// exception-kind error with the driver's message.
int32_t plan_entry(const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream, const char** message);

}  // namespace ptxbench::gpu
