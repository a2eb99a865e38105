// CPU-only smoke test of the built example libraries (no GPU needed): each one loads, exports the
// PTXBench entry points with the current ABI version (include/ptxbench/abi.h, version 2: the entry
// takes the stream and returns an error kind plus a message), rejects a wrong argument count
// (PTXBENCH_ERROR_ARGUMENT_COUNT), a wrong dtype (PTXBENCH_ERROR_DTYPE) and an unsupported shape
// (any error kind) with a message, before touching the GPU, and host_segfault's run() really dies
// with SIGSEGV. Every call passes the default stream (nullptr): nothing is launched.
// Usage: abi_smoke LIB_DIR   (libraries named like gemm_plain_tiled.so)
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <ptxbench/abi.h>

namespace {

int g_failures = 0;

void fail(const std::string& lib, const std::string& what) {
  std::printf("FAIL %s: %s\n", lib.c_str(), what.c_str());
  ++g_failures;
}

ptxbench_tensor fake(int32_t dtype, std::vector<int64_t> shape, bool out) {
  ptxbench_tensor t{};
  t.data = reinterpret_cast<void*>(uintptr_t(0x100000));  // never dereferenced: the calls below fail first
  t.dtype = dtype;
  t.ndim = int32_t(shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.sizes[i] = shape[size_t(i)];
    t.strides[i] = stride;
    stride *= shape[size_t(i)];
  }
  t.is_output = out ? 1 : 0;
  return t;
}

enum class kind { gemm, fwd, bwd };

// Arguments with the right dtypes but a shape every example rejects (not a multiple of 64).
std::vector<ptxbench_tensor> bad_shape_args(kind k) {
  const int32_t bf = PTXBENCH_BFLOAT16, f32 = PTXBENCH_FLOAT32;
  const std::vector<int64_t> x = {1, 2, 100, 128}, l = {1, 2, 100};
  switch (k) {
    case kind::gemm: return {fake(bf, {100, 5120}, false), fake(bf, {7168, 5120}, false), fake(bf, {100, 7168}, true)};
    case kind::fwd: return {fake(bf, x, false), fake(bf, x, false), fake(bf, x, false), fake(bf, x, true), fake(f32, l, true)};
    case kind::bwd:
      return {fake(bf, x, false), fake(bf, x, false), fake(bf, x, false), fake(bf, x, false), fake(bf, x, false),
              fake(f32, l, false), fake(bf, x, true),  fake(bf, x, true),  fake(bf, x, true)};
  }
  return {};
}

// One call of the entry on the default stream; returns the error kind, *message the message (or "").
int32_t call(ptxbench_entry_fn entry, std::vector<ptxbench_tensor>& args, int32_t nargs, const char** message) {
  *message = nullptr;
  const int32_t kind = entry(args.data(), nargs, /*stream=*/nullptr, message);
  if (*message == nullptr) *message = "";
  return kind;
}

void check_library(const std::string& dir, const std::string& name, kind k) {
  const std::string path = dir + "/" + name + ".so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return fail(name, std::string("dlopen: ") + dlerror());
  auto version = reinterpret_cast<int32_t (*)()>(dlsym(h, "ptxbench_abi_version_run"));
  auto entry = reinterpret_cast<ptxbench_entry_fn>(dlsym(h, "ptxbench_entry_run"));
  if (version == nullptr || entry == nullptr) return fail(name, "entry points not exported");
  if (version() != PTXBENCH_ABI_VERSION) fail(name, "ABI version " + std::to_string(version()));

  std::vector<ptxbench_tensor> args = bad_shape_args(k);
  const char* msg = nullptr;
  int32_t kind = call(entry, args, int32_t(args.size()) - 1, &msg);
  if (kind != PTXBENCH_ERROR_ARGUMENT_COUNT || *msg == '\0')
    fail(name, "wrong argument count: error kind " + std::to_string(kind) + ", message '" + msg + "'");
  std::vector<ptxbench_tensor> wrong_dtype = args;
  wrong_dtype[0].dtype = PTXBENCH_FLOAT16;
  kind = call(entry, wrong_dtype, int32_t(wrong_dtype.size()), &msg);
  if (kind != PTXBENCH_ERROR_DTYPE || *msg == '\0')
    fail(name, "float16 input: error kind " + std::to_string(kind) + ", message '" + msg + "'");

  if (name == "gemm_host_segfault") {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      std::vector<ptxbench_tensor> a = bad_shape_args(k);
      const char* m = nullptr;
      call(entry, a, int32_t(a.size()), &m);
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)) fail(name, "run() did not die with SIGSEGV");
    else std::printf("ok   %-32s run() dies with SIGSEGV\n", name.c_str());
    return;
  }
  kind = call(entry, args, int32_t(args.size()), &msg);
  if (kind == PTXBENCH_OK) fail(name, "accepted an unsupported shape");
  else if (*msg == '\0') fail(name, "rejected an unsupported shape (error kind " + std::to_string(kind) + ") without a message");
  else std::printf("ok   %-32s rejects S/M = 100 (kind %d): %s\n", name.c_str(), int(kind), msg);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LIB_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  for (const char* n : {"gemm_plain_tiled", "gemm_wgmma", "gemm_wgmma_tma_pipelined", "gemm_wgmma_dead_branch",
                        "gemm_wrong_result", "gemm_out_of_bounds", "gemm_hang", "gemm_host_segfault"})
    check_library(dir, n, kind::gemm);
  for (const char* n : {"attention_plain_fwd", "attention_plain_fwd_causal", "attention_wgmma_fwd", "attention_wgmma_fwd_causal"})
    check_library(dir, n, kind::fwd);
  for (const char* n : {"attention_plain_bwd", "attention_plain_bwd_causal"}) check_library(dir, n, kind::bwd);
  std::printf("abi_smoke: %d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
