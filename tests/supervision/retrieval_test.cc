// Retrieval of repair notes: which notes come back for which failing kernel, grouping by wrong
// kernel, the caps, comments ignored, the error text counting, leak control, and the texts shown.
#include <gtest/gtest.h>

#include "note_fixtures.h"
#include "supervision/retrieval.h"
#include "supervision/run_supervision.h"

namespace ptxbench::supervision {
namespace {

using ptxbench::testing::make_test_note;
using ptxbench::testing::note_spec;

const std::string k_host =
    "void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t stream) {\n"
    "  launch_kernel<<<dim3(56, 64), 128, 0, stream>>>(A.data<bf16>(), B.data<bf16>(), C.data<bf16>());\n}\n"
    "PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n";

const std::string k_wgmma_kernel =
    "#include <ptxbench/abi.h>\n__global__ void launch_kernel(const bf16* A, const bf16* B, bf16* C) {\n"
    "  uint64_t desc_a = make_smem_desc(A), desc_b = make_smem_desc(B);\n"
    "  asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1}, %2, %3;\" : \"+f\"(acc[0]) : \"l\"(desc_a), \"l\"(desc_b));\n"
    "  asm volatile(\"wgmma.commit_group.sync.aligned;\");\n}\n" + k_host;

const std::string k_tma_kernel =
    "#include <ptxbench/abi.h>\n__global__ void launch_kernel(const __grid_constant__ CUtensorMap map, bf16* C) {\n"
    "  __shared__ uint64_t mbar;\n  mbarrier_init(&mbar, 1);\n"
    "  asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\");\n"
    "  mbarrier_arrive_expect_tx(&mbar, 16384);\n}\n"
    "void make_map(CUtensorMap* m) { cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, nullptr, nullptr, nullptr, nullptr, nullptr, "
    "CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); }\n" +
    k_host;

const std::string k_smem_kernel =
    "#include <ptxbench/abi.h>\n__global__ void launch_kernel(const bf16* A, const bf16* B, bf16* C) {\n"
    "  __shared__ float tile_a[32][33], tile_b[32][33];\n  float sum = 0;\n"
    "  for (int k0 = 0; k0 < 5120; k0 += 32) { tile_a[threadIdx.y][threadIdx.x] = 0; __syncthreads(); sum += tile_a[0][0]; }\n}\n" +
    k_host;

// The same code as k_smem_kernel plus comments that name every wgmma and TMA word: comments must not count.
const std::string k_commented_kernel =
    "// wgmma mma_async commit_group m64n128k16 desc_a desc_b make_smem_desc\n"
    "/* cuTensorMapEncodeTiled mbarrier_init cp async bulk tensor */\n" + k_smem_kernel;

class SupervisionRetrieval : public ::testing::Test {
 protected:
  void SetUp() override {
    note_set set;
    set.sha256 = "0123456789abcdef";
    auto add = [&](note_spec s) { set.notes.push_back(make_test_note(s)); };
    add({"a1", "gemm_n7168_k5120", "other__t0", k_wgmma_kernel, "FIXED_A1", {"wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"}, 0.3});
    add({"a2", "gemm_n7168_k5120", "other__t1", k_wgmma_kernel, "FIXED_A2", {"wgmma.mma_async", "smem descriptor", "accumulator registers"}, 0.5});
    add({"b1", "gemm_n7168_k5120", "gemm_n7168_k5120__h200__base__t0", k_tma_kernel, "FIXED_B1",
         {"cp.async.bulk.tensor", "mbarrier.arrive.expect_tx", "cuTensorMapEncodeTiled"}, 0.2});
    add({"c1", "gemm_n7168_k5120", "other__t2", k_smem_kernel, "FIXED_C1", {"__syncthreads"}, std::nullopt});
    add({"d1", "gemm_n7168_k5120", "other__t3", k_commented_kernel, "FIXED_D1", {"bank conflicts"}, std::nullopt});
    m_corpus = std::make_shared<note_corpus>(std::move(set));
  }

  retrieval_result retrieve(const std::string& kernel, const std::string& error, retrieval_options o = {},
                            std::vector<bool> allowed = {}) {
    if (allowed.empty()) allowed.assign(m_corpus->notes().notes.size(), true);
    note_retriever r(m_corpus, allowed, o);
    return r.retrieve(kernel, error);
  }

  std::vector<std::string> group_keys(const retrieval_result& r, std::size_t g) {
    std::vector<std::string> out;
    for (auto n : r.groups.at(g).notes) out.push_back(m_corpus->notes().notes[n].pair.key);
    return out;
  }

  std::shared_ptr<note_corpus> m_corpus;
};

TEST_F(SupervisionRetrieval, NotesAreGroupedByWrongKernel) {
  ASSERT_EQ(m_corpus->groups().size(), 4u);  // a1 and a2 share their wrong kernel
  EXPECT_EQ(m_corpus->groups()[0].notes, (std::vector<std::size_t>{0, 1}));
}

TEST_F(SupervisionRetrieval, AWgmmaFailureRetrievesTheWgmmaNotesFirst) {
  std::string failing = k_wgmma_kernel;
  failing.replace(failing.find("m64n128k16"), 10, "m64n256k16");
  auto r = retrieve(failing, "Evaluation FAILED:\n[M=8192] INCORRECT_NUMERICAL");
  ASSERT_EQ(r.groups.size(), 3u);  // top 3 groups
  EXPECT_EQ(group_keys(r, 0), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_GT(r.groups[0].score, r.groups[1].score);
  // 8 instruction notes at most: a1's three, a2's three, then two from the second group.
  ASSERT_EQ(r.instruction_notes.size(), 8u);
  EXPECT_EQ(r.instruction_notes[0].note, 0u);
  EXPECT_EQ(r.instruction_notes[5].note, 1u);
  EXPECT_FALSE(r.fixed_kernel_note);  // notes mode
}

TEST_F(SupervisionRetrieval, ATmaFailureRetrievesTheTmaNoteFirst) {
  auto r = retrieve(k_tma_kernel, "");
  ASSERT_FALSE(r.groups.empty());
  EXPECT_EQ(group_keys(r, 0), (std::vector<std::string>{"b1"}));
}

TEST_F(SupervisionRetrieval, TheErrorTextCounts) {
  // A kernel with nothing distinctive; the compiler log names the TMA calls.
  auto r = retrieve("__global__ void launch_kernel() {}\n",
                    "kernel.cu(7): error: identifier \"cuTensorMapEncodeTiled\" is undefined\n"
                    "kernel.cu(9): error: mbarrier_arrive_expect_tx was not declared");
  ASSERT_FALSE(r.groups.empty());
  EXPECT_EQ(group_keys(r, 0), (std::vector<std::string>{"b1"}));
}

TEST_F(SupervisionRetrieval, CommentsDoNotCount) {
  // d1's wrong kernel is c1's plus comments full of wgmma words: for any query they score the same.
  for (const auto* q : {&k_wgmma_kernel, &k_tma_kernel, &k_smem_kernel}) {
    auto r = retrieve(*q, "", {retrieval_mode::notes, {1.5, 0.75}, 4, 8});
    double c = -1, d = -1;
    for (const auto& g : r.groups) {
      auto keys = group_keys(r, static_cast<std::size_t>(&g - r.groups.data()));
      if (keys == std::vector<std::string>{"c1"}) c = g.score;
      if (keys == std::vector<std::string>{"d1"}) d = g.score;
    }
    ASSERT_GT(c, 0);
    EXPECT_DOUBLE_EQ(c, d);
  }
}

TEST_F(SupervisionRetrieval, CapsAndModesAreConfigurable) {
  retrieval_options o;
  o.top_groups = 1;
  o.max_notes = 4;
  o.mode = retrieval_mode::notes_and_kernel;
  auto r = retrieve(k_wgmma_kernel, "", o);
  ASSERT_EQ(r.groups.size(), 1u);
  ASSERT_EQ(r.instruction_notes.size(), 4u);
  ASSERT_TRUE(r.fixed_kernel_note);
  EXPECT_EQ(m_corpus->notes().notes[*r.fixed_kernel_note].pair.key, "a2");  // the faster fix of the best group
  std::string text = render_retrieval(*m_corpus, r, o.mode);
  EXPECT_NE(text.find("Repair notes from earlier fixes"), std::string::npos);
  EXPECT_NE(text.find("wgmma.fence"), std::string::npos);
  EXPECT_NE(text.find("FIXED_A2"), std::string::npos);
  EXPECT_EQ(text.find("FIXED_A1"), std::string::npos);
  auto rec = retrieval_record(*m_corpus, r, o);
  EXPECT_EQ(rec["mode"], "notes+kernel");
  EXPECT_EQ(rec["groups"][0]["notes"], (ordered_json{"a1", "a2"}));
  EXPECT_EQ(rec["fixed_kernel"]["note"], "a2");
  EXPECT_EQ(rec["instruction_notes"].size(), 4u);

  o.mode = retrieval_mode::notes;
  text = render_retrieval(*m_corpus, retrieve(k_wgmma_kernel, "", o), o.mode);
  EXPECT_EQ(text.find("FIXED_A2"), std::string::npos);  // notes only: no solution shown
  EXPECT_FALSE(check_retrieval_options({retrieval_mode::notes, {1.5, 0.75}, 0, 8}));
  EXPECT_FALSE(check_retrieval_options({retrieval_mode::notes, {1.5, 0.75}, 3, 0}));
}

TEST_F(SupervisionRetrieval, ExcludedNotesLeaveTheRankingEntirely) {
  std::vector<bool> allowed(5, true);
  allowed[0] = false;  // a1
  allowed[2] = false;  // b1
  auto r = retrieve(k_wgmma_kernel, "", {}, allowed);
  EXPECT_EQ(r.candidate_groups, 3u);
  EXPECT_EQ(group_keys(r, 0), (std::vector<std::string>{"a2"}));
  for (const auto& t : r.instruction_notes) EXPECT_NE(t.note, 0u);
  for (const auto& g : r.groups) EXPECT_NE(g.group, 1u);  // b1's group does not exist for this retriever
}

TEST_F(SupervisionRetrieval, LeakControlExcludesTheRunningTrajectoryUnlessAllowed) {
  task t;
  t.name = "gemm_n7168_k5120";
  t.problem = "gemm";
  run_supervision sup;
  sup.notes = m_corpus;
  const std::string running = "gemm_n7168_k5120__h200__base__t0";  // b1 came from this trajectory
  auto s = sup.for_trajectory(t, running);
  EXPECT_EQ(s.trajectory_record["arm"], "notes");
  EXPECT_EQ(s.trajectory_record["notes"]["same_trajectory_notes"], "excluded");
  EXPECT_EQ(s.trajectory_record["notes"]["excluded_keys"], (ordered_json{"b1"}));
  EXPECT_EQ(s.trajectory_record["notes"]["sha256"], "0123456789abcdef");
  std::string feedback = "Evaluation FAILED";
  agent::failed_turn f{&t, "base", 0, running, 0, eval_outcome::compile_error, &k_tma_kernel, &feedback};
  auto got = s.on_failed_turn(f);
  ASSERT_TRUE(got);
  for (const auto& g : got->record["groups"])
    for (const auto& k : g["notes"]) EXPECT_NE(k, "b1");
  EXPECT_EQ(got->text.find("cuTensorMapEncodeTiled"), std::string::npos);

  // Another trajectory of the same task may use b1.
  auto other = sup.for_trajectory(t, "gemm_n7168_k5120__h200__base__t1");
  EXPECT_EQ(other.trajectory_record["notes"]["excluded_keys"], ordered_json::array());
  EXPECT_EQ(other.on_failed_turn(f)->record["groups"][0]["notes"], (ordered_json{"b1"}));

  sup.allow_same_trajectory_notes = true;
  auto allowed = sup.for_trajectory(t, running);
  EXPECT_EQ(allowed.trajectory_record["notes"]["same_trajectory_notes"], "allowed");
  EXPECT_EQ(allowed.trajectory_record["notes"]["same_trajectory_keys"], (ordered_json{"b1"}));
  EXPECT_EQ(allowed.on_failed_turn(f)->record["groups"][0]["notes"], (ordered_json{"b1"}));
  EXPECT_EQ(sup.plan_record()["notes"]["same_trajectory_notes"], "allowed");
}

}  // namespace
}  // namespace ptxbench::supervision
