#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace ptxbench {

result<file_lock> file_lock::acquire(const std::filesystem::path& path, double wait_s, lock_mode mode) {
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
  int open_errno = errno;
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // another user's lock file: flock needs no write access
  if (fd < 0) return make_error(fmt::format("cannot open the lock file {}: {}", path.string(), std::strerror(open_errno)));
  (void)::fchmod(fd, 0666);  // the umask took bits away; only the creator may put them back, and that is enough
  const int operation = mode == lock_mode::exclusive ? LOCK_EX : LOCK_SH;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  // Polling with LOCK_NB rather than a blocking flock: the wait stays bounded.
  while (::flock(fd, operation | LOCK_NB) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return make_error(fmt::format("{} is locked by another process ({:g} s waited)", path.string(), wait_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (mode == lock_mode::exclusive) {
    // The holder's pid, for a person looking at the file; the lock itself is what counts.
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) {
      ssize_t written = ::write(fd, pid.data(), pid.size());
      (void)written;
    }
  }
  return file_lock(fd);
}

result<file_lock> file_lock::hold_directory(const std::filesystem::path& dir, const std::string& name,
                                            const std::string& who) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto path = dir / name;
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  ::close(fd);
  auto lock = acquire(path, 0);
  if (!lock) return make_error(fmt::format("{} is in use by another `{}` (wait for it, or stop it first)", dir.string(), who));
  return std::move(*lock);
}

bool file_lock::held(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);  // drops the lock just taken, if it was taken
  return busy;
}

file_lock::file_lock(file_lock&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }

file_lock& file_lock::operator=(file_lock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = other.m_fd;
    other.m_fd = -1;
  }
  return *this;
}

file_lock::~file_lock() {
  if (m_fd >= 0) ::close(m_fd);
}

}  // namespace ptxbench
