#pragma once
// TEST-ONLY evaluator (`ptxbench run --evaluator fake`): decides a verdict from markers in the kernel
// source instead of building and running it, so the agent loop, resume and kill-safety can be
// tested on any machine in milliseconds. Its verdicts are made up; never use it for results.
//
// Markers (first match wins): FAKE_INFRA_ERROR -> infrastructure error (no verdict);
// "cublas"/"cudnn" (any case) -> source-gate rejection; "#error" or FAKE_COMPILE_ERROR -> build
// failure; without --gpu only "built"; FAKE_RUNTIME_ERROR, FAKE_TIMEOUT, FAKE_WRONG_SHAPE,
// FAKE_WRONG_DTYPE, FAKE_WRONG -> those statuses; otherwise PASSED with speedup FAKE_SPEEDUP=<x> (default 0.85), target instructions
// executed when the source mentions "wgmma".

#include <memory>

#include "suite/task.h"
#include "verdict/evaluator.h"

namespace ptxbench::eval {

/// Returns the fake evaluator. `delay_ms` makes each evaluation take that long (to test kills
/// mid-sweep).
std::unique_ptr<evaluator> make_fake_evaluator(int delay_ms);

}  // namespace ptxbench::eval
