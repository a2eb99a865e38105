// Checks of the cuDNN GQA graphs that need cuDNN but no GPU (the pattern the GPU run depends on,
// checked before any GPU time is spent): each layout's graph finalizes without a device, and with
// cuDNN's device properties of an H200 and the toolkit's stub libcuda the heuristics rank engines
// that accept the graph and compile their kernels, on the three workloads' exact axes.

#include <gtest/gtest.h>

#include <iostream>

#include "baselines/cudnn_gqa_graph.h"
#include "baselines/cudnn_sdpa_graph.h"
#include "cudnn_deviceless_support.h"
#include "gpu_test_support.h"

namespace ptxbench::gpu::cudnn {
namespace {

constexpr float k_scale = 0.08838834764831843F;

// The suite's workloads (suite/workloads/gqa_*; longest sequences from their pinned indptr values).
gqa_problem decode_problem() {
  gqa_problem p;
  p.layout = gqa_layout::paged_decode;
  p.batch = 15, p.h_q = 24, p.h_kv = 8, p.d = 128, p.max_q = 1, p.max_kv = 3229, p.total_q = 15;
  p.num_pages = 42784, p.page_size = 1, p.num_kv_indices = 9625, p.causal = false, p.scale = k_scale;
  return p;
}
gqa_problem paged_prefill_problem() {
  gqa_problem p;
  p.layout = gqa_layout::paged_prefill;
  p.batch = 1, p.h_q = 24, p.h_kv = 8, p.d = 128, p.max_q = 892, p.max_kv = 892, p.total_q = 892;
  p.num_pages = 43676, p.page_size = 1, p.num_kv_indices = 892, p.causal = true, p.scale = k_scale;
  return p;
}
gqa_problem ragged_prefill_problem() {
  gqa_problem p;
  p.layout = gqa_layout::ragged_prefill;
  p.batch = 33, p.h_q = 32, p.h_kv = 4, p.d = 128, p.max_q = 2026, p.max_kv = 2026, p.total_q = 16294;
  p.total_kv = 16294, p.causal = true, p.scale = k_scale;
  return p;
}

struct graph_case {
  const char* name;
  gqa_problem problem;
  page_table_form table;
};

std::vector<graph_case> all_cases() {
  return {{"paged_decode/packed", decode_problem(), page_table_form::packed},
          {"paged_decode/padded", decode_problem(), page_table_form::padded},
          {"paged_prefill/packed", paged_prefill_problem(), page_table_form::packed},
          {"paged_prefill/padded", paged_prefill_problem(), page_table_form::padded},
          {"ragged_prefill", ragged_prefill_problem(), page_table_form::padded}};
}

TEST(CudnnGqaGraphs, EveryLayoutFinalizesWithoutADevice) {
  if (runtime_version().code < 91002) GTEST_SKIP() << "the GQA graphs need cuDNN >= 9.10.2 here";
  for (const graph_case& c : all_cases()) {
    try {
      auto graph = build_gqa_graph(c.problem, c.table, nullptr, runtime_version());
      EXPECT_GT(graph->builder.operation_count(), 10U) << c.name;
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
    }
  }
}

TEST(CudnnGqaGraphs, OldLibrariesAreRefusedNamingTheRequirement) {
  try {
    build_gqa_graph(paged_prefill_problem(), page_table_form::padded, nullptr, version{90600});
    ADD_FAILURE() << "cuDNN 9.6 accepted";
  } catch (const cudnn_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs cuDNN >= 9.7"), std::string::npos) << e.what();
  }
  try {
    build_gqa_graph(decode_problem(), page_table_form::packed, nullptr, version{91000});
    ADD_FAILURE() << "packed table on cuDNN 9.10.0 accepted";
  } catch (const cudnn_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs cuDNN >= 9.10.2"), std::string::npos) << e.what();
  }
  try {
    build_gqa_graph(decode_problem(), page_table_form::padded, nullptr, version{90400});
    ADD_FAILURE() << "paged K/V on cuDNN 9.4 accepted";
  } catch (const cudnn_error& e) {
    EXPECT_NE(std::string(e.what()).find("paged K/V (PAGED_CACHE_LOAD) needs cuDNN >= 9.5"), std::string::npos)
        << e.what();
  }
}

class CudnnGqaDeviceless : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (testing::have_gpu(why)) GTEST_SKIP() << "a GPU is present: the GPU tests check this on real hardware";
    if (runtime_version().code < 91002) GTEST_SKIP() << "the GQA graphs need cuDNN >= 9.10.2";
    if (!deviceless::load_stub_libcuda(why)) GTEST_SKIP() << why;
    try {
      m_h200 = deviceless::h200_device_properties();
    } catch (const cudnn_error& e) {
      GTEST_SKIP() << "this cuDNN does not take the fixture's device-property JSON: " << e.what();
    }
  }
  descriptor m_h200;
};

// The engines that take the GQA graphs must be the fused flash-attention engines (those that take the
// plain composite forward), not a generic fusion engine that would also take a graph without softmax.
TEST_F(CudnnGqaDeviceless, H200FusedAttentionEnginesAcceptEveryLayout) {
  std::string mha_statuses;
  auto mha = build_sdpa_graph(sdpa_graph_kind::composite_fwd, sdpa_problem{1, 4, 256, 128, true, k_scale}, nullptr,
                              runtime_version());
  const auto attention_engines = deviceless::compiling_engines(mha->op_graph, m_h200, mha_statuses);
  ASSERT_FALSE(attention_engines.empty()) << mha_statuses;
  for (const graph_case& c : all_cases()) {
    auto graph = build_gqa_graph(c.problem, c.table, nullptr, runtime_version());
    std::string statuses;
    const auto engines = deviceless::compiling_engines(graph->op_graph, m_h200, statuses);
    EXPECT_FALSE(engines.empty()) << c.name << ": no mode-A engine accepted the graph:" << statuses;
    for (int64_t engine : engines)
      EXPECT_EQ(attention_engines.count(engine), 1U) << c.name << ": engine " << engine << " is not one of the "
                                                     << "engines taking the composite forward:" << mha_statuses;
    std::cout << "[deviceless] gqa " << c.name << ":" << statuses << "\n";
  }
}

}  // namespace
}  // namespace ptxbench::gpu::cudnn
