// Reading a Fixit pairs directory (docs/adaptation.md, format ptxbench.fixit-pairs/1).
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
  EXPECT_NE(err.err().message.find("not a Fixit pairs directory"), std::string::npos);
  ptxbench::testing::write_pairs_dir(m_dir, {{"p0"}});
  // A kernel that changed after the directory was written.
  ASSERT_TRUE(write_file_atomic(m_dir / "files/p0/wrong.cu", "changed"));
  err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("pair p0: wrong: files/p0/wrong.cu does not match kernel_sha256"), std::string::npos)
      << err.err().message;
  // A missing kernel.
  fs::remove(m_dir / "files/p0/wrong.cu");
  err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("files/p0/wrong.cu: no such file"), std::string::npos) << err.err().message;
  // A path out of the directory.
  auto line = *parse_json(*read_file(m_dir / "pairs.jsonl", 1 << 20), "x");
  line["correct"]["kernel_file"] = "../../etc/passwd";
  ASSERT_TRUE(write_file_atomic(m_dir / "pairs.jsonl", line.dump() + "\n"));
  ptxbench::testing::write_pairs_dir(m_dir / "again", {{"p0"}});
  ASSERT_TRUE(write_file_atomic(m_dir / "again/pairs.jsonl", line.dump() + "\n"));
  err = read_pairs(m_dir / "again");
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("'../../etc/passwd' is not a path inside the pairs directory"), std::string::npos)
      << err.err().message;
  // Another format.
  ASSERT_TRUE(write_file_atomic(m_dir / "manifest.json", R"({"format": "ptxbench.fixit-mined/1"})"));
  err = read_pairs(m_dir);
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("format is \"ptxbench.fixit-mined/1\", expected \"ptxbench.fixit-pairs/1\""),
            std::string::npos);
}

}  // namespace
}  // namespace ptxbench::supervision
