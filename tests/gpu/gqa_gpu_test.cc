// The GQA tasks on the GPU: the fp32 reference against the double-precision CPU reference on tiny
// shapes, then the cuDNN baseline against the fp32 reference on the three workloads' exact axes
// (inputs generated as the harness generates them: the suite's sequence layout, fresh page indices,
// the workload's sm_scale) at the task tolerance, over two trials with new buffers and new pages; the
// fallback to the reference; and the request checks (those need no GPU).

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "baselines/attention_reference.h"
#include "baselines/cudnn_gqa.h"
#include "baselines/gqa_cpu_reference.h"
#include "baselines/gqa_reference.h"
#include "baselines/seeded_fill.h"
#include "gpu_test_support.h"
#include "suite/sequence_layout.h"
#include "suite/task.h"

namespace ptxbench::gpu {
namespace {

using testing::all_close;
using testing::device_array;
using testing::to_float;

// The suite of this checkout: $PTXBENCH_ROOT/suite when set (bench/lib/env.sh sets it, so binaries built
// elsewhere and carried to a GPU host find it), else the source tree this binary was built from.
const suite& repo_suite() {
  static const suite s = [] {
    const char* root = std::getenv("PTXBENCH_ROOT");
    auto loaded = load_suite(root != nullptr && *root != '\0' ? std::filesystem::path(root) / "suite"
                                                               : std::filesystem::path(PTXBENCH_TEST_SUITE_ROOT));
    if (!loaded) throw std::runtime_error(loaded.err().message);
    return *loaded;
  }();
  return s;
}

template <typename T>
void upload(T* dst, const std::vector<T>& src) {
  ASSERT_EQ(cudaMemcpy(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
}

// device_tensor::numel/bytes live in the baseline interface library, which this binary does not link.
int64_t count_of(const device_tensor& t) {
  int64_t n = 1;
  for (int64_t s : t.shape) n *= s;
  return n;
}
std::size_t bytes_of(const device_tensor& t) { return static_cast<std::size_t>(count_of(t)) * dtype_bits(t.type) / 8; }

std::vector<__nv_bfloat16> host_bf16(const device_tensor& t) {
  std::vector<__nv_bfloat16> out(static_cast<std::size_t>(count_of(t)));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(out.data(), t.data, out.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

// ---------------------------------------------------------------- GPU reference vs CPU reference

struct tiny_case {
  const char* name;
  bool paged;
  int64_t page_size;
  bool causal;
  std::vector<int32_t> qo_indptr, kv_indptr, kv_indices;
  int64_t kv_rows;  // ragged rows, or pages * page_size
};

class GqaGpuReferenceVsCpu : public ::testing::TestWithParam<tiny_case> {};

TEST_P(GqaGpuReferenceVsCpu, Agree) {
  PTXB_SKIP_WITHOUT_GPU();
  const tiny_case& c = GetParam();
  const int64_t h_q = 6, h_kv = 2, d = 64, total_q = c.qo_indptr.back();
  const float scale = 0.125F;
  device_array<__nv_bfloat16> q(total_q * h_q * d), k(c.kv_rows * h_kv * d), v(c.kv_rows * h_kv * d);
  ASSERT_TRUE(fill_normal_bf16(q.get(), q.count(), 31, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(k.get(), k.count(), 32, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(v.get(), v.count(), 33, nullptr).ok());
  device_array<int32_t> qo(static_cast<int64_t>(c.qo_indptr.size())), kv(static_cast<int64_t>(c.kv_indptr.size())),
      idx(std::max<int64_t>(1, static_cast<int64_t>(c.kv_indices.size())));
  upload(qo.get(), c.qo_indptr);
  upload(kv.get(), c.kv_indptr);
  if (c.paged) upload(idx.get(), c.kv_indices);
  device_array<float> o(q.count()), lse(total_q * h_q);
  gqa_dims dims{total_q, static_cast<int64_t>(c.qo_indptr.size()) - 1, h_q, h_kv, d, c.paged, c.page_size, c.causal,
                scale};
  ASSERT_TRUE(reference_gqa_forward(q.get(), k.get(), v.get(), qo.get(), kv.get(), c.paged ? idx.get() : nullptr, dims,
                                    o.get(), lse.get(), nullptr)
                  .ok());
  auto cpu = baselines::gqa_forward_cpu(to_float(q.to_host()), to_float(k.to_host()), to_float(v.to_host()),
                                        baselines::gqa_index{c.qo_indptr, c.kv_indptr, c.kv_indices},
                                        baselines::gqa_shape{h_q, h_kv, d, c.paged, c.page_size, c.causal, scale});
  ASSERT_TRUE(cpu.ok()) << cpu.err().message;
  EXPECT_TRUE(all_close(o.to_host(), cpu->o, 1e-5, 1e-4)) << c.name << " O";
  EXPECT_TRUE(all_close(lse.to_host(), cpu->lse, 1e-5, 1e-5)) << c.name << " LSE";
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, GqaGpuReferenceVsCpu,
    ::testing::Values(
        tiny_case{"paged_decode", true, 1, false, {0, 1, 2, 3}, {0, 5, 6, 19}, {3, 9, 0, 18, 7, 12, 1, 2, 4, 5, 6, 8, 10,
                                                                               11, 13, 14, 15, 16, 17},
                  20},
        tiny_case{"paged_prefill_causal_ps2", true, 2, true, {0, 7, 12}, {0, 5, 8}, {6, 2, 0, 7, 4, 1, 3, 5}, 16},
        tiny_case{"ragged_prefill_causal", false, 1, true, {0, 9, 10, 30}, {0, 9, 14, 40}, {}, 40}),
    [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------- cuDNN vs the reference, workload axes

// A task's buffers, filled as the harness fills them for one trial.
struct task_buffers {
  std::vector<std::unique_ptr<device_array<char>>> in, out;
  std::vector<device_tensor> inputs, outputs;
};

task_buffers make_buffers(const task& t, const sequence_layout& layout, uint64_t seed) {
  task_buffers b;
  const auto axes = resolve_axes(t.wl, t.def);
  for (std::size_t i = 0; i < t.def.inputs.size(); ++i) {
    const tensor_spec& spec = t.def.inputs[i];
    const std::vector<int64_t> shape = concrete_shape(spec, axes);
    device_tensor view{nullptr, spec.type, shape};
    b.in.push_back(std::make_unique<device_array<char>>(std::max<int64_t>(4, static_cast<int64_t>(bytes_of(view)))));
    view.data = b.in.back()->get();
    const input_spec source = t.wl.input(spec.name);
    if (source.kind == input_kind::scalar) {
      upload(static_cast<float*>(view.data), std::vector<float>{source.scalar_value.get<float>()});
    } else if (source.kind == input_kind::derived) {
      auto values = index_input_values(layout, source.generator, seed * 101 + i);
      EXPECT_TRUE(values.ok()) << spec.name;
      upload(static_cast<int32_t*>(view.data), *values);
    } else {
      EXPECT_TRUE(fill_normal_bf16(static_cast<__nv_bfloat16*>(view.data), count_of(view), seed * 1000 + i, nullptr).ok());
    }
    b.inputs.push_back(view);
  }
  for (const tensor_spec& spec : t.def.outputs) {
    device_tensor view{nullptr, spec.type, concrete_shape(spec, axes)};
    b.out.push_back(std::make_unique<device_array<char>>(static_cast<int64_t>(bytes_of(view))));
    view.data = b.out.back()->get();
    EXPECT_EQ(cudaMemset(view.data, 0xFF, bytes_of(view)), cudaSuccess);  // NaN: every element must be written
    b.outputs.push_back(view);
  }
  return b;
}

baseline_request request_of(const task& t) {
  baseline_request r;
  r.kind = t.baseline;
  r.axes = resolve_axes(t.wl, t.def);
  r.options = t.baseline_options;
  r.device = 0;
  return r;
}

// The fp32 reference on the task's buffers: o [total_q, h_q, d], lse [total_q, h_q].
void run_reference(const task& t, const task_buffers& b, device_array<float>& o, device_array<float>& lse) {
  const auto axes = resolve_axes(t.wl, t.def);
  const bool paged = t.def.find_input("kv_indices") != nullptr;
  const bool decode = t.def.find_input("qo_indptr") == nullptr;
  auto at = [&](const char* name) -> const void* {
    for (std::size_t i = 0; i < t.def.inputs.size(); ++i)
      if (t.def.inputs[i].name == name) return b.inputs[i].data;
    return nullptr;
  };
  gqa_dims dims;
  dims.total_q = b.outputs[1].shape[0];
  dims.sequences = axes.at("len_indptr") - 1;
  dims.h_q = axes.at("num_qo_heads");
  dims.h_kv = axes.at("num_kv_heads");
  dims.d = axes.at("head_dim");
  dims.paged = paged;
  dims.page_size = paged ? axes.at("page_size") : 1;
  dims.causal = t.baseline_options.value("causal", false);
  dims.scale_device = static_cast<const float*>(at("sm_scale"));
  ASSERT_TRUE(reference_gqa_forward(static_cast<const __nv_bfloat16*>(b.inputs[0].data),
                                    static_cast<const __nv_bfloat16*>(b.inputs[1].data),
                                    static_cast<const __nv_bfloat16*>(b.inputs[2].data),
                                    decode ? nullptr : static_cast<const int32_t*>(at("qo_indptr")),
                                    static_cast<const int32_t*>(at("kv_indptr")),
                                    paged ? static_cast<const int32_t*>(at("kv_indices")) : nullptr, dims, o.get(),
                                    lse.get(), nullptr)
                  .ok());
}

void check_task(const char* name) {
  const task* t = repo_suite().find_task(name);
  ASSERT_NE(t, nullptr) << name;
  ASSERT_EQ(t->baseline, "cudnn_sdpa_gqa");
  auto layout = sequence_layout_for(t->def, t->wl);
  ASSERT_TRUE(layout && *layout);
  task_buffers sample = make_buffers(*t, **layout, 1);
  // A stream of its own, as the harness has: the legacy default stream cannot be captured, so on it
  // the baseline's calls would run eagerly and the replayed graph would go untested.
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto made = make_cudnn_gqa_only(request_of(*t), sample.inputs, sample.outputs, stream);
  ASSERT_TRUE(made.ok()) << made.err().message;
  std::cout << "[baseline] " << name << ": " << (*made)->description() << "\n";
  EXPECT_NE((*made)->description().find("calls run as CUDA graph replay"), std::string::npos) << (*made)->description();
  // Two trials, each with new buffers (new pointers, so a new graph), new data and new page indices.
  for (uint64_t trial = 2; trial <= 3; ++trial) {
    task_buffers b = make_buffers(*t, **layout, trial);
    (*made)->run(b.inputs, b.outputs, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << name;
    device_array<float> ref_o(count_of(b.outputs[0])), ref_lse(count_of(b.outputs[1]));
    run_reference(*t, b, ref_o, ref_lse);
    const double atol = t->tol.atol, rtol = t->tol.rtol;
    const auto got_o = to_float(host_bf16(b.outputs[0]));
    EXPECT_TRUE(all_close(got_o, ref_o.to_host(), atol, rtol)) << name << " trial " << trial << ": output";
    std::vector<float> got_lse(static_cast<std::size_t>(count_of(b.outputs[1])));
    ASSERT_EQ(cudaMemcpy(got_lse.data(), b.outputs[1].data, got_lse.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(all_close(got_lse, ref_lse.to_host(), atol, rtol)) << name << " trial " << trial << ": lse";
    std::cout << "[compare] " << name << " trial " << trial << ": "
              << all_close(got_o, ref_o.to_host(), atol, rtol).message() << " (output), "
              << all_close(got_lse, ref_lse.to_host(), atol, rtol).message() << " (lse)\n";
  }
  cudaStreamDestroy(stream);
}

TEST(GqaCudnnVsReference, PagedDecodeOnTheWorkloadAxes) {
  PTXB_SKIP_WITHOUT_GPU();
  check_task("gqa_paged_decode_h24_kv8_d128_ps1");
}

TEST(GqaCudnnVsReference, PagedPrefillCausalOnTheWorkloadAxes) {
  PTXB_SKIP_WITHOUT_GPU();
  check_task("gqa_paged_prefill_causal_h24_kv8_d128_ps1");
}

TEST(GqaCudnnVsReference, RaggedPrefillCausalOnTheWorkloadAxes) {
  PTXB_SKIP_WITHOUT_GPU();
  check_task("gqa_ragged_prefill_causal_h32_kv4_d128");
}

TEST(GqaBaseline, TheSuiteBaselineIsCudnnWhereCudnnWorks) {
  PTXB_SKIP_WITHOUT_GPU();
  const task* t = repo_suite().find_task("gqa_paged_decode_h24_kv8_d128_ps1");
  auto layout = sequence_layout_for(t->def, t->wl);
  task_buffers b = make_buffers(*t, **layout, 1);
  auto made = make_cudnn_sdpa_gqa(request_of(*t), b.inputs, b.outputs, nullptr);
  ASSERT_TRUE(made.ok()) << made.err().message;
  EXPECT_EQ((*made)->description().rfind("cudnn_sdpa_gqa: cuDNN ", 0), 0U) << (*made)->description();
}

// Issue 24: with a cache folder the second build (another process in practice) takes the remembered
// plan, checked against the reference again, instead of tuning.
TEST(GqaBaseline, TheSecondBuildTakesTheSamePlanFromTheCache) {
  PTXB_SKIP_WITHOUT_GPU();
  const task* t = repo_suite().find_task("gqa_paged_decode_h24_kv8_d128_ps1");
  auto layout = sequence_layout_for(t->def, t->wl);
  task_buffers b = make_buffers(*t, **layout, 1);
  baseline_request req = request_of(*t);
  req.cache_dir = std::filesystem::temp_directory_path() / ("ptxbench-gqa-memo-" + std::to_string(::getpid()));
  std::filesystem::remove_all(req.cache_dir);
  auto first = make_cudnn_gqa_only(req, b.inputs, b.outputs, nullptr);
  ASSERT_TRUE(first.ok()) << first.err().message;
  std::cout << "[first] " << (*first)->description() << "\n";
  EXPECT_NE((*first)->description().find("; autotuned now: fastest of"), std::string::npos);
  auto second = make_cudnn_gqa_only(req, b.inputs, b.outputs, nullptr);
  ASSERT_TRUE(second.ok()) << second.err().message;
  std::cout << "[second] " << (*second)->description() << "\n";
  EXPECT_NE((*second)->description().find("; autotuned earlier, from the cache: fastest of"), std::string::npos);
  // The same form and plan: the descriptions agree up to the plan's JSON (engine, heuristic mode, workspace).
  const std::string d1 = (*first)->description(), d2 = (*second)->description();
  EXPECT_EQ(d1.substr(0, d1.find(", plan {")), d2.substr(0, d2.find(", plan {")));
  std::filesystem::remove_all(req.cache_dir);
}

TEST(GqaBaseline, TheFallbackIsTheReferenceAndSaysSo) {
  PTXB_SKIP_WITHOUT_GPU();
  const task* t = repo_suite().find_task("gqa_ragged_prefill_causal_h32_kv4_d128");
  auto layout = sequence_layout_for(t->def, t->wl);
  task_buffers b = make_buffers(*t, **layout, 4);
  auto made = make_gqa_reference_baseline(request_of(*t), b.inputs, b.outputs, "cuDNN 9.x lacks X (test)");
  ASSERT_TRUE(made.ok()) << made.err().message;
  EXPECT_NE((*made)->description().find("not a vendor baseline"), std::string::npos);
  EXPECT_NE((*made)->description().find("cuDNN 9.x lacks X (test)"), std::string::npos);
  (*made)->run(b.inputs, b.outputs, nullptr);
  device_array<float> ref_o(count_of(b.outputs[0])), ref_lse(count_of(b.outputs[1]));
  run_reference(*t, b, ref_o, ref_lse);
  EXPECT_TRUE(all_close(to_float(host_bf16(b.outputs[0])), ref_o.to_host(), 0.0, 0.008));  // bf16 rounding
}

TEST(GqaBaseline, InvalidSampleIndptrIsAnError) {
  PTXB_SKIP_WITHOUT_GPU();
  const task* t = repo_suite().find_task("gqa_ragged_prefill_causal_h32_kv4_d128");
  auto layout = sequence_layout_for(t->def, t->wl);
  task_buffers b = make_buffers(*t, **layout, 1);
  std::vector<int32_t> broken = (*layout)->qo_indptr;
  std::swap(broken[3], broken[4]);
  upload(static_cast<int32_t*>(b.inputs[3].data), broken);
  auto made = make_cudnn_sdpa_gqa(request_of(*t), b.inputs, b.outputs, nullptr);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.err().message.find("sample qo_indptr does not increase at 4"), std::string::npos) << made.err().message;
}

// ---------------------------------------------------------------- request checks (no GPU needed)

TEST(GqaRequest, ParsesTheSuiteTasksAndNamesBadFields) {
  for (const char* name : {"gqa_paged_decode_h24_kv8_d128_ps1", "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                           "gqa_ragged_prefill_causal_h32_kv4_d128"}) {
    auto r = gqa_request_from(request_of(*repo_suite().find_task(name)));
    ASSERT_TRUE(r.ok()) << name << ": " << r.err().message;
  }
  baseline_request req = request_of(*repo_suite().find_task("gqa_paged_decode_h24_kv8_d128_ps1"));
  auto decode = gqa_request_from(req);
  EXPECT_EQ(decode->h_q, 24);
  EXPECT_EQ(decode->total_q, 15);
  EXPECT_EQ(decode->num_kv_indices, 9625);
  EXPECT_EQ(decode->input_names, (std::vector<const char*>{"q", "k_cache", "v_cache", "kv_indptr", "kv_indices",
                                                           "sm_scale"}));

  baseline_request causal_decode = req;
  causal_decode.options["causal"] = true;
  EXPECT_NE(gqa_request_from(causal_decode).err().message.find("causal must be false"), std::string::npos);
  baseline_request bad_layout = req;
  bad_layout.options["layout"] = "paged";
  EXPECT_NE(gqa_request_from(bad_layout).err().message.find("'paged' (expected paged_decode"), std::string::npos);
  baseline_request extra = req;
  extra.options["scale"] = 1;
  EXPECT_NE(gqa_request_from(extra).err().message.find("unknown field 'scale'"), std::string::npos);
  baseline_request missing = req;
  missing.axes.erase("num_kv_indices");
  EXPECT_NE(gqa_request_from(missing).err().message.find("axis 'num_kv_indices' missing"), std::string::npos);
}

TEST(GqaRequest, TensorMismatchesNameTheInput) {
  const task* t = repo_suite().find_task("gqa_paged_prefill_causal_h24_kv8_d128_ps1");
  auto r = gqa_request_from(request_of(*t));
  ASSERT_TRUE(r.ok());
  const auto axes = resolve_axes(t->wl, t->def);
  std::vector<device_tensor> inputs, outputs;
  char dummy = 0;
  for (const auto& spec : t->def.inputs) inputs.push_back({&dummy, spec.type, concrete_shape(spec, axes)});
  for (const auto& spec : t->def.outputs) outputs.push_back({&dummy, spec.type, concrete_shape(spec, axes)});
  EXPECT_TRUE(check_gqa_tensors(*r, inputs, outputs).ok());
  inputs[5].type = dtype::int64;
  auto bad = check_gqa_tensors(*r, inputs, outputs);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.err().message.find("input 5 (kv_indices): expected int32 [892], got int64 [892]"), std::string::npos)
      << bad.err().message;
  inputs[5].type = dtype::int32;
  outputs[1].shape = {892, 8};
  EXPECT_NE(check_gqa_tensors(*r, inputs, outputs).err().message.find("output 1 (lse): expected float32 [892, 24]"),
            std::string::npos);
}

}  // namespace
}  // namespace ptxbench::gpu
