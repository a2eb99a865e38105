#include "core/input_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/file_io.h"

namespace ptxbench {
namespace {

// Reads a pipe or FIFO through poll(), so a silent writer (or none at all: a FIFO opened without
// blocking has no writer until one connects, and Linux reports no hang-up before one has come and
// gone) costs at most wait_s seconds per silence, never a hang.
result<std::string> read_stream(int fd, const std::string& shown, std::size_t max_bytes, double wait_s) {
  std::string out;
  char buf[1 << 16];
  const int wait_ms = static_cast<int>(std::min(std::ceil(wait_s * 1000), 2e9));
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, wait_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return make_error(fmt::format("{}: cannot wait for data: {}", shown, std::strerror(errno)));
    }
    if (r == 0)
      return make_error(fmt::format("{}: no data for {:g} s{} (is anything writing to it?); start the writer first, or "
                                    "give a file",
                                    shown, wait_s, out.empty() ? "" : fmt::format(" after {} bytes", out.size())));
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return make_error(fmt::format("{}: read failed: {}", shown, std::strerror(errno)));
    }
    if (n == 0) return out;  // the writer closed it
    if (out.size() + static_cast<std::size_t>(n) > max_bytes)
      return make_error(fmt::format("{}: more than {}, over the limit", shown, human_bytes(max_bytes)));
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "is a directory, expected a file or a stream";
  if (S_ISSOCK(m)) return "is a socket; give a file, a pipe or '-' for standard input";
  if (S_ISCHR(m) || S_ISBLK(m)) return "is a device; give a file, a pipe or '-' for standard input";
  return "is not a regular file or a pipe";
}

}  // namespace

result<std::string> read_input(const std::string& path, std::size_t max_bytes, double wait_s) {
  const bool dash = path == "-";
  const std::string shown = dash ? "standard input" : path;
  struct stat st {};
  if (dash ? ::fstat(STDIN_FILENO, &st) != 0 : ::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return make_error(fmt::format("{}: no such file", shown));
    return make_error(fmt::format("{}: {}", shown, std::strerror(errno)));
  }
  if (S_ISREG(st.st_mode) && !dash) return read_file(path, max_bytes);
  if ((dash || S_ISCHR(st.st_mode)) && isatty(STDIN_FILENO) && (dash || path == "/dev/stdin"))
    return make_error("standard input is a terminal; pipe the input in, or give a file");
  if (!S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode)) return make_error(fmt::format("{}: {}", shown, kind_of(st.st_mode)));
  // A FIFO is opened without blocking: a blocking open would wait for a writer with no time limit.
  int fd = dash ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("{}: cannot open: {}", shown, std::strerror(errno)));
  // Standard input redirected from a file is always readable: only a pipe can keep us waiting.
  auto text = read_stream(fd, shown, max_bytes, S_ISREG(st.st_mode) ? 1e9 : wait_s);
  ::close(fd);
  return text;
}

}  // namespace ptxbench
