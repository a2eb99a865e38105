#include "sandbox/landlock_rules.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace ptxbench::sandbox {
namespace fs = std::filesystem;
namespace {

// The uapi of <linux/landlock.h> as of ABI 8, declared here under our own names so an older
// system header neither hides a feature nor clashes with these definitions.
constexpr long k_sys_create_ruleset = 444;  // same number on x86_64 and aarch64
constexpr long k_sys_add_rule = 445;
constexpr long k_sys_restrict_self = 446;
constexpr uint32_t k_create_ruleset_version = 1u << 0;
constexpr int k_rule_path_beneath = 1;
constexpr uint32_t k_restrict_self_tsync = 1u << 3;  // ABI 8

enum : uint64_t {
  fs_execute = 1ull << 0,
  fs_write_file = 1ull << 1,
  fs_read_file = 1ull << 2,
  fs_read_dir = 1ull << 3,
  fs_remove_dir = 1ull << 4,
  fs_remove_file = 1ull << 5,
  fs_make_char = 1ull << 6,
  fs_make_dir = 1ull << 7,
  fs_make_reg = 1ull << 8,
  fs_make_sock = 1ull << 9,
  fs_make_fifo = 1ull << 10,
  fs_make_block = 1ull << 11,
  fs_make_sym = 1ull << 12,
  fs_refer = 1ull << 13,      // ABI 2
  fs_truncate = 1ull << 14,   // ABI 3
  fs_ioctl_dev = 1ull << 15,  // ABI 5
};
constexpr uint64_t net_bind_tcp = 1ull << 0;     // ABI 4
constexpr uint64_t net_connect_tcp = 1ull << 1;  // ABI 4
constexpr uint64_t scope_abstract_unix = 1ull << 0;  // ABI 6
constexpr uint64_t scope_signal = 1ull << 1;         // ABI 6

// Rights that apply to a file (not a folder); a rule on a file with any other right is EINVAL.
constexpr uint64_t k_file_rights = fs_execute | fs_write_file | fs_read_file | fs_truncate | fs_ioctl_dev;

struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

uint64_t handled_fs_for(int abi) {
  uint64_t all = fs_execute | fs_write_file | fs_read_file | fs_read_dir | fs_remove_dir | fs_remove_file |
                 fs_make_char | fs_make_dir | fs_make_reg | fs_make_sock | fs_make_fifo | fs_make_block | fs_make_sym;
  if (abi >= 2) all |= fs_refer;
  if (abi >= 3) all |= fs_truncate;
  if (abi >= 5) all |= fs_ioctl_dev;
  return all;
}

class fd_guard {
 public:
  explicit fd_guard(int fd) : m_fd(fd) {}
  ~fd_guard() {
    if (m_fd >= 0) ::close(m_fd);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  int get() const { return m_fd; }

 private:
  int m_fd;
};

// Adds one path with `rights` (reduced to file rights for a file). Missing paths are skipped and
// recorded; any other failure is an error.
std::string add_path(int ruleset, const fs::path& path, uint64_t rights, uint64_t handled,
                     std::vector<std::string>& skipped) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    skipped.push_back(fmt::format("{} ({})", path.string(), std::strerror(errno)));
    return "";
  }
  fd_guard guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fmt::format("cannot stat {}: {}", path.string(), std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) rights &= k_file_rights;
  path_beneath_attr attr{rights & handled, fd};
  if (attr.allowed_access == 0) return "";
  if (::syscall(k_sys_add_rule, ruleset, k_rule_path_beneath, &attr, 0) != 0)
    return fmt::format("landlock_add_rule({}) failed: {}", path.string(), std::strerror(errno));
  return "";
}

int count_other_threads() {
  std::error_code ec;
  int n = 0;
  for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n > 0 ? n - 1 : 0;
}

}  // namespace

int landlock_abi_version(std::string* reason) {
  long abi = ::syscall(k_sys_create_ruleset, nullptr, 0, k_create_ruleset_version);
  if (abi >= 1) return static_cast<int>(abi);
  if (reason) {
    if (errno == ENOSYS) *reason = "this kernel was built without Landlock (CONFIG_SECURITY_LANDLOCK)";
    else if (errno == EOPNOTSUPP) *reason = "Landlock is built in but not enabled (add landlock to the lsm= boot list)";
    else *reason = fmt::format("landlock_create_ruleset failed: {}", std::strerror(errno));
  }
  return 0;
}

std::vector<fs::path> default_device_paths() {
  std::vector<fs::path> out = {"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random"};
  std::error_code ec;
  for (fs::directory_iterator it("/dev", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("nvidia", 0) == 0) out.push_back(it->path());
  return out;
}

landlock_outcome apply_landlock(const sandbox_policy& p) {
  landlock_outcome out;
  std::string why;
  out.abi = landlock_abi_version(&why);
  if (out.abi == 0) {
    out.status.reason = why;
    return out;
  }
  const bool tool = p.tool != tool_mode::none;
  ruleset_attr attr{};
  attr.handled_access_fs = handled_fs_for(out.abi);
  // TCP bind/connect: none allowed (no rule grants a port). Not under a tool: its injected library
  // may connect to its front end from the thread that launches kernels.
  out.network = out.abi >= 4 && !p.allow_network && !tool;
  if (out.network) attr.handled_access_net = net_bind_tcp | net_connect_tcp;
  out.scoped = out.abi >= 6 && !tool;
  if (out.scoped) attr.scoped = scope_abstract_unix | scope_signal;
  std::size_t size = out.abi >= 6 ? sizeof(ruleset_attr) : out.abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  int ruleset = static_cast<int>(::syscall(k_sys_create_ruleset, &attr, size, 0));
  if (ruleset < 0) {
    out.status.reason = fmt::format("landlock_create_ruleset failed: {}", std::strerror(errno));
    return out;
  }
  fd_guard guard(ruleset);
  const uint64_t handled = attr.handled_access_fs;
  const uint64_t read = fs_read_file | fs_read_dir | fs_execute;
  const uint64_t device = fs_read_file | fs_write_file | fs_read_dir | fs_ioctl_dev;
  // Everything in scratch except device nodes, sockets and fifos (nothing there needs them).
  const uint64_t write = handled & ~(fs_make_char | fs_make_block | fs_make_sock | fs_make_fifo | fs_execute);
  std::string err;
  for (const auto& path : p.read_paths)
    if (err.empty()) err = add_path(ruleset, path, read, handled, out.skipped_paths);
  auto devices = p.device_paths.empty() ? default_device_paths() : p.device_paths;
  for (const auto& path : devices)
    if (err.empty()) err = add_path(ruleset, path, device, handled, out.skipped_paths);
  if (err.empty()) err = add_path(ruleset, p.scratch_dir, write, handled, out.skipped_paths);
  for (const auto& path : p.extra_write_paths)
    if (err.empty()) err = add_path(ruleset, path, write, handled, out.skipped_paths);
  if (!err.empty()) {
    out.status.reason = err;
    return out;
  }
  // TSYNC (ABI 8) confines every thread. Not under a tool: its injected library's threads would be
  // confined too, and what they write is the tool's business.
  uint32_t flags = (out.abi >= 8 && !tool) ? k_restrict_self_tsync : 0;
  int outside = flags ? 0 : count_other_threads();
  if (::syscall(k_sys_restrict_self, ruleset, flags) != 0) {
    out.status.reason = fmt::format("landlock_restrict_self failed: {}", std::strerror(errno));
    return out;
  }
  out.threads_outside = outside;
  out.status.active = true;
  out.status.detail =
      flags ? "all threads"
            : outside == 0 ? "the calling thread and every thread it creates"
                           : fmt::format("the calling thread and every thread it creates; {} thread(s) that existed "
                                         "before (CUDA driver, CUPTI, tool) stay outside: Landlock ABI {} confines "
                                         "only the caller (ABI 8 adds all-thread enforcement)",
                                         outside, out.abi);
  return out;
}

}  // namespace ptxbench::sandbox
