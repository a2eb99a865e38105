#pragma once
// Starting a long-lived child in the background (a worker under `ptxbench serve`, a GPU worker's
// harness): fork + exec without a shell, output appended to a log, selected pipe ends passed at fixed
// descriptor numbers, its own process group, and a parent-death signal so a SIGKILLed parent leaves
// nothing behind. core/process.h runs a child to completion; this one runs beside us.

#include <sys/types.h>

#include <csignal>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace ptxbench {

struct background_spec {
  std::vector<std::string> argv;            ///< argv[0] is a path
  std::filesystem::path log;                ///< stdout and stderr are appended here; empty: inherited
  std::vector<std::pair<int, int>> fds;     ///< (descriptor here, number in the child), e.g. a pipe end → 3
  bool new_group = true;                    ///< setsid(): a kill of the group reaches its children too
  int parent_death_signal = SIGKILL;        ///< sent to the child when this process ends (whichever thread
                                            ///< spawned it, and however long that thread lives); 0: none
};

/// Starts the child; its stdin is /dev/null. Only the listed descriptors are passed on (every other
/// descriptor this process opens is close-on-exec or closed in the child).
result<pid_t> spawn_background(const background_spec& spec);

/// The child's wait status if it has exited (reaped now), nullopt while it runs.
std::optional<int> reap_if_exited(pid_t pid);

/// Sends sig (to the group when the child leads one), waits up to grace_ms, then SIGKILLs the group;
/// returns the wait status.
int stop_child(pid_t pid, int sig, int grace_ms);

/// "exited with code 3" / "killed by signal SIGKILL (Killed)" for a wait status.
std::string describe_wait_status(int wait_status);

}  // namespace ptxbench
