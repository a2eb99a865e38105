// What the cuDNN attention baselines accept and how they refuse: request parsing, tensor checks,
// the support matrix and the graph variants per version. None of these needs a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "baselines/cudnn_sdpa.h"
#include "baselines/cudnn_sdpa_executable.h"
#include "baselines/cudnn_sdpa_request.h"

namespace ptxbench::gpu {
namespace {

using cudnn::sdpa_direction;
using cudnn::sdpa_graph_kind;
using cudnn::sdpa_problem;
using cudnn::version;

baseline_request headline(bool causal) {
  baseline_request r;
  r.kind = "cudnn_sdpa_fwd";
  r.axes = {{"B", 4}, {"H", 48}, {"S", 4096}, {"D", 128}};
  r.options = ordered_json{{"causal", causal}, {"scale", "1/sqrt(D)"}};
  return r;
}

::testing::AssertionResult fails_with(const status& s, const std::string& needle) {
  if (s.ok()) return ::testing::AssertionFailure() << "succeeded; expected an error containing '" << needle << "'";
  if (s.err().message.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure() << "error '" << s.err().message << "' lacks '" << needle << "'";
  }
  return ::testing::AssertionSuccess();
}

TEST(CudnnSdpaRequest, ReadsTheTaskOptions) {
  auto p = sdpa_problem_from_request(headline(true));
  ASSERT_TRUE(p.ok()) << p.err().message;
  EXPECT_EQ(p->b, 4);
  EXPECT_EQ(p->h, 48);
  EXPECT_EQ(p->s, 4096);
  EXPECT_EQ(p->d, 128);
  EXPECT_TRUE(p->causal);
  EXPECT_FLOAT_EQ(p->scale, 1.0F / std::sqrt(128.0F));
}

TEST(CudnnSdpaRequest, RejectsMalformedRequests) {
  baseline_request r = headline(false);
  r.options.erase("causal");
  auto missing = sdpa_problem_from_request(r);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.err().message.find("baseline_options.causal"), std::string::npos) << missing.err().message;

  r = headline(false);
  r.options["window"] = 128;
  auto unknown = sdpa_problem_from_request(r);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.err().message.find("unknown field 'window'"), std::string::npos) << unknown.err().message;

  r = headline(false);
  r.options["scale"] = "1/D";
  EXPECT_FALSE(sdpa_problem_from_request(r).ok());

  r = headline(false);
  r.axes.erase("D");
  auto no_axis = sdpa_problem_from_request(r);
  ASSERT_FALSE(no_axis.ok());
  EXPECT_NE(no_axis.err().message.find("axis 'D' missing"), std::string::npos) << no_axis.err().message;
}

TEST(CudnnSdpaRequest, ANumericScaleIsUsed) {
  baseline_request r = headline(false);
  r.options["scale"] = 0.5;
  auto p = sdpa_problem_from_request(r);
  ASSERT_TRUE(p.ok());
  EXPECT_FLOAT_EQ(p->scale, 0.5F);
}

TEST(CudnnSdpaRequest, TensorMismatchNamesTheTensor) {
  const sdpa_problem p{1, 2, 128, 64, false, 0.125F};
  int dummy = 0;
  auto bf16 = [&](std::vector<int64_t> shape) { return device_tensor{&dummy, dtype::bfloat16, std::move(shape)}; };
  const std::vector<device_tensor> inputs{bf16({1, 2, 128, 64}), bf16({1, 2, 128, 64}), bf16({1, 2, 128, 64}),
                                          bf16({1, 2, 128, 64}), bf16({1, 2, 128, 64}),
                                          device_tensor{&dummy, dtype::bfloat16, {1, 2, 128}}};
  const std::vector<device_tensor> outputs{bf16({1, 2, 128, 64}), bf16({1, 2, 128, 64}), bf16({1, 2, 128, 64})};
  auto r = checked_pointers("cudnn_sdpa_bwd", sdpa_direction::backward, p, inputs, outputs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("input 5 (L): expected float32 [1, 2, 128], got bfloat16"), std::string::npos)
      << r.err().message;

  auto wrong_count = checked_pointers("cudnn_sdpa_fwd", sdpa_direction::forward, p, inputs, outputs);
  ASSERT_FALSE(wrong_count.ok());
  EXPECT_NE(wrong_count.err().message.find("expected 3 inputs and 2 outputs"), std::string::npos);
}

TEST(CudnnSdpaSupport, NamesEachRequirement) {
  const sdpa_problem ok_problem{4, 48, 4096, 128, true, 0.088F};
  EXPECT_TRUE(check_sdpa_support(sdpa_direction::backward, ok_problem, version{91400}, 9).ok());
  EXPECT_TRUE(check_sdpa_support(sdpa_direction::forward, ok_problem, version{91900}, 9).ok());

  EXPECT_TRUE(fails_with(check_sdpa_support(sdpa_direction::forward, ok_problem, version{8907}, 9),
                         "need cuDNN >= 9.0.0"));
  EXPECT_TRUE(fails_with(check_sdpa_support(sdpa_direction::forward, ok_problem, version{91900}, 7), "sm_80"));
  sdpa_problem odd_d = ok_problem;
  odd_d.d = 100;
  EXPECT_TRUE(fails_with(check_sdpa_support(sdpa_direction::forward, odd_d, version{91900}, 9), "multiple of 8"));
  EXPECT_TRUE(fails_with(check_sdpa_support(sdpa_direction::backward, ok_problem, version{91000}, 9),
                         "known SDPA backward bugs"));
  sdpa_problem ragged_s = ok_problem;
  ragged_s.s = 1000;
  EXPECT_TRUE(fails_with(check_sdpa_support(sdpa_direction::backward, ragged_s, version{91400}, 9),
                         "S a multiple of 128"));
  EXPECT_TRUE(check_sdpa_support(sdpa_direction::backward, ragged_s, version{91900}, 9).ok());
  EXPECT_TRUE(check_sdpa_support(sdpa_direction::forward, ragged_s, version{91400}, 9).ok());
  sdpa_problem big_d = ok_problem;
  big_d.d = 192;
  EXPECT_TRUE(fails_with(check_sdpa_support(sdpa_direction::backward, big_d, version{91900}, 10), "D <= 128"));
}

TEST(CudnnSdpaSupport, UnifiedVariantsOnlyWhereTheyCanApply) {
  using kinds = std::vector<sdpa_graph_kind>;
  // Causal always goes through the composite graph (the unified op has no mask before 9.21).
  EXPECT_EQ(default_graph_kinds(sdpa_direction::forward, true, version{91900}), kinds{sdpa_graph_kind::composite_fwd});
  EXPECT_EQ(default_graph_kinds(sdpa_direction::backward, true, version{91900}), kinds{sdpa_graph_kind::composite_bwd});
  // The unified forward needs a 9.13.1 runtime.
  EXPECT_EQ(default_graph_kinds(sdpa_direction::forward, false, version{91300}), kinds{sdpa_graph_kind::composite_fwd});
  EXPECT_EQ(default_graph_kinds(sdpa_direction::forward, false, version{91400}),
            (kinds{sdpa_graph_kind::unified_fwd, sdpa_graph_kind::composite_fwd}));
  // cuDNN 9.19 does not implement the unified backward (its graphs fail to finalize).
  EXPECT_EQ(default_graph_kinds(sdpa_direction::backward, false, version{91900}),
            kinds{sdpa_graph_kind::composite_bwd});
  EXPECT_EQ(default_graph_kinds(sdpa_direction::backward, false, version{92100}).back(),
            sdpa_graph_kind::composite_bwd);
}

TEST(CudnnVersion, FormatsLikeTheReleaseNumbers) {
  EXPECT_EQ(version{91400}.str(), "9.14.0");
  EXPECT_EQ(version{91301}.str(), "9.13.1");
  EXPECT_GE(cudnn::compiled_version().code, 90000);
}

}  // namespace
}  // namespace ptxbench::gpu
