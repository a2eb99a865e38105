// The cuDNN attention baselines against the independent fp32 reference: forward and backward, D in
// {64, 96, 128}, causal and not, several S, at the task tolerance (atol = rtol = 1e-2).

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>

#include "baselines/attention_reference.h"
#include "baselines/cudnn_sdpa.h"
#include "baselines/cudnn_sdpa_executable.h"
#include "baselines/seeded_fill.h"
#include "gpu_test_support.h"

namespace ptxbench::gpu {
namespace {

using testing::all_close;
using testing::device_array;
using testing::to_float;

constexpr double k_tolerance = 1e-2;  // the mha tasks' atol and rtol

struct shape4 {
  int64_t b, h, s, d;
  [[nodiscard]] int64_t numel() const { return b * h * s * d; }
  [[nodiscard]] int64_t rows() const { return b * h * s; }
  [[nodiscard]] float scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))); }
};

baseline_request request_for(const char* kind, shape4 s, bool causal) {
  baseline_request r;
  r.kind = kind;
  r.axes = {{"B", s.b}, {"H", s.h}, {"S", s.s}, {"D", s.d}};
  r.options = ordered_json{{"causal", causal}, {"scale", "1/sqrt(D)"}};
  r.device = 0;
  return r;
}

device_tensor bf16_tensor(const device_array<__nv_bfloat16>& a, shape4 s) {
  return device_tensor{a.get(), dtype::bfloat16, {s.b, s.h, s.s, s.d}};
}
device_tensor f32_rows(const device_array<float>& a, shape4 s) {
  return device_tensor{a.get(), dtype::float32, {s.b, s.h, s.s}};
}

void check_forward(shape4 s, bool causal) {
  const int64_t n = s.numel();
  device_array<__nv_bfloat16> q(n), k(n), v(n), o(n);
  device_array<float> lse(s.rows()), ref_o(n), ref_lse(s.rows());
  ASSERT_TRUE(fill_normal_bf16(q.get(), n, 11, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(k.get(), n, 12, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(v.get(), n, 13, nullptr).ok());
  const std::vector<device_tensor> inputs{bf16_tensor(q, s), bf16_tensor(k, s), bf16_tensor(v, s)};
  const std::vector<device_tensor> outputs{bf16_tensor(o, s), f32_rows(lse, s)};
  auto made = make_cudnn_sdpa_fwd(request_for("cudnn_sdpa_fwd", s, causal), inputs, outputs, nullptr);
  ASSERT_TRUE(made.ok()) << made.err().message;
  std::cout << "[baseline] " << (*made)->description() << "\n";
  ASSERT_EQ(cudaMemset(o.get(), 0xFF, n * 2), cudaSuccess);  // NaNs: the checked run must write every element
  (*made)->run(inputs, outputs, nullptr);

  const attention_dims dims{s.b * s.h, s.s, s.d, causal, s.scale()};
  ASSERT_TRUE(reference_attention_forward(q.get(), k.get(), v.get(), dims, ref_o.get(), ref_lse.get(), nullptr).ok());
  EXPECT_TRUE(all_close(to_float(o.to_host()), ref_o.to_host(), k_tolerance, k_tolerance)) << "O";
  EXPECT_TRUE(all_close(lse.to_host(), ref_lse.to_host(), k_tolerance, k_tolerance)) << "LSE";
}

void check_backward(shape4 s, bool causal) {
  const int64_t n = s.numel();
  device_array<__nv_bfloat16> q(n), k(n), v(n), o(n), d_o(n), dq(n), dk(n), dv(n);
  device_array<float> lse(s.rows()), o_f32(n), ref_dq(n), ref_dk(n), ref_dv(n);
  ASSERT_TRUE(fill_normal_bf16(q.get(), n, 21, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(k.get(), n, 22, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(v.get(), n, 23, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(d_o.get(), n, 24, nullptr).ok());
  // O and L from the reference forward on the same Q, K, V (the derived inputs of a backward task).
  const attention_dims dims{s.b * s.h, s.s, s.d, causal, s.scale()};
  ASSERT_TRUE(reference_attention_forward(q.get(), k.get(), v.get(), dims, o_f32.get(), lse.get(), nullptr).ok());
  ASSERT_TRUE(convert_f32_to_bf16(o_f32.get(), o.get(), n, nullptr).ok());

  const std::vector<device_tensor> inputs{bf16_tensor(q, s), bf16_tensor(k, s), bf16_tensor(v, s),
                                          bf16_tensor(o, s), bf16_tensor(d_o, s), f32_rows(lse, s)};
  const std::vector<device_tensor> outputs{bf16_tensor(dq, s), bf16_tensor(dk, s), bf16_tensor(dv, s)};
  auto made = make_cudnn_sdpa_bwd(request_for("cudnn_sdpa_bwd", s, causal), inputs, outputs, nullptr);
  ASSERT_TRUE(made.ok()) << made.err().message;
  std::cout << "[baseline] " << (*made)->description() << "\n";
  for (auto* out : {&dq, &dk, &dv}) ASSERT_EQ(cudaMemset(out->get(), 0xFF, n * 2), cudaSuccess);
  (*made)->run(inputs, outputs, nullptr);

  ASSERT_TRUE(reference_attention_backward(q.get(), k.get(), v.get(), o.get(), d_o.get(), lse.get(), dims,
                                           ref_dq.get(), ref_dk.get(), ref_dv.get(), nullptr)
                  .ok());
  EXPECT_TRUE(all_close(to_float(dq.to_host()), ref_dq.to_host(), k_tolerance, k_tolerance)) << "dQ";
  EXPECT_TRUE(all_close(to_float(dk.to_host()), ref_dk.to_host(), k_tolerance, k_tolerance)) << "dK";
  EXPECT_TRUE(all_close(to_float(dv.to_host()), ref_dv.to_host(), k_tolerance, k_tolerance)) << "dV";
}

// (backward?, D, causal); S varies with D so the suite covers several sequence lengths.
class CudnnSdpaVsReference : public ::testing::TestWithParam<std::tuple<bool, int64_t, bool>> {};

TEST_P(CudnnSdpaVsReference, MatchesWithinTaskTolerance) {
  PTXB_SKIP_WITHOUT_GPU();
  const auto [backward, d, causal] = GetParam();
  const int64_t s = d == 64 ? 384 : d == 96 ? 256 : 128;
  const shape4 shape{2, 3, s, d};
  if (backward) {
    check_backward(shape, causal);
  } else {
    check_forward(shape, causal);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllTwelve, CudnnSdpaVsReference,
    ::testing::Combine(::testing::Bool(), ::testing::Values(int64_t{64}, int64_t{96}, int64_t{128}), ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) ? "bwd" : "fwd") + "_d" + std::to_string(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_causal" : "");
    });

TEST(CudnnSdpaLong, ForwardCausalAtS1024) {
  PTXB_SKIP_WITHOUT_GPU();
  check_forward(shape4{1, 2, 1024, 128}, true);
}

TEST(CudnnSdpaLong, BackwardCausalAtS1024) {
  PTXB_SKIP_WITHOUT_GPU();
  check_backward(shape4{1, 2, 1024, 128}, true);
}

TEST(CudnnSdpaLong, BackwardAtS1024D64) {
  PTXB_SKIP_WITHOUT_GPU();
  check_backward(shape4{1, 2, 1024, 64}, false);
}

TEST(CudnnSdpa, ForwardForInputsMatchesTheForwardBaseline) {
  PTXB_SKIP_WITHOUT_GPU();
  const shape4 s{1, 2, 256, 64};
  const int64_t n = s.numel();
  device_array<__nv_bfloat16> q(n), k(n), v(n), o1(n), o2(n);
  device_array<float> lse1(s.rows()), lse2(s.rows());
  ASSERT_TRUE(fill_normal_bf16(q.get(), n, 31, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(k.get(), n, 32, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(v.get(), n, 33, nullptr).ok());
  status derived = attention_forward_for_inputs(bf16_tensor(q, s), bf16_tensor(k, s), bf16_tensor(v, s), true,
                                                bf16_tensor(o1, s), f32_rows(lse1, s), nullptr);
  ASSERT_TRUE(derived.ok()) << derived.err().message;
  const std::vector<device_tensor> inputs{bf16_tensor(q, s), bf16_tensor(k, s), bf16_tensor(v, s)};
  const std::vector<device_tensor> outputs{bf16_tensor(o2, s), f32_rows(lse2, s)};
  auto made = make_cudnn_sdpa_fwd(request_for("cudnn_sdpa_fwd", s, true), inputs, outputs, nullptr);
  ASSERT_TRUE(made.ok()) << made.err().message;
  (*made)->run(inputs, outputs, nullptr);
  EXPECT_TRUE(all_close(to_float(o1.to_host()), to_float(o2.to_host()), 0.0, 0.0));
  EXPECT_TRUE(all_close(lse1.to_host(), lse2.to_host(), 0.0, 0.0));
}

TEST(CudnnSdpa, UnsupportedHeadDimensionIsAClearError) {
  PTXB_SKIP_WITHOUT_GPU();
  const shape4 s{1, 1, 128, 100};
  device_array<__nv_bfloat16> buf(s.numel());
  device_array<float> rows(s.rows());
  auto made = make_cudnn_sdpa_fwd(request_for("cudnn_sdpa_fwd", s, false),
                                  {bf16_tensor(buf, s), bf16_tensor(buf, s), bf16_tensor(buf, s)},
                                  {bf16_tensor(buf, s), f32_rows(rows, s)}, nullptr);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.err().message.find("D a multiple of 8 and at most 256; got D=100"), std::string::npos)
      << made.err().message;
}

// Each graph variant on its own (no autotuning across variants): the composite ones must work; a
// unified one the loaded cuDNN rejects is skipped with cuDNN's reason.
class CudnnGraphVariant : public ::testing::TestWithParam<std::tuple<cudnn::sdpa_graph_kind, bool>> {};

TEST_P(CudnnGraphVariant, ComputesTheDefinedFunction) {
  PTXB_SKIP_WITHOUT_GPU();
  const auto [kind, causal] = GetParam();
  const bool forward = cudnn::is_forward(kind);
  const shape4 s{1, 2, 256, 128};
  const int64_t n = s.numel();
  device_array<__nv_bfloat16> q(n), k(n), v(n), o(n), d_o(n), dq(n), dk(n), dv(n);
  device_array<float> lse(s.rows()), ref_o(n), ref_dq(n), ref_dk(n), ref_dv(n);
  for (auto [buf, seed] : {std::pair{&q, 41}, {&k, 42}, {&v, 43}, {&d_o, 44}}) {
    ASSERT_TRUE(fill_normal_bf16(buf->get(), n, seed, nullptr).ok());
  }
  const attention_dims dims{s.b * s.h, s.s, s.d, causal, s.scale()};
  ASSERT_TRUE(reference_attention_forward(q.get(), k.get(), v.get(), dims, ref_o.get(), lse.get(), nullptr).ok());
  ASSERT_TRUE(convert_f32_to_bf16(ref_o.get(), o.get(), n, nullptr).ok());

  cudnn::sdpa_config config;
  config.kinds = {kind};
  config.max_plans_per_graph = 1;
  const cudnn::sdpa_problem problem{s.b, s.h, s.s, s.d, causal, s.scale()};
  device_array<__nv_bfloat16> o_out(n);
  device_array<float> lse_out(s.rows());
  std::vector<void*> io = forward ? std::vector<void*>{q.get(), k.get(), v.get(), o_out.get(), lse_out.get()}
                                  : std::vector<void*>{q.get(), k.get(), v.get(), o.get(), d_o.get(), lse.get(),
                                                       dq.get(), dk.get(), dv.get()};
  auto exe = cudnn::build_sdpa_executable(forward ? cudnn::sdpa_direction::forward : cudnn::sdpa_direction::backward,
                                          problem, config, io, nullptr);
  const bool unified = kind == cudnn::sdpa_graph_kind::unified_fwd || kind == cudnn::sdpa_graph_kind::unified_bwd;
  if (!exe.ok() && unified) GTEST_SKIP() << "unified variant unavailable here: " << exe.err().message;
  ASSERT_TRUE(exe.ok()) << exe.err().message;
  std::cout << "[variant] " << (*exe)->description() << "\n";
  (*exe)->run(io, nullptr);
  if (forward) {
    EXPECT_TRUE(all_close(to_float(o_out.to_host()), ref_o.to_host(), k_tolerance, k_tolerance)) << "O";
    EXPECT_TRUE(all_close(lse_out.to_host(), lse.to_host(), k_tolerance, k_tolerance)) << "LSE";
    return;
  }
  ASSERT_TRUE(reference_attention_backward(q.get(), k.get(), v.get(), o.get(), d_o.get(), lse.get(), dims,
                                           ref_dq.get(), ref_dk.get(), ref_dv.get(), nullptr)
                  .ok());
  EXPECT_TRUE(all_close(to_float(dq.to_host()), ref_dq.to_host(), k_tolerance, k_tolerance)) << "dQ";
  EXPECT_TRUE(all_close(to_float(dk.to_host()), ref_dk.to_host(), k_tolerance, k_tolerance)) << "dK";
  EXPECT_TRUE(all_close(to_float(dv.to_host()), ref_dv.to_host(), k_tolerance, k_tolerance)) << "dV";
}

INSTANTIATE_TEST_SUITE_P(
    Variants, CudnnGraphVariant,
    ::testing::Values(std::tuple{cudnn::sdpa_graph_kind::unified_fwd, false},
                      std::tuple{cudnn::sdpa_graph_kind::composite_fwd, false},
                      std::tuple{cudnn::sdpa_graph_kind::composite_fwd, true},
                      std::tuple{cudnn::sdpa_graph_kind::composite_bwd, false},
                      std::tuple{cudnn::sdpa_graph_kind::composite_bwd, true},
                      std::tuple{cudnn::sdpa_graph_kind::unified_bwd, false}),
    [](const auto& info) {
      return std::string(cudnn::graph_kind_name(std::get<0>(info.param))) +
             (std::get<1>(info.param) ? "_causal" : "");
    });

// Issue 24: the tuned choice is remembered in the cache folder, so a second build (another process
// in practice) rebuilds the same graph variant and plan instead of tuning again; an entry that no
// longer matches is tuned again and overwritten.
class CudnnSdpaRemembered : public ::testing::TestWithParam<cudnn::sdpa_direction> {};

TEST_P(CudnnSdpaRemembered, TheSecondBuildTakesTheSamePlanFromTheCache) {
  PTXB_SKIP_WITHOUT_GPU();
  const bool forward = GetParam() == cudnn::sdpa_direction::forward;
  const shape4 s{1, 2, 256, 128};
  const int64_t n = s.numel();
  device_array<__nv_bfloat16> q(n), k(n), v(n), o(n), d_o(n), dq(n), dk(n), dv(n);
  device_array<float> lse(s.rows()), ref_o(n);
  for (auto [buf, seed] : {std::pair{&q, 51}, {&k, 52}, {&v, 53}, {&d_o, 54}}) {
    ASSERT_TRUE(fill_normal_bf16(buf->get(), n, seed, nullptr).ok());
  }
  const attention_dims dims{s.b * s.h, s.s, s.d, false, s.scale()};
  ASSERT_TRUE(reference_attention_forward(q.get(), k.get(), v.get(), dims, ref_o.get(), lse.get(), nullptr).ok());
  ASSERT_TRUE(convert_f32_to_bf16(ref_o.get(), o.get(), n, nullptr).ok());
  device_array<__nv_bfloat16> o_out(n);
  device_array<float> lse_out(s.rows());
  std::vector<void*> io = forward ? std::vector<void*>{q.get(), k.get(), v.get(), o_out.get(), lse_out.get()}
                                  : std::vector<void*>{q.get(), k.get(), v.get(), o.get(), d_o.get(), lse.get(),
                                                       dq.get(), dk.get(), dv.get()};
  const cudnn::sdpa_problem problem{s.b, s.h, s.s, s.d, false, s.scale()};
  const auto cache = std::filesystem::temp_directory_path() /
                     ("ptxbench-sdpa-memo-" + std::to_string(::getpid()) + (forward ? "-fwd" : "-bwd"));
  std::filesystem::remove_all(cache);

  auto first = cudnn::build_sdpa_executable(GetParam(), problem, cudnn::sdpa_config{}, io, nullptr, cache);
  ASSERT_TRUE(first.ok()) << first.err().message;
  std::cout << "[first] " << (*first)->description() << "\n";
  EXPECT_FALSE((*first)->from_cache());
  EXPECT_NE((*first)->description().find("; autotuned now: fastest of"), std::string::npos);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(cache / "baselines")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1U);
  std::cout << "[memo] " << files[0] << "\n";

  auto second = cudnn::build_sdpa_executable(GetParam(), problem, cudnn::sdpa_config{}, io, nullptr, cache);
  ASSERT_TRUE(second.ok()) << second.err().message;
  std::cout << "[second] " << (*second)->description() << "\n";
  EXPECT_TRUE((*second)->from_cache());
  EXPECT_NE((*second)->description().find("; autotuned earlier, from the cache: fastest of"), std::string::npos);
  EXPECT_TRUE((*second)->attempts().empty());
  EXPECT_EQ((*second)->kind(), (*first)->kind());
  EXPECT_EQ((*second)->plan().engine_id, (*first)->plan().engine_id);
  EXPECT_EQ((*second)->plan().label(false), (*first)->plan().label(false));
  if (forward) {  // the remembered plan computes the function too
    (*second)->run(io, nullptr);
    EXPECT_TRUE(all_close(to_float(o_out.to_host()), ref_o.to_host(), k_tolerance, k_tolerance)) << "O";
  }

  // A remembered engine that is not the plan at its index any more: tuned again, and overwritten.
  std::stringstream text;
  text << std::ifstream(files[0]).rdbuf();
  auto memo = nlohmann::ordered_json::parse(text.str());
  memo["engine"] = memo["engine"].get<int64_t>() + 1000;
  std::ofstream(files[0]) << memo.dump(2);
  auto third = cudnn::build_sdpa_executable(GetParam(), problem, cudnn::sdpa_config{}, io, nullptr, cache);
  ASSERT_TRUE(third.ok()) << third.err().message;
  std::cout << "[third] " << (*third)->description() << "\n";
  EXPECT_FALSE((*third)->from_cache());
  EXPECT_NE((*third)->description().find("(the remembered choice is unusable: plan #"), std::string::npos);
  std::stringstream rewritten;
  rewritten << std::ifstream(files[0]).rdbuf();
  EXPECT_EQ(nlohmann::ordered_json::parse(rewritten.str())["engine"], (*third)->plan().engine_id);
  std::filesystem::remove_all(cache);
}

INSTANTIATE_TEST_SUITE_P(Directions, CudnnSdpaRemembered,
                         ::testing::Values(cudnn::sdpa_direction::forward, cudnn::sdpa_direction::backward),
                         [](const auto& info) {
                           return std::string(info.param == cudnn::sdpa_direction::forward ? "forward" : "backward");
                         });

}  // namespace
}  // namespace ptxbench::gpu
