#include "sandbox/capabilities.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace ptxbench::sandbox {
namespace {

// Effective capabilities of this thread, from /proc (CapEff, hex); libcap is not needed for this.
uint64_t effective_capabilities() {
  std::ifstream status("/proc/thread-self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("CapEff:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  return 0;
}

int last_capability() {
  std::ifstream f("/proc/sys/kernel/cap_last_cap");
  int last = CAP_LAST_CAP;
  f >> last;
  return last;
}

}  // namespace

protection drop_capabilities(tool_mode tool) {
  protection p;
  uint64_t before = effective_capabilities();
  if (tool == tool_mode::nsight_compute) {
    p.reason = before == 0 ? "none held"
                           : "kept under Nsight Compute: its performance counters need CAP_SYS_ADMIN on the thread "
                             "that launches kernels (NVreg_RestrictProfilingToAdminUsers)";
    p.active = before == 0;
    return p;
  }
  if (before == 0) {
    p.active = true;
    p.detail = "the process held no capabilities";
    return p;
  }
  // Bounding set first (needs CAP_SETPCAP, which the capset below removes), then ambient, then
  // the thread's own sets. Raw capset: libcap is not worth a dependency for one call.
  for (int cap = 0; cap <= last_capability(); ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) {
    p.reason = fmt::format("capset failed: {}", std::strerror(errno));
    return p;
  }
  if (effective_capabilities() != 0) {
    p.reason = "capabilities remained after capset";
    return p;
  }
  p.active = true;
  p.detail = fmt::format("all dropped (were 0x{:x}) for the calling thread and the threads it creates; threads that "
                         "existed before keep theirs",
                         before);
  return p;
}

}  // namespace ptxbench::sandbox
