#pragma once
// Running a child program (nvcc, cuobjdump, compute-sanitizer, the GPU harness) without a shell:
// an argv vector, its own process group so a timeout kills everything it started, capped output,
// and an exit description a person can read.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench {

struct process_spec {
  std::vector<std::string> argv;                                   ///< argv[0] is a path or a PATH name
  std::vector<std::pair<std::string, std::string>> env_overrides;  ///< set on top of the inherited environment
  std::vector<std::string> env_unset;                              ///< removed from the inherited environment
  std::filesystem::path cwd;                                       ///< empty: inherit
  double timeout_s = 0;                                            ///< 0: no limit
  std::size_t max_output_bytes = 16u << 20;                        ///< per stream; the rest is dropped
  bool merge_stderr = false;                                       ///< stderr into the stdout capture
};

struct process_result {
  bool started = false;      ///< false: could not be started (see start_error)
  std::string start_error;
  int exit_code = -1;        ///< valid when signal == 0 and started
  int signal = 0;            ///< the signal that ended it, if any
  bool timed_out = false;    ///< killed because timeout_s passed
  std::string out, err;
  bool out_truncated = false, err_truncated = false;
  double wall_s = 0;

  [[nodiscard]] bool succeeded() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

/// Runs the program to completion (or until its timeout) and returns what happened. Never throws for
/// a failing child; a child that cannot be started is reported in the result.
process_result run_process(const process_spec& spec);

/// Returns e.g. "exited with code 2", "killed by signal SIGSEGV (Segmentation fault)",
/// "timed out after 30 s", or "could not start: ...".
std::string describe_exit(const process_result& r, double timeout_s = 0);

/// Returns the name of a signal ("SIGSEGV") or "signal N".
std::string signal_name(int sig);

/// Finds an executable by name in extra_dirs first, then in PATH.
std::optional<std::filesystem::path> find_executable(const std::string& name,
                                                      const std::vector<std::filesystem::path>& extra_dirs = {});

}  // namespace ptxbench
