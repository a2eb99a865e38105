#include "sandbox/violation_reporter.h"

#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ptxbench::sandbox {
namespace {

// Fixed storage: the handler may not allocate, and the table is written once, before the filter.
struct trapped_name {
  int nr;
  char name[32];
};
trapped_name g_names[192];
int g_name_count = 0;
int g_fd = 2;
uint64_t g_file_size_limit = 0;

// Async-signal-safe append helpers (no stdio, no allocation).
struct line_buffer {
  char* p;
  std::size_t cap;
  std::size_t len = 0;
  void add(const char* s) {
    while (*s && len + 1 < cap) p[len++] = *s++;
  }
  void add_int(int64_t v) {
    char tmp[24];
    int n = 0;
    bool neg = v < 0;
    uint64_t u = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    do {
      tmp[n++] = char('0' + u % 10);
      u /= 10;
    } while (u && n < 22);
    if (neg) tmp[n++] = '-';
    while (n && len + 1 < cap) p[len++] = tmp[--n];
  }
  void add_u64(uint64_t u) {
    char tmp[24];
    int n = 0;
    do {
      tmp[n++] = char('0' + u % 10);
      u /= 10;
    } while (u && n < 22);
    while (n && len + 1 < cap) p[len++] = tmp[--n];
  }
};

const char* name_of(int nr) {
  for (int i = 0; i < g_name_count; ++i)
    if (g_names[i].nr == nr) return g_names[i].name;
  return nullptr;
}

const char* family_name(uint64_t family) {
  switch (family) {
    case 1: return "AF_UNIX";
    case 2: return "AF_INET";
    case 10: return "AF_INET6";
    case 16: return "AF_NETLINK";
    case 17: return "AF_PACKET";
    default: return nullptr;
  }
}

void write_all(int fd, const char* buf, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    buf += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_sigsys(int, siginfo_t* info, void* context) {
  uint64_t args[6] = {0, 0, 0, 0, 0, 0};
#if defined(__x86_64__)
  auto* uc = static_cast<ucontext_t*>(context);
  const greg_t* r = uc->uc_mcontext.gregs;
  args[0] = uint64_t(r[REG_RDI]);
  args[1] = uint64_t(r[REG_RSI]);
  args[2] = uint64_t(r[REG_RDX]);
  args[3] = uint64_t(r[REG_R10]);
  args[4] = uint64_t(r[REG_R8]);
  args[5] = uint64_t(r[REG_R9]);
#elif defined(__aarch64__)
  auto* uc = static_cast<ucontext_t*>(context);
  for (int i = 0; i < 6; ++i) args[i] = uc->uc_mcontext.regs[i];
#else
  (void)context;
#endif
  char buf[256];
  std::size_t n = format_violation(buf, sizeof buf, info->si_syscall, args);
  write_all(g_fd, buf, n);
  ::_exit(violation_exit_code);
}

void on_sigxfsz(int, siginfo_t*, void*) {
  char buf[160];
  line_buffer b{buf, sizeof buf};
  b.add(violation_marker.data());
  b.add("exceeded the file size limit (");
  b.add_u64(g_file_size_limit);
  b.add(" bytes)\n");
  write_all(g_fd, buf, b.len);
  ::_exit(violation_exit_code);
}

}  // namespace

void register_trapped_syscall(int nr, const char* name) {
  if (name_of(nr) || g_name_count >= int(sizeof g_names / sizeof g_names[0])) return;
  trapped_name& t = g_names[g_name_count];
  t.nr = nr;
  std::strncpy(t.name, name, sizeof t.name - 1);
  t.name[sizeof t.name - 1] = '\0';
  ++g_name_count;
}

std::size_t format_violation(char* buf, std::size_t cap, int nr, const uint64_t args[6]) {
  line_buffer b{buf, cap};
  b.add(violation_marker.data());
  b.add("attempted ");
  const char* name = name_of(nr);
  if (!name) {
    b.add("system call ");
    b.add_int(nr);
  } else {
    b.add(name);
    auto is = [&](const char* n) { return std::strcmp(name, n) == 0; };
    if (is("socket")) {
      const char* fam = family_name(args[0] & 0xffffffffu);
      b.add("(");
      if (fam) b.add(fam);
      else {
        b.add("family ");
        b.add_u64(args[0]);
      }
      b.add(")");
    } else if (is("kill") || is("tkill") || is("tgkill") || is("rt_sigqueueinfo") || is("rt_tgsigqueueinfo") ||
               is("pidfd_open")) {
      b.add(" (pid ");
      b.add_int(static_cast<int32_t>(args[0] & 0xffffffffu));
      b.add(")");
    } else if (is("clone")) {
      b.add((args[0] & 0x00010000u) ? " (a new namespace)" : " (a new process)");  // CLONE_THREAD
    } else if (is("rt_sigaction")) {
      b.add("(SIGSYS)");
    }
  }
  if (b.len + 1 < cap) buf[b.len++] = '\n';
  else buf[cap - 1] = '\n', b.len = cap;
  return b.len;
}

status install_violation_handlers(int fd, uint64_t file_size_limit) {
  g_fd = fd;
  g_file_size_limit = file_size_limit;
  struct sigaction sa {};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigfillset(&sa.sa_mask);  // nothing interrupts the report
  if (::sigaction(SIGSYS, &sa, nullptr) != 0)
    return make_error(fmt::format("cannot install the SIGSYS handler: {}", std::strerror(errno)));
  sa.sa_sigaction = on_sigxfsz;
  if (::sigaction(SIGXFSZ, &sa, nullptr) != 0)
    return make_error(fmt::format("cannot install the SIGXFSZ handler: {}", std::strerror(errno)));
  // A handler only runs when the signal is not blocked; the kernel forces SIGSYS from seccomp
  // anyway (and then kills), so unblocking here only makes the report likelier.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSYS);
  sigaddset(&set, SIGXFSZ);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  return ok();
}

std::optional<std::string> find_violation(std::string_view output) {
  std::size_t pos = std::string_view::npos, from = 0;
  while (true) {
    std::size_t p = output.find(violation_marker, from);
    if (p == std::string_view::npos) break;
    if (p == 0 || output[p - 1] == '\n') pos = p;
    from = p + 1;
  }
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = output.substr(pos + violation_marker.size());
  rest = rest.substr(0, std::min(rest.find('\n'), std::size_t{200}));
  return "sandbox: " + std::string(rest);
}

}  // namespace ptxbench::sandbox
