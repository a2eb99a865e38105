#include "gpu/runner/launch_counter.h"

#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <iterator>

namespace ptxbench::gpu {
namespace {

// Every API that puts kernels on the GPU from the host (device-side launches need no host call and
// only add records, which the audit tolerates).
constexpr CUpti_CallbackId k_runtime_launches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};
constexpr CUpti_CallbackId k_driver_launches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

// Stream capture: launches into a capturing stream are recorded into a graph, not executed.
constexpr CUpti_CallbackId k_runtime_capture_begins[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030,
};
constexpr CUpti_CallbackId k_runtime_capture_ends[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000,
};
constexpr CUpti_CallbackId k_driver_capture_begins[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,         CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,      CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,  CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
};
constexpr CUpti_CallbackId k_driver_capture_ends[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
};

bool contains(const CUpti_CallbackId* first, const CUpti_CallbackId* last, CUpti_CallbackId id) {
  return std::find(first, last, id) != last;
}

bool is_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return contains(std::begin(k_runtime_launches), std::end(k_runtime_launches), cbid);
  return contains(std::begin(k_driver_launches), std::end(k_driver_launches), cbid);
}

bool is_graph(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 || cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

thread_local launch_grouper t_grouper;
thread_local bool t_marker = false;  // the runner's own marker launch is in progress on this thread
std::atomic<int> g_active_captures{0};  // stream captures begun and not yet ended, process-wide

// Keeps the count of active stream captures (begin: +1 when it succeeded; end: -1 whatever it returned,
// the capture is over either way).
void track_capture(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, bool ok) {
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  bool begin = runtime ? contains(std::begin(k_runtime_capture_begins), std::end(k_runtime_capture_begins), cbid)
                       : contains(std::begin(k_driver_capture_begins), std::end(k_driver_capture_begins), cbid);
  bool end = runtime ? contains(std::begin(k_runtime_capture_ends), std::end(k_runtime_capture_ends), cbid)
                     : contains(std::begin(k_driver_capture_ends), std::end(k_driver_capture_ends), cbid);
  if (begin && ok) g_active_captures.fetch_add(1);
  if (end) {
    int n = g_active_captures.load();
    while (n > 0 && !g_active_captures.compare_exchange_weak(n, n - 1)) {
    }
  }
}

void CUPTIAPI on_api_call(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    // A graph node created inside a launch call: the launch was captured, not executed.
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) t_grouper.mark_captured();
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  bool launch = is_launch(domain, cbid);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && !launch && cb->callbackSite == CUPTI_API_ENTER) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    t_grouper.enter(launch, launch && cb->functionName ? cb->functionName : "", launch && is_graph(domain, cbid),
                    cb->correlationId);
    return;
  }
  // cudaError_t and CUresult are both int-sized enums with 0 for success.
  bool ok = cb->functionReturnValue && *static_cast<const int*>(cb->functionReturnValue) == 0;
  track_capture(domain, cbid, ok);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && !launch) return;  // a driver capture call: not part of the grouping
  if (auto l = t_grouper.exit(ok)) {
    if (g_active_captures.load() > 0) l->captured = true;  // possibly into a capturing stream (the coarse signal)
    static_cast<launch_counter*>(userdata)->record(std::move(*l), t_marker);
  }
}

}  // namespace

result<std::unique_ptr<launch_counter>> launch_counter::start() {
  std::unique_ptr<launch_counter> c(new launch_counter());
  CUpti_SubscriberHandle sub = nullptr;
  CUptiResult r = cuptiSubscribe(&sub, on_api_call, c.get());
  auto fail = [&](const char* what) {
    const char* s = nullptr;
    cuptiGetResultString(r, &s);
    return make_error(std::string("CUPTI ") + what + ": " + (s ? s : "unknown error"));
  };
  if (r != CUPTI_SUCCESS) return fail("subscribe");
  c->m_subscriber = sub;
  r = cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (r != CUPTI_SUCCESS) return fail("enabling the runtime API callbacks");
  auto enable_driver = [&](const CUpti_CallbackId* first, const CUpti_CallbackId* last) {
    for (; first != last && r == CUPTI_SUCCESS; ++first) r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, *first);
    return r == CUPTI_SUCCESS;
  };
  if (!enable_driver(std::begin(k_driver_launches), std::end(k_driver_launches)) ||
      !enable_driver(std::begin(k_driver_capture_begins), std::end(k_driver_capture_begins)) ||
      !enable_driver(std::begin(k_driver_capture_ends), std::end(k_driver_capture_ends)))
    return fail("enabling the driver's launch and stream-capture callbacks");
  r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
  if (r != CUPTI_SUCCESS) return fail("enabling the graph-node callback");
  // The launch callbacks this CUPTI reports as on: what callbacks_enabled() checks after each call (a
  // newer or older CUPTI may not know every id in the lists).
  auto note_if_on = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    uint32_t on = 0;
    if (cuptiGetCallbackState(&on, sub, domain, cbid) == CUPTI_SUCCESS && on) c->m_watched.push_back({domain, cbid});
  };
  for (auto cbid : k_runtime_launches) note_if_on(CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  for (auto cbid : k_driver_launches) note_if_on(CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  if (c->m_watched.empty()) return make_error("CUPTI reports none of the launch callbacks as enabled");
  return c;
}

launch_counter::~launch_counter() {
  if (m_subscriber) cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(m_subscriber));
}

void launch_counter::record(observed_launch launch, bool marker) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (marker) {
    m_marker_ids.insert(m_marker_ids.end(), launch.correlation_ids.begin(), launch.correlation_ids.end());
    return;
  }
  switch (m_phase) {
    case phase::setup: break;  // the candidate's static constructors: before any timed work
    case phase::between: ++m_outside; break;
    case phase::in_call: m_call.push_back(std::move(launch)); break;
  }
}

void launch_counter::begin_call() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_call.clear();
  m_phase = phase::in_call;
}

audit_observations launch_counter::end_call() {
  std::lock_guard<std::mutex> lock(m_mutex);
  audit_observations seen;
  seen.launches = std::move(m_call);
  m_call.clear();
  seen.launches_outside_calls = m_outside;
  m_outside = 0;
  m_phase = phase::between;
  return seen;
}

std::vector<uint32_t> launch_counter::launch_marker(const std::function<void()>& launch) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_marker_ids.clear();
  }
  t_marker = true;
  launch();
  t_marker = false;
  std::lock_guard<std::mutex> lock(m_mutex);
  return std::move(m_marker_ids);
}

bool launch_counter::callbacks_enabled() const {
  auto sub = static_cast<CUpti_SubscriberHandle>(m_subscriber);
  for (const auto& [domain, cbid] : m_watched) {
    uint32_t on = 0;
    if (cuptiGetCallbackState(&on, sub, static_cast<CUpti_CallbackDomain>(domain), cbid) != CUPTI_SUCCESS || !on)
      return false;
  }
  return true;
}

}  // namespace ptxbench::gpu
