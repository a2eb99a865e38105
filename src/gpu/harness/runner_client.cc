#include "gpu/harness/runner_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/process.h"
#include "gpu/harness/call_failure.h"
#include "sandbox/runner_integration.h"
#include "sandbox/sandbox_policy.h"

extern char** environ;

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture (Linux 5.3)
#endif

namespace ptxbench::gpu {
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

namespace {

std::string random_token() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

// True when pid is `ancestor` or one of its descendants (the runner may sit under a wrapper tool).
bool descends_from(pid_t pid, pid_t ancestor) {
  for (int depth = 0; depth < 8 && pid > 1; ++depth) {
    if (pid == ancestor) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close = content.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream rest(content.substr(close + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    pid = ppid;
  }
  return pid == ancestor;
}

}  // namespace

runner_client::~runner_client() {
  stop(2);
  close_runner_pidfd();
}

void runner_client::close_runner_pidfd() {
  if (m_runner_pidfd >= 0) ::close(m_runner_pidfd);
  m_runner_pidfd = -1;
}

result<call_result> runner_client::start(const runner_launch& launch) {
  if (auto spawned = spawn(launch); !spawned) return spawned.err();
  return finish_start(launch);
}

void runner_client::abort() {
  m_aborted.store(true);
  if (pid_t group = m_group.load(); group > 0) ::kill(-group, SIGKILL);
}

status runner_client::spawn(const runner_launch& launch) {
  std::error_code ec;
  fs::create_directories(launch.work_dir, ec);
  // Unix socket paths are limited to 108 bytes, so the socket lives in a short private folder under
  // the system temp dir rather than in the (deep) work folder.
  if (auto st = m_listener.listen(fs::temp_directory_path()); !st) return st.err();
  m_log = launch.work_dir / fmt::format("runner-{}.log", random_token().substr(0, 8));
  m_token = random_token();
  m_aborted.store(false);
  close_runner_pidfd();
  m_shutdown_sent = false;
  const std::string& token = m_token;

  std::vector<std::string> argv = launch.wrapper;
  argv.insert(argv.end(), launch.interpreter.begin(), launch.interpreter.end());
  argv.insert(argv.end(), {launch.runner.string(), "--connect", m_listener.path().string(), "--token", token});
  m_first_prepare_extra_s = launch.first_prepare_extra_s;
  m_calls = 0;
  // The shared go/done page travels as an inherited descriptor, which a wrapper tool need not pass
  // on; under a tool (no timing there) the socket carries go/done as before.
  m_sync = sync_channel{};
  m_sync_active = false;
  if (launch.shared_memory_sync && launch.wrapper.empty()) {
    auto page = sync_channel::create();
    if (page) {
      m_sync = std::move(*page);
      argv.insert(argv.end(), {"--sync-fd", std::to_string(m_sync.fd())});
    }
  }
  int sync_fd = m_sync.fd();
  auto exe = find_executable(argv[0]);
  if (!exe) return make_error(fmt::format("'{}' not found", argv[0]));
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::string exe_s = exe->string(), log_s = m_log.string();
  // The runner's only writable folder (docs/sandbox.md); TMPDIR points there so libraries and the
  // tools' injected code put their temporary files where the sandbox lets them.
  fs::path scratch = launch.work_dir / fmt::format("scratch-{}", token.substr(0, 8));
  fs::create_directories(scratch, ec);
  m_scratch = scratch;
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::string_view(*e).rfind("TMPDIR=", 0) != 0) env.emplace_back(*e);
  env.push_back("TMPDIR=" + scratch.string());
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  pid_t parent = ::getpid();
  m_child = ::fork();
  if (m_child < 0) return make_error("fork failed");
  if (m_child == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int fd = ::open(log_s.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (sync_fd >= 0) ::fcntl(sync_fd, F_SETFD, 0);  // the one descriptor the runner inherits on purpose
    rlimit core{0, 0}, fsize{256u << 20, 256u << 20};  // no core dumps; a printing loop cannot fill the disk
    ::setrlimit(RLIMIT_CORE, &core);
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    ::execve(exe_s.c_str(), cargv.data(), cenv.data());
    ::_exit(127);
  }
  ::setpgid(m_child, m_child);
  m_group.store(m_child);
  return ok();
}

result<call_result> runner_client::finish_start(const runner_launch& launch) {
  const std::string& token = m_token;
  const fs::path& scratch = m_scratch;
  // Awaited in slices, so that abort() from another thread ends the wait for a runner it killed
  // before it connected (nothing else would wake this).
  auto accept_deadline = steady::now() + std::chrono::duration<double>(launch.startup_timeout_s);
  auto acc = m_listener.accept(0);
  while (!acc) {
    if (m_aborted.load()) return lost("start-up (stopped by the harness)", launch.startup_timeout_s, false);
    double left = std::chrono::duration<double>(accept_deadline - steady::now()).count();
    if (left <= 0 || acc.err().message.rfind("no connection", 0) != 0)
      return lost("start-up (" + acc.err().message + ")", launch.startup_timeout_s, true);
    acc = m_listener.accept(std::min(left, 0.05));
  }
  // A pidfd on the peer, taken before it is checked to be in the runner's tree, so it names that very
  // process: release() learns from it when the runner itself has ended (none before Linux 5.3).
  // Close-on-exec, like every pidfd.
  m_runner_pidfd = static_cast<int>(::syscall(SYS_pidfd_open, acc->peer_pid, 0));
  if (!descends_from(acc->peer_pid, m_child))
    return make_error(fmt::format("a process outside the runner's tree (pid {}) connected", acc->peer_pid));
  m_channel = std::move(acc->channel);
  m_runner_pid = acc->peer_pid;
  auto hello = m_channel.receive(launch.startup_timeout_s);
  if (hello.kind != message_channel::receive_kind::message || hello.message.value("token", "") != token)
    return lost("start-up (no valid hello)", launch.startup_timeout_s, hello.kind == message_channel::receive_kind::timeout);
  // Until the setup below no candidate code exists in the runner: what is mapped now is the
  // runner's own (nothing for ptxbench-runner; torch's libraries for the Triton runner).
  m_vendor_baseline.clear();
  m_vendor_baseline = vendor_mappings();
  if (launch.before_setup) launch.before_setup();

  ordered_json policy = launch.sandbox
                            ? sandbox::to_json(sandbox::policy_for_runner(scratch, launch.shared_object, launch.wrapper))
                            : ordered_json(nullptr);
  ordered_json setup = {{"type", "setup"}, {"so", launch.shared_object.string()}, {"symbol", launch.symbol},
                        {"mode", launch.mode}, {"timing", launch.timing}, {"device", launch.device},
                        {"sandbox", policy}, {"scratch", scratch.string()}};
  if (launch.setup_extra.is_object())
    for (const auto& item : launch.setup_extra.items())
      if (!setup.contains(item.key())) setup[item.key()] = item.value();
  (void)m_channel.send(setup);
  auto ready = m_channel.receive(launch.startup_timeout_s);
  call_result r;
  if (ready.kind != message_channel::receive_kind::message)
    return lost("loading the candidate", launch.startup_timeout_s, ready.kind == message_channel::receive_kind::timeout);
  if (ready.message.value("type", "") == "error" && ready.message.value("phase", "") == "sandbox")
    return make_error("the candidate sandbox could not be applied: " + ready.message.value("error", ""));
  if (ready.message.value("type", "") == "error") {
    r.sandbox = ready.message.value("sandbox", ordered_json(nullptr));  // present once the sandbox was on
    r.outcome = call_outcome::failed;
    r.message = ready.message.value("error", "the runner reported an error");
    r.load_error = ready.message.value("phase", "") == "load";
    return r;
  }
  r.outcome = call_outcome::ok;
  r.method = ready.message.value("cupti", false) ? "cupti" : "none";
  r.sandbox = ready.message.value("sandbox", ordered_json(nullptr));
  m_sync_active = m_sync.valid() && ready.message.value("sync", false);
  if (!m_sync_active) m_sync.close();
  m_audits = ready.message.value("audit", false);
  m_audit_error = m_audits ? "" : ready.message.value("audit_error", std::string("the runner does not audit (no timing)"));
  return r;
}

message_channel::received runner_client::receive_for(int64_t nonce, const std::string& type, double timeout_s) {
  auto deadline = steady::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    double left = std::chrono::duration<double>(deadline - steady::now()).count();
    auto got = m_channel.receive(std::max(0.0, left));
    if (got.kind != message_channel::receive_kind::message) return got;
    const auto& m = got.message;
    std::string t = m.value("type", "");
    if (t == "error") return got;
    if (t == type && m.contains("nonce") && m["nonce"].is_number_integer() && m["nonce"].get<int64_t>() == nonce)
      return got;
    // Another call's message: a stale answer, or one the candidate wrote for another nonce.
  }
}

call_result runner_client::call(const std::vector<ipc_tensor>& tensors, double timeout_s, bool noop,
                                const std::function<void()>& on_done, const std::function<void()>& on_prepared) {
  thaw();
  // From here on the candidate's threads run again: the lead interval (docs/trusted-timing.md).
  auto t_thaw = steady::now();
  ordered_json list = ordered_json::array();
  for (const auto& t : tensors) list.push_back(to_json(t));
  int64_t nonce = ++m_nonce;
  // The first real call's prepare may carry the runner's warm-up (a Triton runner compiles there).
  const bool warm_up = !noop && m_calls++ == 0 && m_first_prepare_extra_s > 0;
  const double prepare_timeout = timeout_s + (warm_up ? m_first_prepare_extra_s : 0);
  const std::string preparing = warm_up ? "the warm-up before the first call (JIT compilation)" : "preparing the call";
  bool use_sync = m_sync_active;
  if (!m_channel.send({{"type", "prepare"}, {"nonce", nonce}, {"tensors", list}, {"noop", noop}, {"sync", use_sync}}))
    return lost(preparing, prepare_timeout, false);
  auto prepared = receive_for(nonce, "prepared", prepare_timeout);
  if (prepared.kind != message_channel::receive_kind::message)
    return lost(preparing, prepare_timeout, prepared.kind == message_channel::receive_kind::timeout);
  call_result r;
  if (prepared.message.value("type", "") == "error") {
    r.outcome = call_outcome::failed;
    r.message = prepared.message.value("error", "");
    r.error_kind = parse_candidate_error(prepared.message.value("error_kind", ""));
    return r;
  }
  auto t_prepared = steady::now();
  if (on_prepared) on_prepared();
  auto t0 = steady::now();
  message_channel::received done;
  if (use_sync) {
    auto seq = static_cast<uint32_t>(nonce);
    m_sync.signal_go(seq);
    sync_channel::wait_options o;
    o.timeout_s = timeout_s;
    o.liveness_fd = m_channel.fd();  // a runner that died (or failed and exited) hangs up
    o.spin_s = 0.25;                 // past that, polling every 20 us costs a long call nothing
    auto w = m_sync.wait_done(seq, o);
    if (w == sync_channel::wait_result::timed_out) return lost("the call", timeout_s, true);
    if (w == sync_channel::wait_result::peer_gone) {
      // The runner reports a CUDA failure with an error message and exits; otherwise it crashed.
      auto last = receive_for(nonce, "done", 1.0);
      if (last.kind != message_channel::receive_kind::message || last.message.value("type", "") != "error")
        return lost("the call", timeout_s, false);
      r.outcome = call_outcome::failed;
      r.message = last.message.value("error", "the runner reported an error");
      return r;
    }
  } else {
    if (!m_channel.send({{"type", "go"}, {"nonce", nonce}})) return lost("the call", timeout_s, false);
    done = receive_for(nonce, "done", timeout_s);
  }
  auto t1 = steady::now();
  if (on_done && (use_sync || done.kind == message_channel::receive_kind::message)) on_done();
  auto t2 = steady::now();
  if (use_sync) done = receive_for(nonce, "done", timeout_s);
  if (done.kind != message_channel::receive_kind::message)
    return lost("the call", timeout_s, done.kind == message_channel::receive_kind::timeout);
  const auto& m = done.message;
  using ms = std::chrono::duration<double, std::milli>;
  r.wall_ms = ms(t2 - t0).count();
  r.signal_ms = ms(t1 - t0).count();
  r.lead_ms = ms(t_prepared - t_thaw).count();
  r.method = m.value("method", "none");
  r.span_ms = static_cast<double>(m.value("span_ns", uint64_t{0})) * 1e-6;
  r.records = m.value("records", 0);
  r.kernels = m.value("kernels", std::vector<std::string>{});
  r.audit = m.value("audit", ordered_json(nullptr));
  if (m.value("type", "") == "done" && m.value("ok", false)) {
    r.outcome = call_outcome::ok;
  } else {
    r.outcome = call_outcome::failed;
    r.message = m.value("error", "the call failed");
    r.error_kind = parse_candidate_error(m.value("error_kind", ""));
  }
  return r;
}

candidate_error parse_candidate_error(std::string_view name) {
  if (name == "argument_count") return candidate_error::argument_count;
  if (name == "dtype") return candidate_error::dtype;
  if (name == "shape") return candidate_error::shape;
  if (name == "exception") return candidate_error::exception;
  if (name == "compile") return candidate_error::compile;
  if (name == "unreplayable") return candidate_error::unreplayable;
  return candidate_error::unspecified;
}

void runner_client::freeze() {
  if (m_runner_pid > 0 && !m_frozen && alive()) {
    ::kill(m_runner_pid, SIGSTOP);
    m_frozen = true;
  }
}

void runner_client::thaw() {
  if (m_runner_pid > 0 && m_frozen) {
    ::kill(m_runner_pid, SIGCONT);
    m_frozen = false;
  }
}

std::vector<std::string> runner_client::vendor_mappings() const {
  std::vector<std::string> found;
  if (m_runner_pid <= 0) return found;
  std::ifstream maps("/proc/" + std::to_string(m_runner_pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    std::string base = line.substr(slash + 1);
    for (const char* lib : {"libcublasLt", "libcublas", "libcudnn"}) {
      if (base.rfind(lib, 0) == 0 && std::find(found.begin(), found.end(), base) == found.end() &&
          std::find(m_vendor_baseline.begin(), m_vendor_baseline.end(), base) == m_vendor_baseline.end()) {
        found.push_back(base);
        break;
      }
    }
  }
  return found;
}

std::string runner_client::describe_death() {
  if (!m_exited && m_child > 0) {
    m_group.store(-1);  // it may be reaped below: abort() must not reach a reused process group
    int st = 0;
    for (int i = 0; i < 100; ++i) {  // the channel closed; give the process a moment to be reaped
      if (::waitpid(m_child, &st, WNOHANG) == m_child) {
        m_exited = true;
        m_status = st;
        break;
      }
      ::usleep(20000);
    }
  }
  if (!m_exited) return "stopped answering";
  if (WIFSIGNALED(m_status))
    return fmt::format("was killed by signal {} ({})", signal_name(WTERMSIG(m_status)), strsignal(WTERMSIG(m_status)));
  if (WIFEXITED(m_status)) return fmt::format("exited with code {}", WEXITSTATUS(m_status));
  return "ended";
}

call_result runner_client::lost(const std::string& during, double timeout_s, bool timed_out) {
  call_result r;
  if (timed_out) {
    r.outcome = call_outcome::timed_out;
    r.message = fmt::format("no answer within {:g} s during {}; the candidate process was killed", timeout_s, during);
    if (m_child > 0) ::kill(-m_child, SIGKILL);
    describe_death();
  } else {
    // If the sandbox ended it, its line in the log says what was attempted (docs/sandbox.md).
    std::string death = describe_death();
    r = crashed_call(death, during, output(), m_status, m_exited);
  }
  return r;
}

bool runner_client::release(double grace_s) {
  if (m_child <= 0 || m_exited || m_runner_pidfd < 0) return false;
  thaw();
  (void)m_channel.send({{"type", "shutdown"}});
  m_shutdown_sent = true;
  // Readable once the process has ended — every thread of it, so also every file it held (the
  // kernel closes them before the process becomes a zombie) — reaped or not (it is not our child).
  pollfd ended{m_runner_pidfd, POLLIN, 0};
  auto deadline = steady::now() + std::chrono::duration<double>(grace_s);
  while (true) {
    double left = std::chrono::duration<double>(deadline - steady::now()).count();
    ended.revents = 0;
    int n = ::poll(&ended, 1, static_cast<int>(std::clamp(left, 0.0, 1.0) * 1000) + 1);
    if (n > 0 && (ended.revents & (POLLIN | POLLHUP))) {
      close_runner_pidfd();
      return true;
    }
    // Cannot be followed (should not happen): stop() waits for the whole tree as before.
    if ((n < 0 && errno != EINTR) || (n > 0 && (ended.revents & (POLLERR | POLLNVAL)))) return false;
    if (left <= 0) break;
  }
  // The runner did not exit within grace_s: what stop() would have done after its grace (the tool
  // cannot have ended before its runner).
  ::kill(-m_child, SIGKILL);
  return false;
}

std::string runner_client::stop(double grace_s) {
  close_runner_pidfd();
  if (m_child <= 0) return "not started";
  thaw();
  if (!m_exited) {
    if (!m_shutdown_sent) (void)m_channel.send({{"type", "shutdown"}});
    m_shutdown_sent = true;
    auto deadline = steady::now() + std::chrono::duration<double>(grace_s);
    while (steady::now() < deadline) {
      int st = 0;
      if (::waitpid(m_child, &st, WNOHANG) == m_child) {
        m_exited = true;
        m_status = st;
        break;
      }
      ::usleep(10000);
    }
  }
  ::kill(-m_child, SIGKILL);  // anything the candidate left running in its group
  m_group.store(-1);          // reaped below: abort() must not reach a reused process group
  if (!m_exited) {
    int st = 0;
    if (::waitpid(m_child, &st, 0) == m_child) m_status = st;
    m_exited = true;
  }
  m_channel.close();
  m_sync.close();
  m_sync_active = false;
  std::string how = describe_death();
  m_child = -1;
  // Nothing the candidate wrote outlives its runner (RLIMIT_FSIZE bounds each file, not their number).
  std::error_code ignored;
  if (!m_scratch.empty()) fs::remove_all(m_scratch, ignored);
  return how;
}

std::string runner_client::output(std::size_t max_bytes) const {
  auto text = read_file(m_log, 512u << 20);
  if (!text) return "";
  if (text->size() <= max_bytes) return *text;
  std::size_t head = max_bytes * 3 / 4, tail = max_bytes - head;
  return text->substr(0, head) + fmt::format("\n... [{} bytes omitted] ...\n", text->size() - head - tail) +
         text->substr(text->size() - tail);
}

}  // namespace ptxbench::gpu
