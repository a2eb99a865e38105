#include "adapt/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ptxbench::adapt {

result<std::unique_ptr<dir_lock>> dir_lock::acquire(const std::filesystem::path& dir, const std::string& name,
                                                    const std::string& who) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto path = dir / name;
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return make_error(fmt::format("{} is in use by another `{}` (wait for it, or stop it first)", dir.string(), who));
  }
  return std::unique_ptr<dir_lock>(new dir_lock(fd));
}

dir_lock::~dir_lock() { ::close(m_fd); }

}  // namespace ptxbench::adapt
