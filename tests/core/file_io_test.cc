#include <gtest/gtest.h>

#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench {
namespace {

TEST(FileIo, MissingFileAndDirectoryAreNamed) {
  auto r = read_file("/nonexistent/x.cu", 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.err().message, "/nonexistent/x.cu: no such file");
  auto d = read_file("/tmp", 100);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.err().message, "/tmp: is a directory, expected a file");
}

TEST(FileIo, SizeCapIsEnforced) {
  auto dir = testing::make_temp_dir("io");
  ASSERT_TRUE(write_file_atomic(dir / "big.cu", std::string(2048, 'x')).ok());
  auto r = read_file(dir / "big.cu", 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("2048 bytes, over the limit of 1 KiB"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(FileIo, TextChecks) {
  EXPECT_EQ(check_text("", "k.cu").err().message, "k.cu: file is empty");
  EXPECT_NE(check_text(std::string("ab\0cd", 5), "k.cu").err().message.find("binary file (NUL byte at offset 2)"),
            std::string::npos);
  EXPECT_NE(check_text("\xff\xfe", "k.cu").err().message.find("invalid UTF-8"), std::string::npos);
  EXPECT_TRUE(check_text("// h\xc3\xa9llo\n", "k.cu").ok());
}

TEST(FileIo, AtomicWriteReplacesWholeFile) {
  auto dir = testing::make_temp_dir("io");
  ASSERT_TRUE(write_file_atomic(dir / "a/b/out.json", "first").ok());
  ASSERT_TRUE(write_file_atomic(dir / "a/b/out.json", "second").ok());
  EXPECT_EQ(*read_file(dir / "a/b/out.json", 100), "second");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir / "a/b")) { (void)e; ++files; }
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench
