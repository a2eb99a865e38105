// `ptxbench tasks export --format harbor`: the folder of every task matches the checked-in copy in
// tests/harbor/golden/ byte for byte (PTXBENCH_UPDATE_GOLDEN=1 rewrites the copy after an intended
// change: review its diff), the export is the same bytes every time, and bad requests leave nothing.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "core/file_io.h"
#include "core/process.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace {
namespace fs = std::filesystem;

const fs::path k_golden = fs::path(PTXBENCH_SOURCE_ROOT) / "tests" / "harbor" / "golden" / "h200-base";

process_result ptxbench(const std::vector<std::string>& args, const fs::path& cache) {
  std::vector<std::string> argv = {(bin_dir() / "ptxbench").string(), "--root", repo_root().string(), "--cache-dir",
                                   cache.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process({.argv = argv, .timeout_s = 120});
}

// Every file under dir, by relative path.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    auto text = read_file(e.path(), 64u << 20);
    out[e.path().lexically_relative(dir).string()] = text ? *text : "<unreadable>";
  }
  return out;
}

class HarborExport : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = make_temp_dir("harbor-export"); }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path m_dir;
};

TEST_F(HarborExport, EveryTaskMatchesItsCheckedInFolderByteForByte) {
  auto r = ptxbench({"tasks", "export", "--format", "harbor", "--out", (m_dir / "out").string()}, m_dir / "cache");
  ASSERT_TRUE(r.succeeded()) << describe_exit(r) << r.err;
  const auto got = tree(m_dir / "out");
  if (const char* update = std::getenv("PTXBENCH_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    fs::remove_all(k_golden);
    fs::create_directories(k_golden.parent_path());
    fs::copy(m_dir / "out", k_golden, fs::copy_options::recursive);
    GTEST_SKIP() << "rewrote " << k_golden << "; review `git diff` before committing it";
  }
  const auto want = tree(k_golden);
  // Every task of the suite that h200 can evaluate is there, with its five files, and nothing else.
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [path, content] : want) {
    auto it = got.find(path);
    if (it == got.end()) {
      ADD_FAILURE() << "missing from the export: " << path;
      continue;
    }
    EXPECT_TRUE(it->second == content) << path << " differs from " << (k_golden / path)
                                       << " (PTXBENCH_UPDATE_GOLDEN=1 rewrites the copy after an intended change)";
  }
  for (const auto& [path, content] : got) EXPECT_TRUE(want.count(path)) << "not in the checked-in copy: " << path;
  EXPECT_TRUE(got.count("gemm_n7168_k5120/task.toml"));
  EXPECT_TRUE(got.count("gemm_n7168_k5120/tests/test.sh"));
  EXPECT_TRUE(got.count("manifest.json"));
  struct stat st {};
  ASSERT_EQ(::stat((m_dir / "out" / "gemm_n7168_k5120" / "tests" / "test.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR) << "tests/test.sh is not executable";
  EXPECT_NE(r.out.find("harbor run -p"), std::string::npos) << r.out;

  // The same command again: the same bytes (nothing depends on the time, the commit or the machine).
  auto again = ptxbench({"tasks", "export", "--format", "harbor", "--out", (m_dir / "again").string()}, m_dir / "cache2");
  ASSERT_TRUE(again.succeeded()) << again.err;
  EXPECT_TRUE(tree(m_dir / "again") == got);
}

TEST_F(HarborExport, TheInstructionIsThePromptRunSendsWithTheAgentsWorkingNotes) {
  auto r = ptxbench({"tasks", "export", "--format", "harbor", "--out", (m_dir / "out").string(), "--tasks",
                     "gemm_n7168_k5120", "--variant", "builtin-minimal"},
                    m_dir / "cache");
  ASSERT_TRUE(r.succeeded()) << r.err;
  auto prompt = ptxbench({"prompt", "gemm_n7168_k5120", "--variant", "builtin-minimal", "--out", (m_dir / "p").string()},
                         m_dir / "cache");
  ASSERT_TRUE(prompt.succeeded()) << prompt.err;
  auto instruction = read_file(m_dir / "out" / "gemm_n7168_k5120" / "instruction.md", 1u << 24);
  auto system = read_file(m_dir / "p" / "system.md", 1u << 24);
  auto user = read_file(m_dir / "p" / "user.md", 1u << 24);
  ASSERT_TRUE(instruction && system && user);
  EXPECT_NE(instruction->find(*system), std::string::npos) << "the system message is not in instruction.md";
  EXPECT_NE(instruction->find(*user), std::string::npos) << "the user message is not in instruction.md";
  EXPECT_NE(instruction->find("ptxbench eval /workspace/kernel.cu --task gemm_n7168_k5120 --target h200 --remote "
                              "\"$PTXBENCH_SERVICE_URL\""),
            std::string::npos);
  EXPECT_NE(instruction->find("/opt/ptxbench/include/ptxbench/abi.h"), std::string::npos);
  auto toml = read_file(m_dir / "out" / "gemm_n7168_k5120" / "task.toml", 1u << 20);
  ASSERT_TRUE(toml);
  EXPECT_NE(toml->find("gpus = 0"), std::string::npos);
  EXPECT_NE(toml->find("ptxbench_variant = \"builtin-minimal\""), std::string::npos);
  EXPECT_NE(toml->find("PTXBENCH_SERVICE_URL = \"${PTXBENCH_SERVICE_URL:-http://host.docker.internal:8000}\""),
            std::string::npos);
}

TEST_F(HarborExport, ANonEmptyOutIsRefusedAndKeptAsItWas) {
  fs::create_directories(m_dir / "out");
  ASSERT_TRUE(write_file_atomic(m_dir / "out" / "notes.txt", "mine\n"));
  auto r = ptxbench({"tasks", "export", "--format", "harbor", "--out", (m_dir / "out").string()}, m_dir / "cache");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ptxbench: --out " + (m_dir / "out").string() +
                       ": not empty; the export writes a new folder and never overwrites\n");
  EXPECT_EQ(tree(m_dir / "out"), (std::map<std::string, std::string>{{"notes.txt", "mine\n"}}));
  // An empty folder is fine.
  fs::create_directories(m_dir / "empty");
  auto ok = ptxbench({"tasks", "export", "--format", "harbor", "--out", (m_dir / "empty").string(), "--tasks",
                      "gemm_n7168_k5120"},
                     m_dir / "cache");
  EXPECT_TRUE(ok.succeeded()) << ok.err;
  EXPECT_TRUE(fs::exists(m_dir / "empty" / "gemm_n7168_k5120" / "task.toml"));
}

TEST_F(HarborExport, BadRequestsGetOneLineAndWriteNothing) {
  const std::string out = (m_dir / "out").string();
  struct bad_case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<bad_case> cases = {
      {{"--format", "harbor", "--out", out, "--tasks", "gemm_n7168_k512"},
       "ptxbench: --tasks: unknown task 'gemm_n7168_k512' (did you mean 'gemm_n7168_k5120'?)"},
      {{"--format", "harbor", "--out", out, "--target", "b200"},
       "ptxbench: target b200 is checked statically only here (no such GPU): a Harbor reward needs the kernel to run; "
       "export for a target whose GPU the service has (h100, h200)"},
      {{"--format", "harbor", "--out", out, "--target", "h300"},
       "ptxbench: unknown target 'h300' (did you mean 'h100'?)"},
      {{"--format", "harbor", "--out", out, "--variant", "nosuch"}, ""},
      {{"--format", "harbor", "--out", out, "--tasks", ","}, "ptxbench: --tasks: no task named"},
      {{"--format", "terminal-bench", "--out", out}, ""},
      {{"--out", out}, ""},
      {{"--format", "harbor"}, ""},
      {{"--format", "harbor", "--out", out, "--agent-timeout", "nan"}, ""},
      {{"--format", "harbor", "--out", out, "--image", "two words"},
       "ptxbench: --image 'two words': expected one word, a Docker image name"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"tasks", "export"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = ptxbench(args, m_dir / "cache");
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    EXPECT_EQ(r.exit_code, 2) << shown << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << shown << r.err;
    if (!c.error.empty()) {
      EXPECT_EQ(r.err.substr(0, r.err.find('\n')).substr(0, c.error.size()), c.error) << shown;
    }
    EXPECT_FALSE(fs::exists(out)) << shown << ": wrote " << out;
  }
}

}  // namespace
}  // namespace ptxbench::testing
