#include <gtest/gtest.h>

#include "core/file_io.h"
#include "suite/task.h"
#include "suite/task_view.h"
#include "suite/unknown_target.h"
#include "test_support.h"

namespace ptxbench {
namespace {

TEST(Suite, LoadsEveryTaskOfTheIssue) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok()) << s.err().message;
  for (std::string name : {"gemm_n7168_k5120", "mha_with_lse_d64", "mha_with_lse_d96", "mha_with_lse_d128",
                           "mha_with_lse_d64_causal", "mha_with_lse_d96_causal", "mha_with_lse_d128_causal",
                           "mha_bwd_d64", "mha_bwd_d96", "mha_bwd_d128", "mha_bwd_d64_causal", "mha_bwd_d96_causal",
                           "mha_bwd_d128_causal", "gqa_paged_decode_h24_kv8_d128_ps1",
                           "gqa_paged_prefill_causal_h24_kv8_d128_ps1", "gqa_ragged_prefill_causal_h32_kv4_d128"})
    EXPECT_NE(s->find_task(name), nullptr) << name;
  EXPECT_EQ(s->tasks.size(), 16u);
}

TEST(Suite, TargetMetadataMatchesThePaper) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok()) << s.err().message;
  const auto* h200 = s->find_target("h200");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->arch, "sm_90a");
  EXPECT_EQ(h200->required_families, (std::vector<std::string>{"GMMA", "TMA"}));
  const auto* b200 = s->find_target("b200");
  ASSERT_NE(b200, nullptr);
  EXPECT_EQ(b200->required_families, (std::vector<std::string>{"TCGEN05"}));
  EXPECT_EQ(b200->verification, "static_only");
  const auto* gemm = s->find_task("gemm_n7168_k5120");
  EXPECT_EQ(gemm->baseline, "cublaslt_gemm");
  EXPECT_EQ(gemm->correctness_trials, 3);
  EXPECT_EQ(s->find_task("mha_bwd_d128")->correctness_trials, 1);
  EXPECT_EQ(s->find_task("gqa_paged_decode_h24_kv8_d128_ps1")->status, "ready");
  EXPECT_EQ(s->find_task("gqa_paged_decode_h24_kv8_d128_ps1")->baseline, "cudnn_sdpa_gqa");
}

TEST(Suite, TaskViewStatesConcreteAxes) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok());
  auto view = task_view_json(*s->find_task("mha_bwd_d128_causal"));
  EXPECT_EQ(view["workload"]["axes"]["S"], 4096);
  EXPECT_EQ(view["workload"]["shapes"]["L"], ordered_json::parse("[4,48,4096]"));
  EXPECT_FALSE(view.contains("tags"));
}

TEST(Suite, BrokenDefinitionNamesFileAndPath) {
  auto dir = testing::make_temp_dir("suite");
  std::filesystem::copy(testing::repo_root() / "suite", dir / "suite", std::filesystem::copy_options::recursive);
  ASSERT_TRUE(write_file_atomic(dir / "suite/definitions/gemm/gemm_n7168_k5120.json", "{\"name\": 3").ok());
  auto s = load_suite(dir / "suite");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.err().message.find("gemm_n7168_k5120.json: invalid JSON at line 1"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Suite, AnUnknownTargetIsNamedWithAGuessOrTheSuitesTargets) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok()) << s.err().message;
  EXPECT_EQ(unknown_target_message(*s, "h300"), "unknown target 'h300' (did you mean 'h100'?)");
  EXPECT_EQ(unknown_target_message(*s, "tpu-v5-pod"),
            "unknown target 'tpu-v5-pod'; expected one of b200, h100, h200 (suite/targets.json)");
}

TEST(Suite, CloseNamesSuggestsPrefixesAndTypos) {
  std::vector<std::string> names = {"gemm_n7168_k5120", "mha_bwd_d128"};
  EXPECT_EQ(close_names("gemm", names).front(), "gemm_n7168_k5120");
  EXPECT_EQ(close_names("mha_bwd_d12", names).front(), "mha_bwd_d128");
  EXPECT_TRUE(close_names("zzz", names).empty());
}

}  // namespace
}  // namespace ptxbench
