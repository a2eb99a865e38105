// ptxbench-runner: the candidate process. It loads one untrusted candidate shared object and calls
// it on buffers the trusted harness shares through CUDA IPC, one call at a time, and nothing else:
// it links no vendor library, owns no reference output, and decides nothing. What it reports (the
// GPU span of a call, and the audit of its launches) is cross-checked by the harness against its own
// clock (docs/trusted-timing.md).
//
//   ptxbench-runner --connect SOCKET --token TOKEN [--sync-fd FD]
//
// Protocol (one JSON message each way per step, over the private socket):
//   runner → hello{token,pid}; harness → setup{so | plan,symbol,mode,device,timing,sandbox};
//   runner → ready{pid,cupti,audit,audit_error,sync,sandbox} | error{phase: load | sandbox | run, sandbox once applied}
//   harness → prepare{nonce,tensors,noop,sync}; runner → prepared{nonce} | error
//   then either (sync false)  harness → go{nonce};  runner → done{nonce,ok,error,span_ns,records,kernels,method,audit}
//   or (sync true, the shared page of --sync-fd, core/sync_channel.h): the harness writes go = nonce
//   on the page, the runner calls the candidate, synchronises the device, writes done = nonce on the
//   page, and only then (markers, CUPTI flush) sends the same done{...} message over the socket.
//   harness → shutdown
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include <cuda_runtime.h>

#include "core/message_channel.h"
#include "core/sync_channel.h"
#include "gpu/common/activity_tracer.h"
#include "gpu/common/ipc_tensor.h"
#include "gpu/common/launch_audit.h"
#include "gpu/runner/launch_counter.h"
#include "gpu/runner/marker_kernel.h"
#include "gpu/runner/plan_launcher.h"
#include "ptxbench/abi.h"
#include "sandbox/runner_integration.h"

using namespace ptxbench;

namespace {

struct mapped_tensor {
  gpu::ipc_tensor desc;
  void* base = nullptr;     // the IPC mapping of the whole allocation
  void* data = nullptr;     // what the candidate sees (IPC tensor, or a private copy)
  void* private_copy = nullptr;
  uint64_t scalar = 0;      // a scalar input's value, copied to the host (the ABI passes scalars by host pointer)
};

struct runner_state {
  message_channel channel;
  std::string mode = "plain";  // "plain" | "private"
  bool timing = false;
  int device = 0;
  int32_t abi_version = 0;
  ptxbench_entry_fn entry = nullptr;        // ABI version 2
  ptxbench_entry_v1_fn entry_v1 = nullptr;  // ABI version 1
  cudaStream_t stream = nullptr;
  std::unique_ptr<gpu::activity_tracer> tracer;
  std::unique_ptr<gpu::launch_counter> counter;  // the launch audit; only with the tracer
  std::string audit_error;                       // why there is no counter
  sync_channel sync;                             // the shared go/done page (--sync-fd), if any
  bool sync_call = false;                        // this call's go/done travel on the page
  std::vector<uint32_t> marker_before;           // correlation ids of the marker launched in prepare
  std::vector<mapped_tensor> tensors;
  std::vector<ptxbench_tensor> args;
  // IPC mappings by handle, opened once and kept for the runner's life: the harness's buffer sets
  // live as long as the harness and are reused call after call, so there is no reason to map and
  // unmap them around every call. (This was first tried as the cause of honest calls' prepare
  // interval exceeding the no-op calls' on an H200; it was not — bench/results/h200/trusted_timing.)
  // A pointer a candidate keeps from an earlier call still points into a live set of the harness's;
  // that set's outputs are poisoned and its inputs rewritten before it is used again, so nothing
  // written there can pass for a result.
  std::map<std::string, void*> ipc_mappings;
  bool noop = false;
  bool plan = false;            // a launch plan replays: every argument, scalars too, is device memory
  void* noop_buffer = nullptr;  // a no-op call still puts one tiny memset on the GPU (see handle_go)
  int64_t nonce = -1;
  ordered_json sandbox_report;  // once applied: sent with "ready" and with any later error
};

[[noreturn]] void fail(runner_state& st, const std::string& message, int code = 3) {
  // Exit code 4 marks a candidate that could not even be loaded (upstream calls that a compile error);
  // 5 a sandbox that could not be applied (the harness's problem, not the candidate's).
  ordered_json m = {{"type", "error"}, {"nonce", st.nonce}, {"error", message},
                    {"phase", code == 4 ? "load" : code == 5 ? "sandbox" : "run"}};
  if (!st.sandbox_report.is_null()) m["sandbox"] = st.sandbox_report;  // a load error's verdict records it too
  (void)st.channel.send(m);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

void check(runner_state& st, cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(st, std::string(what) + " failed: " + cuda_error_text(e));
}

void release(runner_state& st) {
  for (auto& t : st.tensors)
    if (t.private_copy) cudaFree(t.private_copy);
  st.tensors.clear();
  st.args.clear();
}

void send_ready(runner_state& st) {
  (void)st.channel.send({{"type", "ready"},
                         {"pid", ::getpid()},
                         {"cupti", st.tracer != nullptr},
                         {"audit", st.counter != nullptr},
                         {"audit_error", st.audit_error},
                         {"sync", st.sync.valid()},
                         {"sandbox", st.sandbox_report}});
}

void handle_setup(runner_state& st, const ordered_json& m) {
  st.mode = m.value("mode", "plain");
  st.timing = m.value("timing", false);
  st.device = m.value("device", 0);
  check(st, cudaSetDevice(st.device), "cudaSetDevice");
  // Spin, not yield, in cudaDeviceSynchronize: "done" follows the GPU's end within microseconds.
  // Best effort (an older driver refuses it on an initialised context); the error must not linger
  // for the first call's cudaGetLastError.
  (void)cudaSetDeviceFlags(cudaDeviceScheduleSpin);
  (void)cudaGetLastError();
  check(st, cudaFree(nullptr), "CUDA context creation");
  check(st, cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  if (st.timing) {
    auto tr = gpu::activity_tracer::start();
    if (tr) st.tracer = std::move(*tr);  // otherwise the harness's wall clock is the only measure
    // The second channel of the launch audit, before any candidate code runs (docs/trusted-timing.md).
    if (st.tracer) {
      auto c = gpu::launch_counter::start();
      if (c) st.counter = std::move(*c);
      else st.audit_error = c.err().message;
    } else {
      st.audit_error = "no CUPTI activity tracing";
    }
  }
  // A launch plan (a Triton candidate, replayed): its verified cubins are loaded before the sandbox —
  // loading a module runs no host code — and the plan becomes the entry point.
  std::string plan = m.value("plan", "");
  if (!plan.empty()) {
    if (auto loaded = gpu::load_plan(plan); !loaded) fail(st, "cannot load the launch plan: " + loaded.err().message, 4);
    st.abi_version = 2;
    st.entry = gpu::plan_entry;
    st.plan = true;
  }
  // The sandbox goes on here: after the harness socket and the CUDA context exist (both need what it
  // then refuses), before any candidate code runs (dlopen runs its static constructors).
  auto confined = sandbox::apply_requested_sandbox(m);
  if (!confined) fail(st, confined.err().message, 5);
  st.sandbox_report = *confined;
  if (!plan.empty()) {
    send_ready(st);
    return;
  }
  std::string so = m.value("so", "");
  std::string symbol = m.value("symbol", "run");
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) fail(st, std::string("cannot load the candidate: ") + dlerror(), 4);
  std::string entry_name = "ptxbench_entry_" + symbol, abi_name = "ptxbench_abi_version_" + symbol;
  void* entry = dlsym(lib, entry_name.c_str());
  auto abi = reinterpret_cast<int32_t (*)()>(dlsym(lib, abi_name.c_str()));
  if (!entry || !abi)
    fail(st, "the candidate does not export " + entry_name + "; end the file with PTXBENCH_EXPORT(" + symbol +
                 ", <dtypes of the inputs then outputs>)", 4);
  // The entry's signature depends on the ABI version it was built against; both are supported.
  st.abi_version = abi();
  if (st.abi_version == 2) st.entry = reinterpret_cast<ptxbench_entry_fn>(entry);
  else if (st.abi_version == 1) st.entry_v1 = reinterpret_cast<ptxbench_entry_v1_fn>(entry);
  else
    fail(st, "the candidate was built against kernel ABI version " + std::to_string(st.abi_version) +
                 "; this runner loads versions 1 and 2", 4);
  send_ready(st);
}

void handle_prepare(runner_state& st, const ordered_json& m) {
  release(st);
  st.nonce = m.value("nonce", int64_t{-1});
  st.noop = m.value("noop", false);
  st.sync_call = m.value("sync", false) && st.sync.valid();
  for (const auto& tj : m.value("tensors", ordered_json::array())) {
    auto desc = gpu::ipc_tensor_from_json(tj);
    if (!desc) fail(st, desc.err().message);
    mapped_tensor t;
    t.desc = *desc;
    std::string key(reinterpret_cast<const char*>(&t.desc.handle), sizeof(t.desc.handle));
    auto known = st.ipc_mappings.find(key);
    if (known != st.ipc_mappings.end()) {
      t.base = known->second;
    } else {
      check(st, cudaIpcOpenMemHandle(&t.base, t.desc.handle, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
      st.ipc_mappings.emplace(std::move(key), t.base);
    }
    t.data = static_cast<char*>(t.base) + t.desc.offset;
    if (st.mode == "private") {
      // Exact-size private buffers: the memory checker's padding sees every byte past the end, and
      // a profiler's kernel replay saves and restores ordinary allocations.
      check(st, cudaMalloc(&t.private_copy, t.desc.bytes), "cudaMalloc");
      if (t.desc.is_output) check(st, cudaMemset(t.private_copy, 0xFF, t.desc.bytes), "cudaMemset");
      else check(st, cudaMemcpy(t.private_copy, t.data, t.desc.bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
      t.data = t.private_copy;
    }
    if (t.desc.shape.empty() && !t.desc.is_output) {
      // A scalar (definition shape null): the candidate gets its value on the host, as the kernel ABI
      // promises (tensor_view::scalar<T>()), from the prepare message — never from the device buffer,
      // which the harness may fill only after "prepared" (the value is checked there: 1-8 bytes).
      if (t.desc.value.empty()) fail(st, "scalar input " + t.desc.name + ": the prepare message carries no value");
      std::memcpy(&t.scalar, t.desc.value.data(), t.desc.value.size());
    }
    st.tensors.push_back(t);
  }
  for (auto& t : st.tensors) {
    ptxbench_tensor a{};
    a.data = t.desc.shape.empty() && !t.desc.is_output && !st.plan ? static_cast<void*>(&t.scalar) : t.data;
    a.dtype = static_cast<int32_t>(t.desc.type);
    a.ndim = static_cast<int32_t>(t.desc.shape.size());
    int64_t stride = 1;
    for (int i = a.ndim - 1; i >= 0; --i) {
      a.sizes[i] = t.desc.shape[i];
      a.strides[i] = stride;
      stride *= t.desc.shape[i];
    }
    a.device = st.device;
    a.is_output = t.desc.is_output ? 1 : 0;
    st.args.push_back(a);
  }
  // A persisting-L2 carve-out left by an earlier call would survive the harness's flush.
  cudaCtxResetPersistingL2Cache();
  // The marker before the call: its record shows kernel records were on when the call was prepared.
  st.marker_before.clear();
  if (st.counter)
    st.marker_before = st.counter->launch_marker([&] { check(st, gpu::launch_marker_kernel(st.stream), "the marker kernel"); });
  check(st, cudaDeviceSynchronize(), "synchronising before the call");
  (void)st.channel.send({{"type", "prepared"}, {"nonce", st.nonce}});
}

// The name the harness reads for a version-2 error kind; version 1 reports no kind.
const char* error_kind_name(int32_t kind) {
  switch (kind) {
    case PTXBENCH_ERROR_ARGUMENT_COUNT: return "argument_count";
    case PTXBENCH_ERROR_DTYPE: return "dtype";
    case PTXBENCH_ERROR_SHAPE: return "shape";
    case PTXBENCH_ERROR_EXCEPTION: return "exception";
    default: return "unspecified";
  }
}

// True when a record with one of `ids` arrived or, failing that (no ids, or ids the records do not
// carry: see gpu::audit_json's "count" matching), a record with the marker's name in `window`.
template <typename Window>
bool marker_recorded(const std::vector<uint32_t>& ids, const std::unordered_set<uint32_t>& recorded,
                     const std::vector<gpu::activity_record>& records, Window in_window) {
  if (std::any_of(ids.begin(), ids.end(), [&](uint32_t id) { return recorded.count(id) > 0; })) return true;
  return std::any_of(records.begin(), records.end(), [&](const gpu::activity_record& r) {
    return gpu::is_marker_kernel_name(r.name) && in_window(r);
  });
}

// The audit of one finished call (docs/trusted-timing.md): every launch the callbacks saw needs a
// record, both markers need records, the callbacks must still be on and must see the second marker.
// [t0, t1] is the call on the CUPTI clock.
ordered_json audit_call(runner_state& st, gpu::audit_observations seen, const std::vector<uint32_t>& marker_after,
                        std::vector<gpu::activity_record>& records, uint64_t t0, uint64_t t1) {
  auto ids_of = [](const std::vector<gpu::activity_record>& rs) {
    std::unordered_set<uint32_t> ids;
    for (const auto& r : rs) ids.insert(r.correlation_id);
    return ids;
  };
  auto before = [&](const gpu::activity_record& r) { return r.end != 0 && r.end <= t0; };
  auto after = [&](const gpu::activity_record& r) { return r.start >= t1; };
  auto recorded = ids_of(records);
  auto complete = [&] {
    return gpu::unrecorded_launches(seen.launches, recorded).empty() &&
           marker_recorded(st.marker_before, recorded, records, before) &&
           marker_recorded(marker_after, recorded, records, after);
  };
  // Before calling anything missing, give CUPTI a moment for records still on their way: polled in
  // steps of 250 µs up to 4 ms (it was one fixed 2 ms sleep, paid by every such call even when the
  // records came a few µs later: time that every timed pair spends after "done").
  for (int waited_us = 0; waited_us < 4000 && !complete(); waited_us += 250) {
    ::usleep(250);
    auto late = st.tracer->drain();
    records.insert(records.end(), late.begin(), late.end());
    recorded = ids_of(records);
  }
  seen.marker_before = marker_recorded(st.marker_before, recorded, records, before);
  seen.marker_after = marker_recorded(marker_after, recorded, records, after);
  seen.marker_after_counted = !marker_after.empty();
  seen.callbacks_enabled = st.counter->callbacks_enabled();
  seen.kernel_records_in_call = static_cast<int>(std::count_if(records.begin(), records.end(), [&](const gpu::activity_record& r) {
    return !r.name.empty() && !gpu::is_marker_kernel_name(r.name) && r.start >= t0 && r.end <= t1;
  }));
  return gpu::audit_json(seen, recorded);
}

void handle_go(runner_state& st) {
  uint64_t t0 = st.tracer ? st.tracer->now() : 0;
  if (st.counter) st.counter->begin_call();
  const char* err = nullptr;
  const char* kind = "unspecified";
  if (!st.noop && st.entry) {
    int32_t k = st.entry(st.args.data(), static_cast<int32_t>(st.args.size()), st.stream, &err);
    if (k != PTXBENCH_OK) {
      kind = error_kind_name(k);
      if (!err) err = "the candidate reported an error without a message";
    } else {
      err = nullptr;
    }
  } else if (!st.noop) {
    err = st.entry_v1(st.args.data(), static_cast<int32_t>(st.args.size()), st.stream);
  } else {
    // Calibration: the same round trip as a real call, including the GPU switching to this
    // process's context and one launch, but no candidate work.
    if (!st.noop_buffer) check(st, cudaMalloc(&st.noop_buffer, 256), "cudaMalloc");
    check(st, cudaMemsetAsync(st.noop_buffer, 0, 4, st.stream), "cudaMemsetAsync");
  }
  cudaError_t e = cudaDeviceSynchronize();  // every stream of this process, not only ours
  if (e == cudaSuccess) e = cudaGetLastError();
  uint64_t t1 = st.tracer ? st.tracer->now() : 0;
  gpu::audit_observations seen;
  if (st.counter) seen = st.counter->end_call();
  // The harness's clock stops here (the shared page); everything below is outside its bound.
  if (st.sync_call) st.sync.signal_done(static_cast<uint32_t>(st.nonce));
  bool ok = !err && e == cudaSuccess;
  std::vector<uint32_t> marker_after;
  if (st.counter && ok) {
    marker_after = st.counter->launch_marker([&] { (void)gpu::launch_marker_kernel(st.stream); });
    (void)cudaDeviceSynchronize();
  }
  ordered_json done = {{"type", "done"}, {"nonce", st.nonce}};
  if (st.tracer) {
    auto records = st.tracer->drain();
    std::unordered_set<uint32_t> call_ids;  // the call's launches, for records timestamped just outside it
    for (const auto& l : seen.launches)
      if (!l.captured) call_ids.insert(l.correlation_ids.begin(), l.correlation_ids.end());
    if (st.counter && ok) done["audit"] = audit_call(st, std::move(seen), marker_after, records, t0, t1);
    auto span = gpu::activity_tracer::span_of(records, t0, t1, call_ids);
    done["method"] = "cupti";
    done["span_ns"] = span.end_ns - span.start_ns;
    done["records"] = span.records;
    done["kernels"] = span.kernels;
  } else {
    done["method"] = "none";
  }
  if (err) {
    done["ok"] = false;
    done["error"] = std::string("the candidate reported: ") + err;
    done["error_kind"] = kind;
  } else if (e != cudaSuccess) {
    done["ok"] = false;
    done["error"] = "CUDA error after the candidate's call: " + cuda_error_text(e);
  } else {
    done["ok"] = true;
    if (st.mode == "private")
      for (const auto& t : st.tensors)
        if (t.desc.is_output) cudaMemcpy(static_cast<char*>(t.base) + t.desc.offset, t.private_copy, t.desc.bytes,
                                         cudaMemcpyDeviceToDevice);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  release(st);
  (void)st.channel.send(done);
  if (e != cudaSuccess) _exit(3);  // the context is unusable after a sticky error
}

// After "prepared" on a shared-page call: wait for go = nonce (spin, then a futex), then call.
void await_go_and_call(runner_state& st) {
  sync_channel::wait_options o;
  o.liveness_fd = st.channel.fd();  // the harness gone: stop waiting
  auto w = st.sync.wait_go(static_cast<uint32_t>(st.nonce), o);
  if (w != sync_channel::wait_result::signalled) _exit(0);
  handle_go(st);
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path, token;
  int sync_fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--connect") socket_path = argv[i + 1];
    else if (k == "--token") token = argv[i + 1];
    else if (k == "--sync-fd") sync_fd = std::atoi(argv[i + 1]);
  }
  if (socket_path.empty()) {
    std::fprintf(stderr, "usage: ptxbench-runner --connect SOCKET --token TOKEN (started by ptxbench-harness)\n");
    return 2;
  }
  runner_state st;
  auto ch = message_channel::connect(socket_path);
  if (!ch) {
    std::fprintf(stderr, "ptxbench-runner: %s\n", ch.err().message.c_str());
    return 3;
  }
  st.channel = std::move(*ch);
  if (sync_fd >= 0) {
    // Without the page the harness falls back to go/done over the socket ("sync": false in ready).
    auto page = sync_channel::attach(sync_fd);
    if (page) st.sync = std::move(*page);
    else std::fprintf(stderr, "ptxbench-runner: %s; go/done use the socket\n", page.err().message.c_str());
  }
  (void)st.channel.send({{"type", "hello"}, {"token", token}, {"pid", ::getpid()}});
  while (true) {
    auto r = st.channel.receive(-1);
    if (r.kind != message_channel::receive_kind::message) return 0;  // the harness went away
    std::string type = r.message.value("type", "");
    if (type == "setup") handle_setup(st, r.message);
    else if (type == "prepare") {
      handle_prepare(st, r.message);
      if (st.sync_call) await_go_and_call(st);
    }
    else if (type == "go") handle_go(st);
    else if (type == "shutdown") break;
  }
  release(st);
  std::fflush(stdout);
  // _exit: the candidate's static destructors are not our concern, and must not delay the harness.
  _exit(0);
}
