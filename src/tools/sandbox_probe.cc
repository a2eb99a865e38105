// ptxbench-sandbox-probe: checks on a GPU host that a sandboxed CUDA process still does everything a
// candidate runner does, directly and under compute-sanitizer or Nsight Compute, and that the
// sandbox still refuses what it should. It mirrors the harness/runner pair: the parent (trusted
// side) owns a device buffer and shares it through CUDA IPC; the child (runner side, optionally
// under a tool) connects over a Unix SOCK_SEQPACKET socket, creates its context, starts CUPTI,
// applies the sandbox, and only then opens the IPC buffer, dlopen()s a candidate-like shared object
// and launches its kernel on the buffer. The parent checks the buffer's values afterwards.
//
//   ptxbench-sandbox-probe --case NAME [--mode enforce|audit] [--tool none|compute-sanitizer|nsight-compute]
//                          [--disable PROTECTION]... [--wrapper "TOOL ARGS"] [--final-violation]
//                          [--candidate PATH]
//
// Prints "CASE NAME: works" or "CASE NAME: FAILED at STEP: what", preceded by one line per step
// and the sandbox report. Exit status 0 when the case works. bench/eval/sandbox_probe.sh runs the
// cases. (Not a test binary: it needs a GPU, and is run by hand or by that script.)
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "gpu/common/activity_tracer.h"
#include "sandbox/apply_sandbox.h"
#include "sandbox/violation_reporter.h"

namespace fs = std::filesystem;
using namespace ptxbench;

namespace {

constexpr int k_elements = 1 << 18;  // 1 MiB of floats

struct options {
  std::string case_name = "probe";
  std::string mode = "enforce";
  std::string tool = "none";
  std::vector<std::string> disabled;
  std::string wrapper;
  bool final_violation = false;
  bool dry_run = false;  // no CUDA call at all: checks the protocol and the sandbox on a machine without a GPU
  std::string candidate;
  // child side
  bool child = false;
  std::string connect_path;
  std::string scratch;
};

std::string cuda_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

// ---- the socket between the two sides (one text message per packet) ----

bool send_text(int fd, const std::string& s) { return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) >= 0; }

std::string receive_text(int fd, int timeout_s) {
  fd_set set;
  FD_ZERO(&set);
  FD_SET(fd, &set);
  timeval tv{timeout_s, 0};
  if (::select(fd + 1, &set, nullptr, nullptr, &tv) <= 0) return "";
  std::string buf(1 << 16, '\0');
  ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
  return n > 0 ? buf.substr(0, static_cast<std::size_t>(n)) : "";
}

// ---- child: the runner side ----

int child_main(const options& o) {
  int sock = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, o.connect_path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "probe child: cannot connect: %s\n", std::strerror(errno));
    return 3;
  }
  auto step = [&](const std::string& name, bool ok, const std::string& detail) {
    std::string line = fmt::format("step {}: {}{}", name, ok ? "ok" : "FAILED", detail.empty() ? "" : " (" + detail + ")");
    std::fprintf(stderr, "%s\n", line.c_str());
    send_text(sock, line);
    return ok;
  };
  auto cuda_step = [&](const std::string& name, cudaError_t e) { return step(name, e == cudaSuccess, e == cudaSuccess ? "" : cuda_text(e)); };
  if (o.dry_run) {
    // Everything but CUDA: the sandbox, the socket protocol, dlopen, the allowed and refused calls.
    sandbox::sandbox_policy policy = sandbox::runner_policy(o.scratch, o.candidate, "/usr/local/cuda",
                                                            sandbox::tool_mode::none);
    policy.mode = o.mode == "audit" ? sandbox::enforcement::audit : sandbox::enforcement::enforce;
    policy.disabled = o.disabled;
    auto report = sandbox::apply_sandbox(policy);
    if (!report) return step("sandbox", false, report.err().message), 3;
    send_text(sock, "report " + sandbox::summary(*report));
    step("sandbox", true, "");
    void* lib = ::dlopen(o.candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    step("dlopen_candidate", lib != nullptr, lib ? "" : ::dlerror());
    int f = ::open("/root/ptxbench-sandbox-probe-must-not-exist", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    step("home_write_refused", f < 0, f < 0 ? std::strerror(errno) : "NOT refused");
    send_text(sock, "done");
    if (o.final_violation) {
      char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
      ::syscall(SYS_execve, "/bin/true", argv, nullptr);
    }
    return 0;
  }

  // As the runner: context and CUPTI before the sandbox.
  if (!cuda_step("context", cudaSetDevice(0)) || !cuda_step("context_create", cudaFree(nullptr))) return 3;
  auto tracer = gpu::activity_tracer::start();
  step("cupti_start", true, tracer ? "CUPTI activity on" : "CUPTI unavailable: " + tracer.err().message);

  sandbox::sandbox_policy policy = sandbox::runner_policy(o.scratch, o.candidate, "/usr/local/cuda",
                                                          o.tool == "compute-sanitizer" ? sandbox::tool_mode::compute_sanitizer
                                                          : o.tool == "nsight-compute" ? sandbox::tool_mode::nsight_compute
                                                                                       : sandbox::tool_mode::none);
  policy.mode = o.mode == "audit" ? sandbox::enforcement::audit : sandbox::enforcement::enforce;
  policy.disabled = o.disabled;
  policy.required = {};
  if (const char* root = std::getenv("CUDA_HOME")) policy.read_paths.push_back(root);
  auto report = sandbox::apply_sandbox(policy);
  if (!report) return step("sandbox", false, report.err().message), 3;
  send_text(sock, "report " + sandbox::summary(*report));
  send_text(sock, "report-json " + sandbox::to_json(*report).dump());
  step("sandbox", true, "");

  std::string handle_msg = receive_text(sock, 60);
  if (handle_msg.size() != 1 + sizeof(cudaIpcMemHandle_t) || handle_msg[0] != 'H')
    return step("ipc_handle", false, "no handle from the parent"), 3;
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, handle_msg.data() + 1, sizeof handle);

  void* priv = nullptr;
  if (!cuda_step("private_alloc", cudaMalloc(&priv, k_elements * sizeof(float)))) return 3;
  if (!cuda_step("private_memset", cudaMemset(priv, 0, k_elements * sizeof(float)))) return 3;
  void* shared = nullptr;
  if (!cuda_step("ipc_open", cudaIpcOpenMemHandle(&shared, handle, cudaIpcMemLazyEnablePeerAccess))) return 3;

  void* lib = ::dlopen(o.candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!step("dlopen_candidate", lib != nullptr, lib ? "" : ::dlerror())) return 3;
  using launch_fn = const char* (*)(float*, int, cudaStream_t);
  auto launch = reinterpret_cast<launch_fn>(::dlsym(lib, "probe_candidate_launch"));
  if (!step("dlsym_candidate", launch != nullptr, "")) return 3;
  cudaStream_t stream;
  if (!cuda_step("stream_create", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking))) return 3;
  // Under a tool the runner works on exact-size private copies ("private" mode: the sanitizer's
  // padding and the profiler's replay handle ordinary allocations); directly, on the IPC buffer.
  const bool private_mode = o.tool != "none";
  const std::size_t bytes = k_elements * sizeof(float);
  if (private_mode && !cuda_step("copy_in", cudaMemcpy(priv, shared, bytes, cudaMemcpyDeviceToDevice))) return 3;
  float* target = static_cast<float*>(private_mode ? priv : shared);
  uint64_t t0 = tracer ? (*tracer)->now() : 0;
  const char* err = launch(target, k_elements, stream);
  if (!step("candidate_kernel", err == nullptr, err ? err : "")) return 3;
  if (!cuda_step("synchronize", cudaDeviceSynchronize())) return 3;
  if (private_mode && !cuda_step("copy_out", cudaMemcpy(shared, priv, bytes, cudaMemcpyDeviceToDevice))) return 3;
  if (tracer) {
    auto span = (*tracer)->collect(t0, (*tracer)->now());
    step("cupti_span", span.records > 0, fmt::format("{} record(s), {} kernel(s)", span.records, span.kernels.size()));
  }
  if (!cuda_step("ipc_close", cudaIpcCloseMemHandle(shared))) return 3;
  float* pinned = nullptr;
  if (!cuda_step("pinned_alloc", cudaMallocHost(&pinned, 4096))) return 3;
  if (!cuda_step("copy_to_host", cudaMemcpy(pinned, priv, 4096, cudaMemcpyDeviceToHost))) return 3;

  // What the sandbox must still allow, and refuse.
  {
    int f = ::open((fs::path(o.scratch) / "probe.bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = f >= 0 && ::write(f, "x", 1) == 1;
    step("scratch_write", ok, ok ? "" : std::strerror(errno));
    if (f >= 0) ::close(f);
  }
  {
    const char* home = std::getenv("HOME");
    fs::path target = fs::path(home ? home : "/root") / "ptxbench-sandbox-probe-must-not-exist";
    int f = ::open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    bool refused = f < 0;
    int e = errno;
    if (f >= 0) {
      ::close(f);
      ::unlink(target.c_str());
    }
    bool landlock = report->landlock.active;
    step("home_write_refused", refused || !landlock,
         refused ? fmt::format("refused: {}", std::strerror(e)) : landlock ? "NOT refused" : "not refused: Landlock off");
  }
  if (o.tool != "none") {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    int e = errno;
    if (s >= 0) ::close(s);
    bool audit = o.mode == "audit";
    step("socket_refused", s < 0 || audit || !report->seccomp.active,
         s < 0 ? fmt::format("refused: {}", std::strerror(e)) : "NOT refused");
  }
  send_text(sock, "done");
  std::fflush(stderr);
  if (o.final_violation) {
    // As a candidate would: a raw execve. The sandbox must end the process with its report.
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    ::syscall(SYS_execve, "/bin/true", argv, nullptr);
    std::fprintf(stderr, "step final_violation: FAILED (execve was not stopped)\n");
    return 5;
  }
  return 0;
}

// ---- parent: the harness side ----

int parent_main(const options& o, const char* self) {
  char dir_template[] = "/tmp/ptxbench-probe-XXXXXX";
  if (!::mkdtemp(dir_template)) return std::perror("mkdtemp"), 3;
  fs::path dir = dir_template;
  fs::path scratch = dir / "scratch";
  fs::create_directories(scratch);
  fs::path sock_path = dir / "s";
  fs::path log = dir / "child.log";

  int listener = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock_path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 1) != 0)
    return std::perror("listen"), 3;

  std::vector<std::string> argv;
  std::istringstream ws(o.wrapper);
  for (std::string w; ws >> w;) argv.push_back(w);
  argv.insert(argv.end(), {self, "--child", "--connect", sock_path.string(), "--scratch", scratch.string(), "--mode",
                           o.mode, "--tool", o.tool, "--candidate", o.candidate});
  for (const auto& d : o.disabled) argv.insert(argv.end(), {"--disable", d});
  if (o.final_violation) argv.push_back("--final-violation");
  if (o.dry_run) argv.push_back("--dry-run");

  // Fork before this process touches CUDA, as the harness's runner start does.
  pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    // As runner_client does: the tools and libraries put their temporary files (Nsight Compute's
    // lock directory, TMPDIR/nvidia/nsight_compute) in the scratch folder the sandbox lets them write.
    ::setenv("TMPDIR", scratch.c_str(), 1);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }

  std::string failed_step;
  auto fail = [&](const std::string& what) {
    if (failed_step.empty()) failed_step = what;
  };
  void* buf = nullptr;
  cudaError_t e = o.dry_run ? cudaErrorNoDevice : cudaMalloc(&buf, k_elements * sizeof(float));
  std::vector<float> host(k_elements);
  for (int i = 0; i < k_elements; ++i) host[i] = float(i % 1000);
  cudaIpcMemHandle_t handle{};
  if (e == cudaSuccess) e = cudaMemcpy(buf, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaIpcGetMemHandle(&handle, buf);
  if (e != cudaSuccess && !o.dry_run) fail("parent_cuda: " + cuda_text(e));

  // Wait for the child to connect, or to die trying (a missing tool, a crash at start-up).
  int conn = -1, status = 0;
  bool reaped = false;
  for (int waited = 0; conn < 0 && !reaped && waited < 180; ++waited) {
    fd_set set;
    FD_ZERO(&set);
    FD_SET(listener, &set);
    timeval tv{1, 0};
    if (::select(listener + 1, &set, nullptr, nullptr, &tv) > 0) conn = ::accept(listener, nullptr, nullptr);
    else reaped = ::waitpid(child, &status, WNOHANG) == child;
  }
  if (conn < 0) fail("connect: the child never connected");
  bool sent = false, done = false;
  while (conn >= 0) {
    std::string m = receive_text(conn, 300);
    if (m.empty()) break;
    if (m.rfind("report-json ", 0) == 0) {
      std::printf("  %s\n", m.c_str());
    } else if (m.rfind("report ", 0) == 0) {
      std::printf("  %s\n", m.c_str() + 7);
      if (!sent && failed_step.empty()) {
        std::string h = "H" + std::string(reinterpret_cast<const char*>(&handle), sizeof handle);
        sent = send_text(conn, h);
      }
    } else if (m == "done") {
      done = true;
    } else {
      std::printf("  %s\n", m.c_str());
      if (m.find(": FAILED") != std::string::npos) fail(m.substr(5, m.find(':') - 5) + ":" + m.substr(m.find(':') + 1));
    }
  }
  if (!done) fail("the child ended before finishing its steps");
  if (!reaped) ::waitpid(child, &status, 0);

  // The buffer must hold what the candidate's kernel computed through IPC: 2x + 1.
  if (done && e == cudaSuccess) {
    std::vector<float> back(k_elements);
    cudaMemcpy(back.data(), buf, back.size() * sizeof(float), cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < k_elements; ++i) wrong += back[i] != 2.0f * host[i] + 1.0f;
    std::printf("  step ipc_result_in_parent: %s\n", wrong ? fmt::format("FAILED ({} wrong values)", wrong).c_str() : "ok");
    if (wrong) fail("ipc_result_in_parent: the kernel's writes did not arrive");
  }
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto violation = sandbox::find_violation(text);
  std::string ended = WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                        : fmt::format("signal {}", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  std::printf("  child ended: %s%s\n", ended.c_str(), violation ? ("; log: " + *violation).c_str() : "");
  if (o.final_violation && (!violation || violation->find("attempted execve") == std::string::npos))
    fail("final_violation: the raw execve was not reported");
  if (!o.final_violation && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    fail("exit: the child (or its tool) ended with " + ended);
  if (!failed_step.empty()) {
    std::printf("  --- child log (tail) ---\n%s\n", text.substr(text.size() > 4000 ? text.size() - 4000 : 0).c_str());
    std::printf("CASE %s: FAILED at %s\n", o.case_name.c_str(), failed_step.c_str());
  } else {
    std::printf("CASE %s: works\n", o.case_name.c_str());
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return failed_step.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--case") o.case_name = next();
    else if (a == "--mode") o.mode = next();
    else if (a == "--tool") o.tool = next();
    else if (a == "--disable") o.disabled.push_back(next());
    else if (a == "--wrapper") o.wrapper = next();
    else if (a == "--final-violation") o.final_violation = true;
    else if (a == "--dry-run") o.dry_run = true;
    else if (a == "--candidate") o.candidate = next();
    else if (a == "--child") o.child = true;
    else if (a == "--connect") o.connect_path = next();
    else if (a == "--scratch") o.scratch = next();
    else {
      std::fprintf(stderr, "ptxbench-sandbox-probe: unknown argument '%s' (see the header of sandbox_probe.cc)\n", a.c_str());
      return 2;
    }
  }
  if (o.mode != "enforce" && o.mode != "audit") return std::fprintf(stderr, "--mode: enforce or audit\n"), 2;
  if (o.mode == "audit" && o.final_violation)
    return std::fprintf(stderr, "--final-violation needs --mode enforce (audit would really run execve)\n"), 2;
  if (o.candidate.empty()) o.candidate = (fs::path(argv[0]).parent_path() / "libptxbench_sandbox_probe_candidate.so").string();
  o.candidate = fs::absolute(o.candidate).string();
  if (o.child) return child_main(o);
  return parent_main(o, fs::absolute(argv[0]).c_str());
}
