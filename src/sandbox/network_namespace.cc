#include "sandbox/network_namespace.h"

#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace ptxbench::sandbox {

protection enter_network_namespace() {
  protection p;
  if (::unshare(CLONE_NEWNET) != 0) {
    p.reason = errno == EPERM
                   ? "unshare(CLONE_NEWNET) needs CAP_SYS_ADMIN (the runner is not root), and a user namespace "
                     "cannot be entered once CUDA has started threads; the system call filter still refuses "
                     "every socket"
                   : fmt::format("unshare(CLONE_NEWNET) failed: {}", std::strerror(errno));
    return p;
  }
  std::error_code ec;
  int threads = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec))
    ++threads;
  p.active = true;
  p.detail = threads > 1 ? fmt::format("the calling thread and the threads it creates (no interface but a down "
                                       "loopback); {} thread(s) that existed before stay in the host's namespace",
                                       threads - 1)
                         : "the whole process (no interface but a down loopback)";
  return p;
}

int enter_private_network(bool loopback_up) noexcept {
  if (::unshare(CLONE_NEWNET) != 0) return errno;
  if (!loopback_up) return 0;
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, "lo", 3);
  int rc = ::ioctl(s, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    rc = ::ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  int err = rc == 0 ? 0 : errno;
  ::close(s);
  return err;
}

}  // namespace ptxbench::sandbox
