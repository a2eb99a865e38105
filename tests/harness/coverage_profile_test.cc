// How the dynamic check reads its Nsight Compute report back: both pages name kernels by their mangled
// symbols, the identity the candidate's built object gives (a demangled name is not one: ncu prints a
// bool template argument as <0> where the C++ demangler prints <false>), and both pages the same way,
// so work coverage can join the source page's instructions with the details page's counters.
#include <algorithm>

#include <gtest/gtest.h>

#include "gpu/harness/coverage_profile.h"

namespace ptxbench::gpu {
namespace {

bool has_pair(const std::vector<std::string>& argv, const std::string& flag, const std::string& value) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag && argv[i + 1] == value) return true;
  return false;
}

TEST(CoverageProfile, BothPagesNameKernelsByTheirMangledSymbols) {
  for (const auto& argv : {details_page_command("/opt/ncu/ncu", "/tmp/run/profile"),
                           source_page_command("/opt/ncu/ncu", "/tmp/run/profile")}) {
    ASSERT_FALSE(argv.empty());
    EXPECT_EQ(argv[0], "/opt/ncu/ncu");
    EXPECT_TRUE(has_pair(argv, "-i", "/tmp/run/profile.ncu-rep"));
    EXPECT_TRUE(has_pair(argv, "--print-kernel-base", "mangled"));
    EXPECT_NE(std::find(argv.begin(), argv.end(), "--csv"), argv.end());
  }
  EXPECT_TRUE(has_pair(details_page_command("ncu", "r"), "--page", "details"));
  // The TMA byte counters must come in bytes: with ncu's default units an H100 run printed Mbyte,
  // and the TMA coverage was unknown for every kernel.
  EXPECT_TRUE(has_pair(details_page_command("ncu", "r"), "--print-units", "base"));
  EXPECT_TRUE(has_pair(source_page_command("ncu", "r"), "--page", "source"));
}

TEST(CoverageProfile, MetricComplaintIsTheFirstErrorLineAboutAMetric) {
  EXPECT_EQ(ncu_metric_complaint("==PROF== Connected\n==ERROR== Failed to find metric sm__x\n==ERROR== other\n"),
            "==ERROR== Failed to find metric sm__x");
  EXPECT_EQ(ncu_metric_complaint("==ERROR== The application returned an error code (1).\n"), "");
}

}  // namespace
}  // namespace ptxbench::gpu
