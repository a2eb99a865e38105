#include "core/line_channel.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace ptxbench {

result<line_reader::read_result> line_reader::read_line(double timeout_s) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  for (;;) {
    if (auto nl = m_buffer.find('\n'); nl != std::string::npos) {
      if (m_skipping) {  // the end of an overlong line
        m_skipping = false;
        m_buffer.erase(0, nl + 1);
        return read_result{read_kind::overlong, ""};
      }
      if (m_forgiving && nl > m_max) {
        m_buffer.erase(0, nl + 1);
        return read_result{read_kind::overlong, ""};
      }
      read_result out{read_kind::line, m_buffer.substr(0, nl)};
      m_buffer.erase(0, nl + 1);
      return out;
    }
    if (m_buffer.size() > m_max) {
      if (!m_forgiving) return make_error(fmt::format("a message line is longer than {} bytes", m_max));
      m_skipping = true;
      m_buffer.clear();
    }
    if (m_closed) {
      if (m_forgiving && m_skipping) {
        m_skipping = false;
        return read_result{read_kind::overlong, ""};
      }
      if (m_forgiving && !m_buffer.empty()) return read_result{read_kind::line, std::exchange(m_buffer, std::string())};
      return read_result{read_kind::closed, ""};
    }
    int wait_ms = -1;
    if (timeout_s >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) return read_result{read_kind::timeout, ""};
      wait_ms = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    pollfd p{m_fd, POLLIN, 0};
    int n = ::poll(&p, 1, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(std::string("poll: ") + std::strerror(errno));
    }
    if (n == 0) continue;  // the deadline check above answers
    char chunk[65536];
    ssize_t got = ::read(m_fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return make_error(std::string("read: ") + std::strerror(errno));
    }
    if (got == 0) {
      m_closed = true;
      continue;  // what is left in the buffer is answered above
    }
    if (m_skipping) {  // drop the overlong line's bytes as they come, keeping what follows its newline
      const char* nl = static_cast<const char*>(std::memchr(chunk, '\n', static_cast<std::size_t>(got)));
      if (!nl) continue;
      m_buffer.assign(nl, chunk + got - nl);  // keeps the newline, so the branch above ends the skip
      continue;
    }
    m_buffer.append(chunk, static_cast<std::size_t>(got));
  }
}

status write_line(int fd, std::string_view text) {
  std::string data(text);
  data += '\n';
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(std::string("write: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return ok();
}

}  // namespace ptxbench
