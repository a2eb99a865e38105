#include "core/sync_channel.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

namespace ptxbench {

// Each word on its own cache line, so the two writers never share one (false sharing would add
// coherence traffic to every poll).
struct sync_channel::page {
  alignas(64) uint64_t magic;
  alignas(64) std::atomic<uint32_t> go;
  alignas(64) std::atomic<uint32_t> runner_sleeping;
  alignas(64) std::atomic<uint32_t> done;
};

namespace {

constexpr std::size_t k_page_bytes = 4096;
constexpr uint64_t k_magic = 0x31636e7973627870ULL;  // "pxbsync1"
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the page's words must be address-free atomics");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the futex needs a plain 32-bit word");

using clock_type = std::chrono::steady_clock;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

uint32_t* futex_word(std::atomic<uint32_t>& a) { return reinterpret_cast<uint32_t*>(&a); }

// A shared (not private) futex: the two processes map the same page at different addresses.
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, double seconds) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  ::syscall(SYS_futex, futex_word(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>& word) { ::syscall(SYS_futex, futex_word(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0); }

bool peer_gone(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, 0, 0};  // no events asked: hang-up and errors are always reported, data is not
  int n = ::poll(&p, 1, 0);
  return n > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The shared loop of both waits: spin (checking the clock every 64 polls and the peer every ~1 ms),
// then `idle` between polls once the spin budget is used up.
template <typename Ready, typename Idle>
sync_channel::wait_result wait_until(Ready ready, Idle idle, const sync_channel::wait_options& o) {
  auto t0 = clock_type::now();
  double last_liveness = 0;
  for (uint64_t i = 0;; ++i) {
    if (ready()) return sync_channel::wait_result::signalled;
    if ((i & 63) != 63) {
      cpu_relax();
      continue;
    }
    double elapsed = seconds_since(t0);
    if (o.timeout_s >= 0 && elapsed > o.timeout_s) return ready() ? sync_channel::wait_result::signalled
                                                                  : sync_channel::wait_result::timed_out;
    if (elapsed - last_liveness > 1e-3) {
      last_liveness = elapsed;
      if (peer_gone(o.liveness_fd)) return ready() ? sync_channel::wait_result::signalled
                                                   : sync_channel::wait_result::peer_gone;
    }
    if (elapsed > o.spin_s) idle();
  }
}

}  // namespace

sync_channel::~sync_channel() { close(); }

sync_channel::sync_channel(sync_channel&& other) noexcept : m_fd(other.m_fd), m_page(other.m_page) {
  other.m_fd = -1;
  other.m_page = nullptr;
}

sync_channel& sync_channel::operator=(sync_channel&& other) noexcept {
  if (this != &other) {
    close();
    m_fd = other.m_fd;
    m_page = other.m_page;
    other.m_fd = -1;
    other.m_page = nullptr;
  }
  return *this;
}

void sync_channel::close() {
  if (m_page) ::munmap(m_page, k_page_bytes);
  if (m_fd >= 0) ::close(m_fd);
  m_page = nullptr;
  m_fd = -1;
}

result<sync_channel> sync_channel::create() {
  static_assert(offsetof(page, go) == 64 && offsetof(page, runner_sleeping) == 128 && offsetof(page, done) == 192,
                "the layout documented in sync_channel.h (the exploit suite relies on it too)");
  static_assert(sizeof(page) <= k_page_bytes);
  int fd = ::memfd_create("ptxbench-sync", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return make_error(fmt::format("memfd_create: {}", std::strerror(errno)));
  if (fd <= 2) {
    // Keep it clear of the standard descriptors a child's setup replaces (a parent started with
    // stdin closed would otherwise hand the page out as fd 0).
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    ::close(fd);
    if (moved < 0) return make_error(fmt::format("moving the sync page's descriptor: {}", std::strerror(errno)));
    fd = moved;
  }
  if (::ftruncate(fd, k_page_bytes) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    int e = errno;
    ::close(fd);
    return make_error(fmt::format("sizing and sealing the sync page: {}", std::strerror(e)));
  }
  void* p = ::mmap(nullptr, k_page_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    return make_error(fmt::format("mapping the sync page: {}", std::strerror(e)));
  }
  auto* pg = new (p) page{};  // a fresh memfd is zero-filled; this only starts the objects' lifetimes
  pg->magic = k_magic;
  return sync_channel(fd, pg);
}

result<sync_channel> sync_channel::attach(int fd) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) return make_error(fmt::format("sync page descriptor {} is not open", fd));
  if (static_cast<std::size_t>(st.st_size) < k_page_bytes)
    return make_error(fmt::format("sync page descriptor {} has {} bytes, not {}", fd, st.st_size, k_page_bytes));
  void* p = ::mmap(nullptr, k_page_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return make_error(fmt::format("mapping the sync page: {}", std::strerror(errno)));
  auto* pg = static_cast<page*>(p);
  if (pg->magic != k_magic) {
    ::munmap(p, k_page_bytes);
    return make_error(fmt::format("descriptor {} is not a sync page (wrong magic)", fd));
  }
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return sync_channel(fd, pg);
}

void sync_channel::signal_go(uint32_t seq) {
  // Sequentially consistent on both sides (store go, load sleeping here; store sleeping, load go in
  // wait_go), so either the runner sees the new go or this sees it asleep and wakes it.
  m_page->go.store(seq, std::memory_order_seq_cst);
  if (m_page->runner_sleeping.load(std::memory_order_seq_cst)) futex_wake(m_page->go);
}

sync_channel::wait_result sync_channel::wait_done(uint32_t seq, const wait_options& o) {
  auto& done = m_page->done;
  return wait_until([&] { return done.load(std::memory_order_acquire) == seq; },
                    [] {
                      timespec ts{0, 20000};
                      ::nanosleep(&ts, nullptr);
                    },
                    o);
}

sync_channel::wait_result sync_channel::wait_go(uint32_t seq, const wait_options& o) {
  auto& go = m_page->go;
  auto& sleeping = m_page->runner_sleeping;
  return wait_until([&] { return go.load(std::memory_order_acquire) == seq; },
                    [&] {
                      sleeping.store(1, std::memory_order_seq_cst);
                      uint32_t seen = go.load(std::memory_order_seq_cst);
                      if (seen != seq) futex_wait(go, seen, 0.01);  // returns at once if go moved meanwhile
                      sleeping.store(0, std::memory_order_seq_cst);
                    },
                    o);
}

void sync_channel::signal_done(uint32_t seq) { m_page->done.store(seq, std::memory_order_release); }

uint32_t sync_channel::done_value() const { return m_page ? m_page->done.load() : 0; }

}  // namespace ptxbench
