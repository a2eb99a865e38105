// The guidance document: its front matter, the tasks it names, the prompt it changes, its identity.
#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "supervision/guidance.h"
#include "supervision/run_supervision.h"
#include "test_support.h"

namespace ptxbench::supervision {
namespace {

const std::string k_doc =
    "---\nformat: ptxbench.guidance/1\ntitle: Hopper pitfalls\ntasks: gemm_n7168_k5120\nproblems: [mha_bwd]\n---\n\n"
    "# Use wgmma\n\nFence before the first wgmma.\n";

task make_task(const std::string& name, const std::string& problem) {
  task t;
  t.name = name;
  t.problem = problem;
  return t;
}

TEST(SupervisionGuidance, FrontMatterNamesTasksAndProblems) {
  auto g = parse_guidance(k_doc, "g.md");
  ASSERT_TRUE(g) << g.err().message;
  EXPECT_EQ(g->title, "Hopper pitfalls");
  EXPECT_EQ(g->tasks, (std::vector<std::string>{"gemm_n7168_k5120"}));
  EXPECT_EQ(g->problems, (std::vector<std::string>{"mha_bwd"}));
  EXPECT_EQ(g->body, "# Use wgmma\n\nFence before the first wgmma.");
  EXPECT_EQ(g->sha256, sha256_hex(k_doc));
  EXPECT_EQ(g->arm(), "guidance:" + sha256_hex(k_doc).substr(0, 8));
  EXPECT_TRUE(g->applies_to(make_task("gemm_n7168_k5120", "gemm")));
  EXPECT_TRUE(g->applies_to(make_task("mha_bwd_d128", "mha_bwd")));
  EXPECT_FALSE(g->applies_to(make_task("mha_fwd_d128", "mha_fwd")));
  auto all = parse_guidance("---\nformat: ptxbench.guidance/1\ntasks: *\n---\nText\n", "all.md");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->applies_to(make_task("anything", "gqa")));
}

TEST(SupervisionGuidance, MalformedFrontMattersFailWithTheLine) {
  struct bad_case { std::string text, message; };
  for (const auto& c : std::vector<bad_case>{
           {"# no front matter\n", "g.md:1: expected a front matter first"},
           {"---\nformat: ptxbench.guidance/1\ntasks: a\n", "g.md:1: the front matter has no closing '---' line"},
           {"---\nformat: other/2\ntasks: a\n---\nx\n", "g.md:2: format is 'other/2'"},
           {"---\ntasks: a\n---\nx\n", "g.md:1: the front matter needs 'format: ptxbench.guidance/1'"},
           {"---\nformat: ptxbench.guidance/1\n---\nx\n", "g.md:1: the front matter names no task"},
           {"---\nformat: ptxbench.guidance/1\ntasks: a\nmodel: x\n---\nx\n", "g.md:4: unknown key 'model'"},
           {"---\nformat: ptxbench.guidance/1\ntasks: a\ntasks: b\n---\nx\n", "g.md:4: 'tasks' is given twice"},
           {"---\nformat: ptxbench.guidance/1\ntasks: a\n---\n\n  \n", "g.md:4: the document has no text"},
       }) {
    auto g = parse_guidance(c.text, "g.md");
    ASSERT_FALSE(g) << c.text;
    EXPECT_EQ(g.err().message.rfind(c.message, 0), 0u) << g.err().message;
  }
}

TEST(SupervisionGuidance, FilesAreCheckedAgainstTheSuite) {
  suite s;
  s.tasks.push_back(make_task("gemm_n7168_k5120", "gemm"));
  s.tasks.push_back(make_task("mha_bwd_d128", "mha_bwd"));
  auto dir = ptxbench::testing::make_temp_dir("guidance");
  ASSERT_TRUE(write_file_atomic(dir / "ok.md", k_doc));
  EXPECT_TRUE(read_guidance(dir / "ok.md", s));
  ASSERT_TRUE(write_file_atomic(dir / "typo.md", "---\nformat: ptxbench.guidance/1\ntasks: gemm_n7168_k512\n---\nx\n"));
  auto typo = read_guidance(dir / "typo.md", s);
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.err().message.find("did you mean 'gemm_n7168_k5120'"), std::string::npos) << typo.err().message;
  static const char k_binary[] = "---\nformat: ptxbench.guidance/1\n\0tasks: *\n---\nx\n";
  ASSERT_TRUE(write_file_atomic(dir / "bin.md", std::string(k_binary, sizeof(k_binary) - 1)));
  auto bin = read_guidance(dir / "bin.md", s);
  ASSERT_FALSE(bin);
  EXPECT_NE(bin.err().message.find("binary file"), std::string::npos) << bin.err().message;
  ASSERT_TRUE(write_file_atomic(dir / "huge.md", "---\nformat: ptxbench.guidance/1\ntasks: *\n---\n" + std::string(300000, 'x')));
  auto huge = read_guidance(dir / "huge.md", s);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.err().message.find("over the limit"), std::string::npos) << huge.err().message;
  std::filesystem::remove_all(dir);
}

TEST(SupervisionGuidance, OnlyTheNamedTasksGetTheDocumentInTheirSystemPrompt) {
  auto g = parse_guidance(k_doc, "g.md");
  ASSERT_TRUE(g);
  run_supervision sup;
  sup.guidance = std::make_shared<guidance_doc>(*g);
  agent::prompt_builder base = [](const task& t, const target_info&, const std::string&) -> result<agent::prompt_pair> {
    return agent::prompt_pair{"SYSTEM for " + t.name, "USER"};
  };
  auto wrapped = sup.wrap_prompts(base);
  target_info target;
  auto gemm = wrapped(make_task("gemm_n7168_k5120", "gemm"), target, "base");
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->system.rfind("SYSTEM for gemm_n7168_k5120\n\n## Expert guidance\n\n", 0), 0u) << gemm->system;
  EXPECT_NE(gemm->system.find("Fence before the first wgmma."), std::string::npos);
  EXPECT_EQ(gemm->user, "USER");
  auto fwd = wrapped(make_task("mha_fwd_d128", "mha_fwd"), target, "base");
  EXPECT_EQ(fwd->system, "SYSTEM for mha_fwd_d128");
  // Arms and records: a task the document does not name runs as base, and says so.
  EXPECT_EQ(sup.arm(make_task("gemm_n7168_k5120", "gemm")), g->arm());
  EXPECT_EQ(sup.arm(make_task("mha_fwd_d128", "mha_fwd")), "base");
  auto s = sup.for_trajectory(make_task("mha_fwd_d128", "mha_fwd"), "x");
  EXPECT_EQ(s.trajectory_record["guidance"]["applies"], false);
  EXPECT_TRUE(s.turn_record["guidance_sha256"].is_null());
  auto on = sup.for_trajectory(make_task("gemm_n7168_k5120", "gemm"), "y");
  EXPECT_EQ(on.turn_record["guidance_sha256"], g->sha256);
  EXPECT_FALSE(on.on_failed_turn);
  EXPECT_EQ(sup.plan_record()["guidance"]["sha256"], g->sha256);
  EXPECT_TRUE(sup.plan_record()["notes"].is_null());
}

}  // namespace
}  // namespace ptxbench::supervision
