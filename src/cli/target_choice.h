#pragma once
// Which suite target a command evaluates for. Named with --target, it is used as given (and, for a
// run on the local GPU, checked against that GPU); left out, it is the local GPU's target, so an H100
// host evaluates for h100 and an H200 host for h200. Without a GPU to ask (check, --cpu-only, a
// remote evaluator), the fallback.

#include <filesystem>
#include <string>

#include "core/result.h"
#include "suite/task.h"

namespace ptxbench::cli {

/// The fallback target where no local GPU decides (the CPU stages are the same for h100 and h200).
inline constexpr const char* k_cpu_default_target = "h200";

struct target_question {
  std::string given;                ///< --target, "" when left out
  bool on_local_gpu = false;        ///< the GPU stages run here (eval, run without --cpu-only)
  int device = 0;
  std::filesystem::path harness;    ///< the harness that can probe the device
};

/// The target's name, or a one-line error (an unknown name is left to the caller's own check).
result<std::string> choose_target(const suite& s, const target_question& q);

}  // namespace ptxbench::cli
