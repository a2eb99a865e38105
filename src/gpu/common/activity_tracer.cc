#include "gpu/common/activity_tracer.h"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace ptxbench::gpu {
namespace {

std::mutex g_mutex;
std::vector<activity_record> g_records;  // guarded by g_mutex; filled by CUPTI's completion callback
bool g_started = false;

constexpr std::size_t k_buffer_bytes = 8u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, k_buffer_bytes));
  *size = k_buffer_bytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
        g_records.push_back({k->start, k->end, k->correlationId, k->name ? k->name : "?"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
        g_records.push_back({m->start, m->end, m->correlationId, ""});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
        g_records.push_back({m->start, m->end, m->correlationId, ""});
        break;
      }
      default: break;
    }
  }
  std::free(buffer);
}

std::string cupti_message(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "unknown CUPTI error";
}

}  // namespace

result<std::unique_ptr<activity_tracer>> activity_tracer::start() {
  if (g_started) return make_error("CUPTI activity tracing is already active in this process");
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) return make_error("CUPTI: " + cupti_message(r));
  for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
    r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) return make_error("CUPTI: " + cupti_message(r));
  }
  g_started = true;
  return std::unique_ptr<activity_tracer>(new activity_tracer());
}

activity_tracer::~activity_tracer() {
  for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
    cuptiActivityDisable(kind);
  cuptiActivityFlushAll(1);
  g_started = false;
}

uint64_t activity_tracer::now() const {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

std::vector<activity_record> activity_tracer::drain() {
  cuptiActivityFlushAll(1);
  std::vector<activity_record> recs;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    recs.swap(g_records);
  }
  return recs;
}

gpu_span activity_tracer::collect(uint64_t t0, uint64_t t1) { return span_of(drain(), t0, t1); }

gpu_span activity_tracer::span_of(const std::vector<activity_record>& records, uint64_t t0, uint64_t t1,
                                  const std::unordered_set<uint32_t>& call_ids) {
  std::vector<const activity_record*> recs;
  for (const auto& r : records) recs.push_back(&r);
  std::sort(recs.begin(), recs.end(), [](const activity_record* a, const activity_record* b) { return a->start < b->start; });
  gpu_span span;
  uint64_t covered_to = 0;  // records in start order: the busy time is what each adds past the last end
  for (const auto* r : recs) {
    const bool in_window = r->start >= t0 && r->end <= t1;
    const bool timed = r->start != 0 && r->end != 0;
    const bool of_the_call = timed && r->correlation_id != 0 && call_ids.count(r->correlation_id) > 0;
    if (!in_window && !of_the_call) continue;
    if (span.records == 0 || r->start < span.start_ns) span.start_ns = r->start;
    if (span.records == 0 || r->end > span.end_ns) span.end_ns = r->end;
    ++span.records;
    if (!r->name.empty()) span.kernels.push_back(r->name);
    uint64_t from = std::max(r->start, covered_to);
    if (r->end > from) span.busy_ns += r->end - from;
    covered_to = std::max(covered_to, r->end);
  }
  return span;
}

}  // namespace ptxbench::gpu
