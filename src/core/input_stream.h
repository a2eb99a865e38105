#pragma once
// Reading an input that may be a stream: "-" (standard input), /dev/stdin, a pipe, process
// substitution (/dev/fd/N) or a named FIFO, as well as a regular file. A stream is read until its
// writer closes it, but never waited on forever: when no data arrives for `wait_s` seconds (a FIFO
// nobody writes to, a writer that stalls) the read gives up with a message saying so. Anything that
// is neither a regular file nor a pipe (a folder, a socket, a terminal, a device) is refused.

#include <cstddef>
#include <string>

#include "core/result.h"

namespace ptxbench {

/// Reads a whole file or stream. `path` "-" is standard input. Fails (one line, naming the path)
/// for a missing path, a folder, a socket, a terminal or another device, a stream silent for
/// `wait_s` seconds, or more than `max_bytes`.
result<std::string> read_input(const std::string& path, std::size_t max_bytes, double wait_s);

}  // namespace ptxbench
