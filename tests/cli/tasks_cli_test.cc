#include <gtest/gtest.h>

#include "cli/cli_test_support.h"
#include "core/json_check.h"

namespace ptxbench {
namespace {
using testing::one_line;
using testing::run_cli;

TEST(TasksCli, JsonListsEveryTaskWithTargets) {
  auto r = run_cli({"tasks", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = ordered_json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 16u);
  const auto& gemm = j["tasks"][0];
  EXPECT_EQ(gemm["name"], "gemm_n7168_k5120");
  EXPECT_EQ(gemm["axes"]["M"], 8192);
  EXPECT_EQ(gemm["targets"][1]["name"], "h200");
  EXPECT_EQ(gemm["targets"][1]["required_families"], ordered_json::parse(R"(["GMMA","TMA"])"));
  EXPECT_EQ(gemm["targets"][2]["required_families"], ordered_json::parse(R"(["TCGEN05"])"));
}

TEST(TasksCli, ShowPrintsConcreteAxes) {
  auto r = run_cli({"tasks", "show", "mha_bwd_d128_causal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = ordered_json::parse(r.out);
  EXPECT_EQ(j["workload"]["axes"]["S"], 4096);
  EXPECT_EQ(j["workload"]["shapes"]["dQ"], ordered_json::parse("[4,48,4096,128]"));
  EXPECT_EQ(j["inputs"]["L"]["dtype"], "float32");
}

TEST(TasksCli, UnknownTaskAndCommandGiveOneLine) {
  auto r = run_cli({"tasks", "show", "gemm_n7168"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("did you mean 'gemm_n7168_k5120'"), std::string::npos);
  auto c = run_cli({"task"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_TRUE(one_line(c.err)) << c.err;
  EXPECT_NE(c.err.find("did you mean 'tasks'"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench
