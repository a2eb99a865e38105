#pragma once
// Newline-delimited messages over a pipe: how a GPU worker talks to its long-lived harness
// (`ptxbench-harness --serve-fds`). One JSON document per line; a reader waits with a deadline, so a
// harness that hangs never hangs its worker. Both ends are ours (no untrusted writer), but lines are
// still capped so a bug cannot exhaust memory.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ptxbench {

class line_reader {
 public:
  /// `forgiving`: for a writer we do not control (an MCP client on stdin). A line longer than the
  /// cap is skipped up to its newline and reported as `overlong` (reading goes on), and a last line
  /// without a newline is returned before `closed`. Otherwise both are what the harness protocol
  /// never produces: an overlong line is an error and a torn last line is dropped.
  explicit line_reader(int fd, std::size_t max_line_bytes = 64u << 20, bool forgiving = false)
      : m_fd(fd), m_max(max_line_bytes), m_forgiving(forgiving) {}

  enum class read_kind { line, timeout, closed, overlong };
  struct read_result {
    read_kind kind = read_kind::closed;
    std::string line;  ///< without the newline
  };
  /// Waits up to timeout_s (negative: forever) for one line. An error: the line is too long or the
  /// descriptor failed.
  result<read_result> read_line(double timeout_s);

 private:
  int m_fd;
  std::size_t m_max;
  bool m_forgiving;
  bool m_skipping = false;  ///< forgiving: inside an overlong line, dropping bytes up to its newline
  bool m_closed = false;
  std::string m_buffer;
};

/// Writes text and a newline, all of it (retrying short writes). Fails when the reader is gone.
status write_line(int fd, std::string_view text);

}  // namespace ptxbench
