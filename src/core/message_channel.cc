#include "core/message_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>

namespace ptxbench {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_max_message = 4u << 20;

result<sockaddr_un> make_address(const fs::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string p = path.string();
  if (p.size() >= sizeof(addr.sun_path)) return make_error(fmt::format("socket path too long: {}", p));
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  return addr;
}

// Waits for fd to become readable; returns 1 ready, 0 timeout, -1 error.
int wait_readable(int fd, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int ms = -1;
    if (timeout_s >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      ms = static_cast<int>(std::max<long long>(0, left.count()));
    }
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    return n > 0 ? 1 : 0;
  }
}

}  // namespace

message_channel::~message_channel() { close(); }

message_channel::message_channel(message_channel&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }

message_channel& message_channel::operator=(message_channel&& other) noexcept {
  if (this != &other) {
    close();
    m_fd = other.m_fd;
    other.m_fd = -1;
  }
  return *this;
}

void message_channel::close() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
}

result<message_channel> message_channel::connect(const fs::path& path) {
  auto addr = make_address(path);
  if (!addr) return addr.err();
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof(sockaddr_un)) != 0) {
    int e = errno;
    ::close(fd);
    return make_error(fmt::format("connect {}: {}", path.string(), std::strerror(e)));
  }
  return message_channel(fd);
}

status message_channel::send(const ordered_json& message) {
  if (m_fd < 0) return make_error("channel is closed");
  std::string text = message.dump();
  if (text.size() > k_max_message) return make_error("message too large");
  ssize_t n;
  do {
    n = ::send(m_fd, text.data(), text.size(), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return make_error(fmt::format("send: {}", std::strerror(errno)));
  return ok();
}

message_channel::received message_channel::receive(double timeout_s) {
  received r;
  if (m_fd < 0) {
    r.kind = receive_kind::closed;
    return r;
  }
  int ready = wait_readable(m_fd, timeout_s);
  if (ready == 0) { r.kind = receive_kind::timeout; return r; }
  if (ready < 0) { r.error = std::strerror(errno); return r; }
  std::vector<char> buf(k_max_message);
  ssize_t n;
  do {
    n = ::recv(m_fd, buf.data(), buf.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n == 0) { r.kind = receive_kind::closed; return r; }
  if (n < 0) {
    if (errno == ECONNRESET) { r.kind = receive_kind::closed; return r; }
    r.error = std::strerror(errno);
    return r;
  }
  auto j = parse_json(std::string(buf.data(), static_cast<std::size_t>(n)), "message");
  if (!j) { r.error = j.err().message; return r; }
  r.kind = receive_kind::message;
  r.message = std::move(*j);
  return r;
}

message_listener::~message_listener() {
  if (m_fd >= 0) ::close(m_fd);
  std::error_code ec;
  if (!m_dir.empty()) fs::remove_all(m_dir, ec);
}

status message_listener::listen(const fs::path& parent) {
  std::random_device rd;
  m_dir = parent / fmt::format("ptxbench-ipc-{:x}{:x}", rd(), rd());
  std::error_code ec;
  fs::create_directories(m_dir, ec);
  if (ec) return make_error(fmt::format("cannot create {}: {}", m_dir.string(), ec.message()));
  ::chmod(m_dir.c_str(), 0700);
  m_path = m_dir / "s";
  auto addr = make_address(m_path);
  if (!addr) return addr.err();
  m_fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (m_fd < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  if (::bind(m_fd, reinterpret_cast<sockaddr*>(&*addr), sizeof(sockaddr_un)) != 0 || ::listen(m_fd, 4) != 0)
    return make_error(fmt::format("listen {}: {}", m_path.string(), std::strerror(errno)));
  return ok();
}

result<message_listener::accepted> message_listener::accept(double timeout_s) {
  int ready = wait_readable(m_fd, timeout_s);
  if (ready == 0) return make_error("no connection within the time limit");
  if (ready < 0) return make_error(fmt::format("poll: {}", std::strerror(errno)));
  int fd = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("accept: {}", std::strerror(errno)));
  ucred cred{};
  socklen_t len = sizeof cred;
  accepted a;
  a.channel = message_channel(fd);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) a.peer_pid = cred.pid;
  return a;
}

}  // namespace ptxbench
