#pragma once
// How a refused system call becomes a verdict. The seccomp filter answers a forbidden call with
// SIGSYS; the handler installed here writes one line, "ptxbench-sandbox: attempted execve", to a
// file descriptor the harness reads (the runner's log) and ends the process with a dedicated exit
// code. The harness finds the line (find_violation) and reports RUNTIME_ERROR "sandbox: attempted
// execve". The same handler reports SIGXFSZ (the file size limit).
//
// A candidate can write such a line itself or end with the same code; that only fails its own
// evaluation. It cannot replace the handler (rt_sigaction(SIGSYS) is itself trapped); if it blocks
// SIGSYS the kernel kills the process with SIGSYS instead, which the harness reports as well.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ptxbench::sandbox {

/// The runner's exit status after a violation (unused by the runner and the tools otherwise).
inline constexpr int violation_exit_code = 86;
/// Every violation line starts with this.
inline constexpr std::string_view violation_marker = "ptxbench-sandbox: ";

/// Remembers the name of a system call the filter traps, so the handler can name it without
/// allocating (the handler runs in signal context). Call before the filter is loaded.
void register_trapped_syscall(int nr, const char* name);

/// Installs the SIGSYS and SIGXFSZ handlers writing to fd. file_size_limit only goes into the text.
status install_violation_handlers(int fd, uint64_t file_size_limit);

/// Formats the violation line for system call nr with its six argument registers, without
/// allocating (async-signal-safe). Returns the length written (always ends with '\n').
std::size_t format_violation(char* buf, std::size_t cap, int nr, const uint64_t args[6]);

/// Harness side: the last violation in a runner's output, as "sandbox: attempted execve";
/// nullopt when there is none.
std::optional<std::string> find_violation(std::string_view output);

}  // namespace ptxbench::sandbox
