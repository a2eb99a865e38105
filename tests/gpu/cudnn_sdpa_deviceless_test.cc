// Checks of the cuDNN attention graphs that need cuDNN but no GPU:
//  - every graph variant finalizes as an OPERATIONGRAPH (cuDNN >= 9.8 builds graphs without a handle);
//  - given cuDNN's device properties of an H200 and the CUDA toolkit's stub libcuda, the heuristics
//    rank fused-attention engines for the four headline workloads and those engines accept the
//    graphs and compile their kernels: finalizing a plan gets as far as loading the compiled module,
//    which is the first step that needs a real driver. That is the pattern match the composite
//    graphs depend on, checked before any GPU time is spent.

#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>

#include "baselines/cudnn_graph_builder.h"
#include "baselines/cudnn_plan.h"
#include "baselines/cudnn_sdpa_graph.h"
#include "cudnn_deviceless_support.h"
#include "gpu_test_support.h"

namespace ptxbench::gpu::cudnn {
namespace {

TEST(CudnnGraphs, EveryVariantFinalizesWithoutADevice) {
  if (runtime_version().code < 90800) GTEST_SKIP() << "graphs need a handle before cuDNN 9.8";
  for (sdpa_graph_kind kind : {sdpa_graph_kind::unified_fwd, sdpa_graph_kind::composite_fwd,
                               sdpa_graph_kind::composite_bwd}) {
    for (bool causal : {false, true}) {
      if (kind == sdpa_graph_kind::unified_fwd && causal) continue;  // needs cuDNN 9.21
      const sdpa_problem problem{4, 48, 4096, 128, causal, 0.08838835F};
      try {
        auto graph = build_sdpa_graph(kind, problem, nullptr, runtime_version());
        EXPECT_GT(graph->builder.operation_count(), 0U);
      } catch (const std::exception& e) {
        ADD_FAILURE() << graph_kind_name(kind) << (causal ? " causal" : "") << ": " << e.what();
      }
    }
  }
}

TEST(CudnnGraphs, CausalIsRefusedOnTheUnifiedOperations) {
  const sdpa_problem problem{1, 1, 128, 64, true, 0.125F};
  EXPECT_THROW(build_sdpa_graph(sdpa_graph_kind::unified_fwd, problem, nullptr, runtime_version()), cudnn_error);
  EXPECT_THROW(build_sdpa_graph(sdpa_graph_kind::unified_bwd, problem, nullptr, runtime_version()), cudnn_error);
}

using deviceless::compiling_engines;

class CudnnDeviceless : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (testing::have_gpu(why)) GTEST_SKIP() << "a GPU is present: the GPU tests check this on real hardware";
    if (runtime_version().code < 90800) GTEST_SKIP() << "device properties need cuDNN >= 9.8";
    if (!deviceless::load_stub_libcuda(why)) GTEST_SKIP() << why;
    try {
      m_h200 = deviceless::h200_device_properties();
    } catch (const cudnn_error& e) {
      GTEST_SKIP() << "this cuDNN does not take the fixture's device-property JSON: " << e.what();
    }
  }
  descriptor m_h200;
};

// Negative control: with the softmax left out, the engines that take the composite forward must
// not take the graph (cuDNN's generic fusion engine may).
TEST_F(CudnnDeviceless, TheAttentionEnginesRefuseAGraphWithoutSoftmax) {
  const int64_t b = 1, h = 2, s = 256, d = 64;
  std::string attention_statuses;
  auto attention = build_sdpa_graph(sdpa_graph_kind::composite_fwd, sdpa_problem{b, h, s, d, false, 0.125F}, nullptr,
                                    runtime_version());
  const std::set<int64_t> attention_engines = compiling_engines(attention->op_graph, m_h200, attention_statuses);
  ASSERT_FALSE(attention_engines.empty()) << attention_statuses;

  graph_builder g;
  tensor_ref q = g.tensor(sdpa_uid::q, {b, h, s, d}, packed_strides({b, h, s, d}), CUDNN_DATA_BFLOAT16);
  tensor_ref kt = g.tensor(sdpa_uid::k, {b, h, d, s}, {h * s * d, s * d, 1, d}, CUDNN_DATA_BFLOAT16);
  tensor_ref v = g.tensor(sdpa_uid::v, {b, h, s, d}, packed_strides({b, h, s, d}), CUDNN_DATA_BFLOAT16);
  tensor_ref o = g.tensor(sdpa_uid::o, {b, h, s, d}, packed_strides({b, h, s, d}), CUDNN_DATA_BFLOAT16);
  tensor_ref logits = g.virtual_tensor({b, h, s, s}, packed_strides({b, h, s, s}), CUDNN_DATA_FLOAT);
  g.matmul(q, kt, logits);
  tensor_ref probs = g.virtual_tensor({b, h, s, s}, packed_strides({b, h, s, s}), CUDNN_DATA_BFLOAT16);
  g.pointwise(CUDNN_POINTWISE_EXP, logits, probs, CUDNN_DATA_FLOAT);
  g.matmul(probs, v, o);
  descriptor graph = g.finalize_graph(nullptr);
  std::string statuses;
  for (int64_t engine : compiling_engines(graph, m_h200, statuses)) {
    EXPECT_EQ(attention_engines.count(engine), 0U) << "engine " << engine << " took a graph without softmax:"
                                                   << statuses << " (attention graph:" << attention_statuses << ")";
  }
  std::cout << "[deviceless] no softmax:" << statuses << "; composite_fwd:" << attention_statuses << "\n";
}

TEST_F(CudnnDeviceless, H200FusedAttentionEnginesAcceptTheGraphs) {
  struct workload {
    sdpa_graph_kind kind;
    bool causal;
  };
  for (workload w : {workload{sdpa_graph_kind::unified_fwd, false}, workload{sdpa_graph_kind::composite_fwd, false},
                     workload{sdpa_graph_kind::composite_fwd, true}, workload{sdpa_graph_kind::composite_bwd, false},
                     workload{sdpa_graph_kind::composite_bwd, true}}) {
    const std::string name = std::string(graph_kind_name(w.kind)) + (w.causal ? " causal" : "");
    const sdpa_problem problem{4, 48, 4096, 128, w.causal, 0.08838835F};
    auto graph = build_sdpa_graph(w.kind, problem, nullptr, runtime_version());
    std::string statuses;
    EXPECT_FALSE(compiling_engines(graph->op_graph, m_h200, statuses).empty())
        << name << ": no mode-A engine accepted the graph:" << statuses;
    std::cout << "[deviceless] " << name << ":" << statuses << "\n";
  }
}

}  // namespace
}  // namespace ptxbench::gpu::cudnn
