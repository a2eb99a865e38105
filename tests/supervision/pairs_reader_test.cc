// Reading a Fixit pairs directory (docs/adaptation.md, format ptxbench.fixit-pairs/1) through adapt's
// one reader of the format (adapt::load_pairs), into the pairs note collection works on.
#include <map>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "note_fixtures.h"
#include "supervision/pairs_reader.h"
#include "test_support.h"

namespace ptxbench::supervision {
namespace {

namespace fs = std::filesystem;
using ptxbench::testing::pair_spec;

// Rewrites pairs.jsonl and the sha256 manifest.json records for it (as a writer would have).
void replace_pairs_lines(const fs::path& dir, const std::string& lines) {
  ASSERT_TRUE(write_file_atomic(dir / "pairs.jsonl", lines));
  auto manifest = *parse_json(*read_file(dir / "manifest.json", 1 << 20), "manifest");
  manifest["files"]["pairs.jsonl"] = sha256_hex(lines);
  ASSERT_TRUE(write_file_atomic(dir / "manifest.json", manifest.dump(2)));
}

// A pairs directory exactly as `ptxbench fixit pairs` writes it (fixit branch, src/adapt/pairs.cc
// collect_pairs and staged_dir.cc, read for this test at fixit 259ee38): the same keys in the same
// order, a pretty-printed manifest with its "files" map, prompts de-duplicated under their sha256,
// the verdict as pretty JSON plus a newline, and the nulls it writes for an unknown speedup and
// target verdict. Returns the pair's id.
std::string write_like_fixit_pairs(const fs::path& dir) {
  std::map<std::string, std::string> hash;
  auto put = [&](const std::string& rel, const std::string& text) {
    EXPECT_TRUE(write_file_atomic(dir / rel, text));
    hash[rel] = sha256_hex(text);
    return hash[rel];
  };
  const std::string id = "qwen-gemm__gemm_n7168_k5120__h200__base__t1__turn2__r0";
  const std::string base = "files/" + id + "/";
  const std::string system = "You are an expert CUDA programmer.\n", task = "Write the GEMM.\n";
  const std::string sys_rel = "prompts/" + sha256_hex(system) + ".txt", task_rel = "prompts/" + sha256_hex(task) + ".txt";
  put(sys_rel, system);
  put(task_rel, task);
  ordered_json verdict = {{"format", "ptxbench.verdict/1"}, {"decided", {{"outcome", "passed"}}}};
  put(base + "wrong.cu", "__global__ void k() { float x = 1.5f; }\n");
  put(base + "wrong_log.txt", "max abs error 3.2 at (0, 7)\n");
  put(base + "wrong_reply.md", "Here it is.\n```cuda\n__global__ void k() {}\n```\n");
  put(base + "wrong_feedback.txt", "Evaluation FAILED: incorrect_numerical\n<output>\nmax abs error 3.2 at (0, 7)\n</output>");
  put(base + "correct.cu", "__global__ void k() { float x = 2.5f; }\n");
  put(base + "correct_reply.md", "Fixed.\n");
  put(base + "correct_verdict.json", verdict.dump(2) + "\n");
  ordered_json row = {
      {"id", id}, {"task", "gemm_n7168_k5120"}, {"target", "h200"}, {"arch", "sm_90a"}, {"variant", "base"},
      {"error_type", "numerical"}, {"label", "incorrect_numerical"},
      {"system_prompt_file", sys_rel}, {"task_prompt_file", task_rel},
      {"wrong", {{"mined_id", "qwen-gemm__gemm_n7168_k5120__h200__base__t1__turn2"}, {"model", "Qwen3.6-27B"},
                 {"trajectory", "/abs/runs/qwen-gemm/trajectories/gemm_n7168_k5120__h200__base__t1.json"}, {"turn", 2},
                 {"kernel_file", base + "wrong.cu"}, {"kernel_sha256", hash[base + "wrong.cu"]},
                 {"log_file", base + "wrong_log.txt"}, {"log_sha256", hash[base + "wrong_log.txt"]},
                 {"reply_file", base + "wrong_reply.md"}, {"reply_sha256", hash[base + "wrong_reply.md"]},
                 {"feedback_file", base + "wrong_feedback.txt"}, {"feedback_sha256", hash[base + "wrong_feedback.txt"]}}},
      {"correct", {{"model", "gemini-3.1-pro-preview"},
                   {"trajectory", "/abs/repairs/trajectories/qwen-gemm__gemm_n7168_k5120__h200__base__t1__turn2.json"},
                   {"turn", 0},
                   {"kernel_file", base + "correct.cu"}, {"kernel_sha256", hash[base + "correct.cu"]},
                   {"reply_file", base + "correct_reply.md"}, {"reply_sha256", hash[base + "correct_reply.md"]},
                   {"verdict_file", base + "correct_verdict.json"}, {"verdict_sha256", hash[base + "correct_verdict.json"]},
                   {"label", "passed"}, {"target_correct", false}, {"target_verdict", nullptr}, {"speedup", nullptr},
                   {"dynamic_counts", {{"GMMA", 146800640}, {"TMA", 286720}}}}}};
  put("pairs.jsonl", row.dump() + "\n");
  ordered_json files = ordered_json::object();
  for (const auto& [path, h] : hash) files[path] = h;
  ordered_json manifest = {
      {"format", "ptxbench.fixit-pairs/1"}, {"created", "2026-12-01T00:00:00Z"}, {"ptxbench_version", "0.1.0"},
      {"argv", {"ptxbench", "fixit", "pairs", "repairs/", "--out", "pairs/"}},
      {"inputs", {{{"repair_dir", "/abs/repairs"}, {"plan_sha256", std::string(64, 'a')}, {"model", "gemini-3.1-pro-preview"},
                   {"evaluator", "gpu"}, {"run_on_gpu", true}, {"mined_dir", "/abs/mined"}, {"mined_sha256", std::string(64, 'b')}}}},
      {"options", {{"require_target", false}, {"min_speedup", nullptr}, {"select", "all"}, {"cap_per_definition", nullptr},
                   {"seed", 0}}},
      {"counts", {{"repairs", 1}, {"pairs", 1}, {"dropped", ordered_json::object()}}},
      {"files", files}};
  EXPECT_TRUE(write_file_atomic(dir / "manifest.json", manifest.dump(2) + "\n"));
  return id;
}

class SupervisionPairs : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = ptxbench::testing::make_temp_dir("pairs"); }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path m_dir;
};

TEST_F(SupervisionPairs, ReadsThePairsAndTheirFiles) {
  ptxbench::testing::write_pairs_dir(m_dir, {{"p0"}, {"p1", "gemm_n7168_k5120", "gemm_n7168_k5120__h200__base__t3",
                                                     "__global__ void w1() {}\n", "log1", "__global__ void c1() {}\n", 4}});
  for (const auto& path : {m_dir, m_dir / "pairs.jsonl"}) {
    auto in = read_pairs(path);
    ASSERT_TRUE(in) << in.err().message;
    ASSERT_EQ(in->pairs.size(), 2u);
    const auto& p = in->pairs[1];
    EXPECT_EQ(p.key, "p1");
    EXPECT_EQ(p.source.task, "gemm_n7168_k5120");
    EXPECT_EQ(p.source.trajectory, "gemm_n7168_k5120__h200__base__t3");
    EXPECT_EQ(p.source.run, "/abs/runs/student");
    EXPECT_EQ(p.source.turn, 4);
    EXPECT_EQ(p.source.label, "compile_error");
    EXPECT_EQ(p.wrong_kernel, "__global__ void w1() {}\n");
    EXPECT_EQ(p.fixed_kernel, "__global__ void c1() {}\n");
    EXPECT_EQ(p.feedback, "<returncode>1</returncode>\n<output>\nlog1</output>");
    EXPECT_EQ(p.fixed_sha256, sha256_hex(p.fixed_kernel));
    EXPECT_EQ(p.fixed_speedup, 0.41);
    EXPECT_EQ(p.origin["error_type"], "compile");
    EXPECT_EQ(in->task_prompts[1], "Write a GEMM kernel.\nTask:\n{...}\n");
  }
}

TEST_F(SupervisionPairs, BadPairsDirectoriesAreOneLineErrors) {
  auto err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("not a `ptxbench fixit pairs` directory (no manifest.json)"), std::string::npos)
      << err.err().message;
  ptxbench::testing::write_pairs_dir(m_dir, {{"p0"}});
  // A kernel that changed after the directory was written.
  ASSERT_TRUE(write_file_atomic(m_dir / "files/p0/wrong.cu", "changed"));
  err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("pair p0: "), std::string::npos) << err.err().message;
  EXPECT_NE(err.err().message.find("files/p0/wrong.cu does not match its recorded sha256"), std::string::npos)
      << err.err().message;
  // A missing kernel.
  fs::remove(m_dir / "files/p0/wrong.cu");
  err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("files/p0/wrong.cu is missing"), std::string::npos) << err.err().message;
  // A path out of the directory.
  auto line = *parse_json(*read_file(m_dir / "pairs.jsonl", 1 << 20), "x");
  line["correct"]["kernel_file"] = "../../etc/passwd";
  ptxbench::testing::write_pairs_dir(m_dir / "again", {{"p0"}});
  replace_pairs_lines(m_dir / "again", line.dump() + "\n");
  err = read_pairs(m_dir / "again");
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("pair p0: path '../../etc/passwd' is not a relative path inside"), std::string::npos)
      << err.err().message;
  // Another format.
  ASSERT_TRUE(write_file_atomic(m_dir / "manifest.json", R"({"format": "ptxbench.fixit-mined/1"})"));
  err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("manifest format is \"ptxbench.fixit-mined/1\", expected \"ptxbench.fixit-pairs/1\""),
            std::string::npos)
      << err.err().message;
}

TEST_F(SupervisionPairs, ReadsADirectoryAsFixitPairsWritesIt) {
  const std::string id = write_like_fixit_pairs(m_dir);
  auto in = read_pairs(m_dir);
  ASSERT_TRUE(in) << in.err().message;
  ASSERT_EQ(in->pairs.size(), 1u);
  const auto& p = in->pairs[0];
  EXPECT_EQ(p.key, id);
  EXPECT_EQ(p.source.task, "gemm_n7168_k5120");
  EXPECT_EQ(p.source.variant, "base");
  EXPECT_EQ(p.source.label, "incorrect_numerical");
  EXPECT_EQ(p.source.turn, 2);
  // Leak control compares this stem with the running trajectory's file stem.
  EXPECT_EQ(p.source.trajectory, "gemm_n7168_k5120__h200__base__t1");
  EXPECT_EQ(p.source.run, "/abs/runs/qwen-gemm");
  EXPECT_EQ(p.wrong_kernel, "__global__ void k() { float x = 1.5f; }\n");
  EXPECT_EQ(p.fixed_kernel, "__global__ void k() { float x = 2.5f; }\n");
  EXPECT_NE(p.feedback.find("incorrect_numerical"), std::string::npos);
  EXPECT_FALSE(p.fixed_speedup.has_value());  // "speedup": null is unknown, not 0
  EXPECT_EQ(p.fixed_target_correct, false);
  EXPECT_EQ(p.origin["error_type"], "numerical");
  EXPECT_TRUE(p.origin["correct"]["target_verdict"].is_null());
  EXPECT_EQ(p.origin["pairs_manifest_sha256"], sha256_hex(*read_file(m_dir / "manifest.json", 1 << 20)));
  EXPECT_EQ(in->task_prompts[0], "Write the GEMM.\n");
  // A note made from it survives the notes file's strict reader (null speedup included).
  auto note = make_note(p, ptxbench::testing::note_object({"wgmma.mma_async"}), {{"model", "scripted"}, {"attempts", 1}});
  ASSERT_TRUE(note) << note.err().message;
  auto back = note_from_json(to_json(*note), "notes.jsonl:1");
  ASSERT_TRUE(back) << back.err().message;
  EXPECT_FALSE(back->pair.fixed_speedup.has_value());
  EXPECT_EQ(back->pair.source.trajectory, "gemm_n7168_k5120__h200__base__t1");
}

TEST_F(SupervisionPairs, AChangedPairsFileOrPromptIsRefused) {
  write_like_fixit_pairs(m_dir);
  // pairs.jsonl edited after the manifest recorded its sha256.
  auto text = *read_file(m_dir / "pairs.jsonl", 1 << 20);
  ASSERT_TRUE(write_file_atomic(m_dir / "pairs.jsonl", text + "\n"));
  auto err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("pairs.jsonl does not match its recorded sha256"), std::string::npos)
      << err.err().message;
  ASSERT_TRUE(write_file_atomic(m_dir / "pairs.jsonl", text));
  ASSERT_TRUE(read_pairs(m_dir));
  // A task prompt whose bytes no longer give the hash in its name.
  auto line = *parse_json(text, "x");
  ASSERT_TRUE(write_file_atomic(m_dir / line["task_prompt_file"].get<std::string>(), "Write another kernel.\n"));
  err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find(line["task_prompt_file"].get<std::string>() + " does not match its recorded sha256"),
            std::string::npos)
      << err.err().message;
  EXPECT_EQ(err.err().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::supervision
