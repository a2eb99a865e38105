#include "prompts/prompt_renderer.h"

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "prompt_test_support.h"
#include "prompts/variant_manifest.h"
#include "suite/task.h"

namespace ptxbench::prompts {
namespace {

using ptxbench::testing::repo_root;

class PromptRenderer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto s = load_suite(repo_root() / "suite");
    ASSERT_TRUE(s.ok()) << s.err().message;
    suite_ = new suite(std::move(*s));
  }
  static void TearDownTestSuite() {
    delete suite_;
    suite_ = nullptr;
  }
  static const task& get_task(const std::string& name) { return *suite_->find_task(name); }
  static const target_info& target(const std::string& name) { return *suite_->find_target(name); }
  static suite* suite_;
};
suite* PromptRenderer::suite_ = nullptr;

TEST_F(PromptRenderer, EveryVariantAndAblationOfEveryTaskAndTargetRenders) {
  auto m = load_variant_manifest(repo_root() / "packs");
  ASSERT_TRUE(m.ok()) << m.err().message;
  int rendered = 0;
  for (const auto& t : suite_->tasks)
    for (const auto& target_name : t.targets) {
      const target_info& ti = target(target_name);
      const pack_manifest* pack = m->find_pack(ti.pack);
      ASSERT_NE(pack, nullptr) << ti.pack;
      std::vector<std::string> names;
      for (const auto& v : *pack->family(t.problem)) names.push_back(v.name);
      for (const auto& a : pack->ablations) names.push_back(a.name);
      for (const auto& name : names) {
        auto p = render_prompt(*suite_, t, name, ti, repo_root() / "packs");
        ASSERT_TRUE(p.ok()) << t.name << " " << target_name << " " << name << ": " << p.err().message;
        EXPECT_EQ(p->system.find("{{"), std::string::npos) << "unfilled placeholder in " << name;
        EXPECT_NE(p->system.find("PTXBENCH_EXPORT"), std::string::npos);
        EXPECT_NE(p->user.find("\"workload\""), std::string::npos);
        ++rendered;
      }
    }
  EXPECT_GE(rendered, 100);
}

TEST_F(PromptRenderer, RenderingsAreUnchangedByteForByte) {
  // The fixture holds the sha256 of every message as rendered before the headers both packs share
  // moved to packs/common: moving files must not change one byte of what a model reads.
  auto text = read_text_file(ptxbench::testing::fixtures_dir() / "prompts" / "rendered_sha256.json", 1u << 20);
  ASSERT_TRUE(text.ok()) << text.err().message;
  auto fixture = parse_json(*text, "rendered_sha256.json");
  ASSERT_TRUE(fixture.ok());
  const auto& expected = (*fixture)["renderings"];
  ASSERT_GE(expected.size(), 190u);
  for (const auto& [key, hashes] : expected.items()) {
    const auto first = key.find('/'), second = key.find('/', first + 1);
    const std::string task_name = key.substr(0, first), target_name = key.substr(first + 1, second - first - 1);
    const task* t = suite_->find_task(task_name);
    ASSERT_NE(t, nullptr) << key;
    auto p = render_prompt(*suite_, *t, key.substr(second + 1), target(target_name), repo_root() / "packs");
    ASSERT_TRUE(p.ok()) << key << ": " << p.err().message;
    EXPECT_EQ(sha256_hex(p->system), hashes["system"].get<std::string>()) << key << ": system message changed";
    EXPECT_EQ(sha256_hex(p->user), hashes["user"].get<std::string>()) << key << ": user message changed";
  }
}

TEST_F(PromptRenderer, MessagesCarryInstructionsPackExampleAndTask) {
  auto p = render_prompt(*suite_, get_task("gemm_n7168_k5120"), "base", target("h200"), repo_root() / "packs");
  ASSERT_TRUE(p.ok()) << p.err().message;
  EXPECT_NE(p->system.find("exactly one fenced code block tagged `cuda`"), std::string::npos);
  EXPECT_NE(p->system.find("## Header <ptxkit/wgmma.cuh>"), std::string::npos);
  EXPECT_NE(p->system.find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos);
  EXPECT_NE(p->system.find("axpy_kernel"), std::string::npos) << "the ABI example";
  EXPECT_EQ(p->system.find("tcgen05.alloc"), std::string::npos) << "no Blackwell wrappers in the Hopper pack";
  EXPECT_NE(p->user.find("\"M\": 8192"), std::string::npos) << "concrete shapes";
  EXPECT_NE(p->user.find("PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)"),
            std::string::npos);
  EXPECT_NE(p->user.find("cuBLASLt"), std::string::npos);
  ASSERT_GE(p->parts.size(), 4u);
  EXPECT_EQ(p->parts.front().kind, "instructions");
  EXPECT_EQ(p->parts.back().kind, "user");

  auto b = render_prompt(*suite_, get_task("gemm_n7168_k5120"), "base", target("b200"), repo_root() / "packs");
  ASSERT_TRUE(b.ok()) << b.err().message;
  EXPECT_NE(b->system.find("## Header <ptxkit/tcgen05.cuh>"), std::string::npos);
  EXPECT_EQ(b->system.find("<ptxkit/wgmma.cuh>"), std::string::npos);
}

TEST_F(PromptRenderer, VariantsAddTheirPatternsAndAblationsDropTheRest) {
  const auto& t = get_task("mha_bwd_d128");
  auto base = render_prompt(*suite_, t, "base", target("h200"), repo_root() / "packs");
  auto both = render_prompt(*suite_, t, "fa3_bwd_fwd", target("h200"), repo_root() / "packs");
  auto params = render_prompt(*suite_, t, "ablation_params", target("h200"), repo_root() / "packs");
  auto templ = render_prompt(*suite_, t, "ablation_templates", target("h200"), repo_root() / "packs");
  ASSERT_TRUE(base.ok() && both.ok() && params.ok() && templ.ok());
  EXPECT_GT(both->system.size(), base->system.size());
  EXPECT_NE(both->system.find("dK and dV"), std::string::npos);
  EXPECT_EQ(params->system.find("ptxkit/"), std::string::npos) << "parameters only: no wrappers, none promised";
  EXPECT_NE(base->system.find("include those headers instead of pasting them"), std::string::npos);
  EXPECT_NE(templ->system.find("(code only)"), std::string::npos);
  EXPECT_EQ(templ->system.find("/// Warpgroup."), std::string::npos) << "templates arm drops the contract comments";
  EXPECT_NE(templ->system.find("wgmma.mma_async"), std::string::npos);
  EXPECT_NE(both->user.find("PTXBENCH_FLOAT32, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)"),
            std::string::npos);
}

TEST_F(PromptRenderer, ErrorsNameTheProblem) {
  const auto& t = get_task("gemm_n7168_k5120");
  auto v = render_prompt(*suite_, t, "fa3_fwd_v0", target("h200"), repo_root() / "packs");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.err().message.find("choose one of"), std::string::npos) << v.err().message;
  auto missing = render_prompt(*suite_, t, "base", target("h200"), repo_root() / "no-such-packs");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.err().message.find("variants.json"), std::string::npos) << missing.err().message;
}

TEST_F(PromptRenderer, BasePromptSizesAreWithin25PercentOfThePaper) {
  auto ranks = ptxbench::testing::cl100k_ranks();
  if (!ranks) GTEST_SKIP() << "cl100k ranks not installed (scripts/setup.sh); sizes would only be chars/4";
  const auto est = token_estimator::find({*ranks});
  ASSERT_TRUE(est.is_exact()) << est.method();
  // Paper: Hopper pack 22,314 tokens, Blackwell 28,815 (system prompt for the base variant).
  for (const auto& [target_name, paper] : {std::pair{"h200", 22314.0}, std::pair{"b200", 28815.0}}) {
    auto p = render_prompt(*suite_, get_task("gemm_n7168_k5120"), "base", target(target_name), repo_root() / "packs");
    ASSERT_TRUE(p.ok());
    const auto sizes = measure_prompt(*p, est);
    EXPECT_GE(sizes.system_tokens, 0.75 * paper) << target_name;
    EXPECT_LE(sizes.system_tokens, 1.25 * paper) << target_name;
    std::size_t sum = 0;
    for (const auto& part : sizes.parts)
      if (part.kind != "user") sum += part.tokens;
    EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(sizes.system_tokens), 0.02 * sizes.system_tokens)
        << "parts add up to the message";
  }
}

TEST(PromptText, CodeOnlyDropsCommentLinesAndBlankRuns) {
  EXPECT_EQ(code_only("// header\n#pragma once\n\n\n/// doc\nint f();  // keep trailing\n  // indented\n"),
            "#pragma once\n\nint f();  // keep trailing\n");
}

}  // namespace
}  // namespace ptxbench::prompts
