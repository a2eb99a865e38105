#include "sandbox/resource_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace ptxbench::sandbox {
namespace {

uint64_t highest_open_fd() {
  std::error_code ec;
  uint64_t top = 2;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) {
    try {
      top = std::max<uint64_t>(top, std::stoull(it->path().filename().string()));
    } catch (...) {
    }
  }
  return top;
}

std::string set_limit(int resource, const char* name, uint64_t value, uint64_t hard_extra = 0) {
  rlimit rl{static_cast<rlim_t>(value), static_cast<rlim_t>(value + hard_extra)};
  if (::setrlimit(resource, &rl) == 0) return "";
  // Without CAP_SYS_RESOURCE a hard limit can only go down: lower the soft limit to the hard one.
  rlimit cur{};
  if (::getrlimit(resource, &cur) == 0 && cur.rlim_max < rl.rlim_max) {
    rl.rlim_cur = std::min(rl.rlim_cur, cur.rlim_max);
    rl.rlim_max = cur.rlim_max;
    if (::setrlimit(resource, &rl) == 0) return "";
  }
  return fmt::format("{}: {}", name, std::strerror(errno));
}

}  // namespace

protection apply_resource_limits(const resource_limits& limits) {
  protection p;
  uint64_t nofile = std::max<uint64_t>(limits.open_files, highest_open_fd() + 64);
  std::string err = set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", nofile);
  if (err.empty() && limits.file_size_bytes > 0) err = set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", limits.file_size_bytes);
  if (err.empty() && limits.no_core_dumps) err = set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0);
  // The CPU hard limit a few seconds above the soft one: the soft limit ends the process with
  // SIGXCPU, which says why (at the hard limit the kernel sends SIGKILL, which does not).
  if (err.empty() && limits.cpu_seconds > 0) err = set_limit(RLIMIT_CPU, "RLIMIT_CPU", limits.cpu_seconds, 5);
  if (err.empty() && limits.data_bytes > 0) err = set_limit(RLIMIT_DATA, "RLIMIT_DATA", limits.data_bytes);
  if (!err.empty()) {
    p.reason = err;
    return p;
  }
  p.active = true;
  std::string compute;
  if (limits.cpu_seconds > 0) compute += fmt::format(", CPU time {} s", limits.cpu_seconds);
  if (limits.data_bytes > 0) compute += fmt::format(", data {} bytes", limits.data_bytes);
  p.detail = fmt::format(
      "open files {}, file size {} bytes, core dumps {}{}; RLIMIT_NPROC not set (it counts every process of user {}, "
      "and is not enforced for root; new processes are refused by the system call filter instead)",
      nofile, limits.file_size_bytes, limits.no_core_dumps ? "off" : "allowed", compute, ::getuid());
  return p;
}

}  // namespace ptxbench::sandbox
