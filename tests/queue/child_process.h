#pragma once
// Starting and killing helper processes in tests (fake workers, the PostgreSQL server): fork + exec
// with output appended to a log file, optionally in a new process group and as another user.
// core/process.h runs a child to completion; these tests need children that run in the background
// and get SIGKILLed at arbitrary moments.

#include <sys/types.h>

#include <csignal>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::testing {

struct run_as_user {
  uid_t uid;
  gid_t gid;
};

/// Starts argv[0] (a path) with stdout and stderr appended to `log`; returns its pid (-1 on failure).
/// parent_death_signal: sent to the child when the thread that spawned it ends (a crashed test run
/// must not leave servers behind), so spawn long-lived children from the test's main thread.
pid_t spawn_process(const std::vector<std::string>& argv, const std::filesystem::path& log, bool new_group = false,
                    std::optional<run_as_user> as_user = std::nullopt, int parent_death_signal = SIGKILL);

/// Sends sig, then waits for the child and returns its wait status.
int kill_and_reap(pid_t pid, int sig);

/// Waits up to timeout_ms for the child; returns true (and its status) when it has exited.
bool reap_within(pid_t pid, int timeout_ms, int* wait_status = nullptr);

}  // namespace ptxbench::testing
