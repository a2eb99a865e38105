#include <gtest/gtest.h>

#include <regex>

#include "core/build_info.h"

namespace ptxbench {
namespace {

TEST(BuildInfo, NamesTheVersionAndACommitOrSaysUnknown) {
  const auto b = this_build();
  EXPECT_EQ(b.version, PTXBENCH_VERSION);
  EXPECT_TRUE(std::regex_match(b.git_commit, std::regex("[0-9a-f]{40}(\\+dirty)?|unknown"))) << b.git_commit;
}

}  // namespace
}  // namespace ptxbench
