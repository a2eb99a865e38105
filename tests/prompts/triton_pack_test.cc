// The Triton knowledge pack (packs/triton, "language": "triton" in variants.json): every variant of
// every task renders with the Python entry and the Python example, within the CUDA-PTX packs'
// token budget, and the manifest's per-pack templates are checked like the shared ones.
#include <gtest/gtest.h>

#include "prompt_test_support.h"
#include "prompts/prompt_renderer.h"
#include "prompts/token_estimator.h"
#include "prompts/variant_manifest.h"
#include "suite/task.h"

namespace ptxbench::prompts {
namespace {

using ptxbench::testing::repo_root;

class TritonPack : public ::testing::Test {
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
  static suite* suite_;
};
suite* TritonPack::suite_ = nullptr;

TEST_F(TritonPack, ManifestHasOneTritonPackWithItsOwnTemplates) {
  auto m = load_variant_manifest(repo_root() / "packs");
  ASSERT_TRUE(m.ok()) << m.err().message;
  const pack_manifest* p = m->pack_for("sm90a", "triton");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "triton");
  EXPECT_EQ(m->system_template_of(*p), "triton/system.md");
  EXPECT_EQ(m->abi_example_of(*p), "triton/abi_example.py");
  EXPECT_EQ(m->pack_for("sm90a", "cuda")->name, "sm90a");
  EXPECT_EQ(m->pack_for("triton", "cuda"), nullptr);  // the Triton pack never serves CUDA candidates
  EXPECT_TRUE(check_manifest_files(*m, repo_root() / "packs").ok());
}

TEST_F(TritonPack, EveryVariantOfEveryTaskRendersForPython) {
  auto m = load_variant_manifest(repo_root() / "packs");
  ASSERT_TRUE(m.ok());
  const pack_manifest* pack = m->pack_for("sm90a", "triton");
  int rendered = 0;
  for (const auto& t : suite_->tasks) {
    const auto* family = pack->family(t.problem);
    ASSERT_NE(family, nullptr) << t.problem;
    std::vector<std::string> names;
    for (const auto& v : *family) names.push_back(v.name);
    for (const auto& a : pack->ablations) names.push_back(a.name);
    for (const auto& name : names) {
      auto p = render_prompt(*suite_, t, name, *suite_->find_target("h200"), repo_root() / "packs", "triton");
      ASSERT_TRUE(p.ok()) << t.name << " " << name << ": " << p.err().message;
      EXPECT_EQ(p->pack, "triton");
      EXPECT_NE(p->system.find("```python\nimport torch"), std::string::npos);  // the Python example
      EXPECT_EQ(p->system.find("PTXBENCH_EXPORT"), std::string::npos);
      EXPECT_EQ(p->user.find("{{"), std::string::npos);
      EXPECT_NE(p->user.find("```python\ndef run("), std::string::npos);
      ++rendered;
    }
  }
  EXPECT_GE(rendered, 40);
}

TEST_F(TritonPack, EntryIsTheDefinitionsTensorsInOrder) {
  const task* t = suite_->find_task("mha_with_lse_d128_causal");
  EXPECT_EQ(python_signature(t->def),
            "def run(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, O: torch.Tensor, LSE: torch.Tensor) -> None:\n"
            "    # input: Q [B, H, S, D] bfloat16\n"
            "    # input: K [B, H, S, D] bfloat16\n"
            "    # input: V [B, H, S, D] bfloat16\n"
            "    # output: O [B, H, S, D] bfloat16 (write every element)\n"
            "    # output: LSE [B, H, S] float32 (write every element)");
}

TEST_F(TritonPack, BasePromptStaysWithinTheCudaPacksBudget) {
  // Measured with the same estimator as the CUDA packs (cl100k when its ranks are here).
  auto ranks = ptxbench::testing::cl100k_ranks();
  token_estimator estimator = ranks ? token_estimator::find({*ranks}) : token_estimator::chars_over_4("no ranks here");
  const task* t = suite_->find_task("gemm_n7168_k5120");
  const target_info* h200 = suite_->find_target("h200");
  for (const char* variant : {"base", "persistent"}) {
    auto triton = render_prompt(*suite_, *t, variant, *h200, repo_root() / "packs", "triton");
    auto cuda = render_prompt(*suite_, *t, "base", *h200, repo_root() / "packs");
    ASSERT_TRUE(triton.ok() && cuda.ok());
    auto ts = measure_prompt(*triton, estimator);
    auto cs = measure_prompt(*cuda, estimator);
    EXPECT_LE(ts.system_tokens, cs.system_tokens) << variant;
    EXPECT_GT(ts.system_tokens, 2000u) << variant;  // not an empty pack either
  }
}

TEST_F(TritonPack, TeachesOnlyWhatTheLaunchPlanCanReplayAndSaysWhy) {
  // The Triton evaluation replays a recorded launch plan: tensor descriptors (host or device) and
  // memory run() allocates cannot be bound to the task's tensors (docs/gpu-evaluation.md, "Triton
  // candidates"). No variant may show them in code; every variant says why they are left out.
  auto m = load_variant_manifest(repo_root() / "packs");
  ASSERT_TRUE(m.ok());
  const pack_manifest* pack = m->pack_for("sm90a", "triton");
  int rendered = 0;
  for (const auto& t : suite_->tasks) {
    std::vector<std::string> names;
    for (const auto& v : *pack->family(t.problem)) names.push_back(v.name);
    for (const auto& name : names) {
      auto p = render_prompt(*suite_, t, name, *suite_->find_target("h200"), repo_root() / "packs", "triton");
      ASSERT_TRUE(p.ok()) << p.err().message;
      for (const char* refused : {"TensorDescriptor.from_tensor(", "make_tensor_descriptor(", "_desc.load(",
                                  "_desc.store(", "torch.empty(", "torch.zeros(", "set_allocator(",
                                  "warp_specialize=True"})
        EXPECT_EQ(p->system.find(refused), std::string::npos) << t.name << " " << name << " teaches " << refused;
      EXPECT_NE(p->system.find("Tensor descriptors (TMA) cannot be evaluated"), std::string::npos) << name;
      EXPECT_NE(p->system.find("cannot be replayed"), std::string::npos) << name;
      EXPECT_NE(p->system.find("triton.language.extra.libdevice"), std::string::npos) << name;
      ++rendered;
    }
  }
  EXPECT_GE(rendered, 30);
}

TEST_F(TritonPack, UnknownLanguageIsAClearError) {
  auto p = render_prompt(*suite_, *suite_->find_task("gemm_n7168_k5120"), "base", *suite_->find_target("h200"),
                         repo_root() / "packs", "tilelang");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.err().message.find("unknown candidate language 'tilelang'"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::prompts
