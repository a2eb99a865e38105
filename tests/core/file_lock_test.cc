#include "core/file_lock.h"

#include <chrono>
#include <optional>

#include <gtest/gtest.h>

#include "core/record_name.h"
#include "test_support.h"

namespace ptxbench {
namespace {

TEST(FileLock, HeldUntilReleasedAndTheWaitIsBounded) {
  auto dir = testing::make_temp_dir("lock");
  auto path = dir / "x.lock";
  EXPECT_FALSE(file_lock::held(path));  // no file yet: nobody holds it, and held() creates nothing
  EXPECT_FALSE(std::filesystem::exists(path));
  auto acquired = file_lock::acquire(path, 0);
  ASSERT_TRUE(acquired);
  std::optional<file_lock> first = std::move(*acquired);
  EXPECT_TRUE(file_lock::held(path));
  auto start = std::chrono::steady_clock::now();
  auto second = file_lock::acquire(path, 0.2);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(second);
  EXPECT_EQ(second.err().message, path.string() + " is locked by another process (0.2 s waited)");
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 5.0);
  first.reset();
  EXPECT_FALSE(file_lock::held(path));
  EXPECT_TRUE(file_lock::acquire(path, 0));
  std::filesystem::remove_all(dir);
}

TEST(FileLock, AFileThatCannotBeOpenedSaysWhy) {
  auto dir = testing::make_temp_dir("lock");
  auto missing = dir / "no-such-folder" / "x.lock";
  auto lock = file_lock::acquire(missing, 0);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.err().message, "cannot open the lock file " + missing.string() + ": No such file or directory");
  std::filesystem::remove_all(dir);
}

TEST(RecordName, EmptyAndControlCharactersAreRefused) {
  EXPECT_TRUE(check_record_name("Qwen3.6-27B", "--model"));
  EXPECT_TRUE(check_record_name("replay:examples/agent/gemm_replay.json", "--model"));
  auto empty = check_record_name("", "--model");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.err().message, "--model: empty name; a run records it and the metrics need one");
  auto newline = check_record_name("a\nb", "--model");
  ASSERT_FALSE(newline);
  EXPECT_EQ(newline.err().message,
            "--model: control character (0x0a) at offset 1 in the name; names must be one line of printable text");
}

}  // namespace
}  // namespace ptxbench
