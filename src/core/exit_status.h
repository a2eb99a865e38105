#pragma once
// Process exit codes of every ptxbench subcommand (docs/cli.md lists them).

namespace ptxbench {

enum class exit_status : int {
  ok = 0,                 ///< the candidate passed every stage that ran (and is target-correct where checked)
  candidate_failed = 1,   ///< the candidate was rejected or failed a stage (gate, build, correctness ...)
  usage = 2,              ///< bad arguments or bad input files (unknown task, malformed JSON ...)
  infra = 3,              ///< the tool could not do its job (nvcc missing, GPU lost, harness crashed)
  not_target_correct = 4, ///< correct (or built), but the required instruction family is absent or did not run
  interrupted = 130,
};

inline int to_int(exit_status s) { return static_cast<int>(s); }

}  // namespace ptxbench
