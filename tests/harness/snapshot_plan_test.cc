// The output snapshot's chunk order (gpu/harness/snapshot_plan.h): every byte exactly once, aligned
// chunks, and an order that changes from call to call.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "gpu/harness/snapshot_plan.h"

namespace ptxbench::gpu {
namespace {

TEST(SnapshotPlan, CoversEveryByteOfEveryOutputOnce) {
  std::vector<std::size_t> sizes = {8192ull * 7168 * 2, 1000, 256, 0, 4096 * 3 + 17};
  auto plan = snapshot_plan(sizes, 16, 42);
  std::map<std::size_t, std::vector<snapshot_chunk>> per_output;
  for (const auto& c : plan) per_output[c.output].push_back(c);
  for (std::size_t o = 0; o < sizes.size(); ++o) {
    auto chunks = per_output[o];
    std::sort(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
    std::size_t at = 0;
    for (const auto& c : chunks) {
      EXPECT_EQ(c.offset, at) << "output " << o;
      EXPECT_EQ(c.offset % 256, 0u);
      EXPECT_GT(c.bytes, 0u);
      at += c.bytes;
    }
    EXPECT_EQ(at, sizes[o]) << "output " << o;
  }
  EXPECT_EQ(per_output[0].size(), 16u);  // the GEMM's 117 MB output in 16 chunks
  EXPECT_EQ(per_output[1].size(), 4u);   // 1000 bytes: 256-byte chunks at least
  EXPECT_EQ(per_output[2].size(), 1u);
  EXPECT_EQ(per_output[3].size(), 0u);
}

TEST(SnapshotPlan, TheOrderIsDrawnPerCall) {
  std::vector<std::size_t> sizes = {1u << 26, 1u << 24};
  auto a = snapshot_plan(sizes, 16, 1), b = snapshot_plan(sizes, 16, 2), again = snapshot_plan(sizes, 16, 1);
  auto offsets = [](const std::vector<snapshot_chunk>& p) {
    std::vector<std::pair<std::size_t, std::size_t>> v;
    for (const auto& c : p) v.emplace_back(c.output, c.offset);
    return v;
  };
  EXPECT_EQ(offsets(a), offsets(again));
  EXPECT_NE(offsets(a), offsets(b));
  // Over many calls, every chunk comes first sometimes: no part of the output is reliably read last.
  std::map<std::pair<std::size_t, std::size_t>, int> first;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    auto p = snapshot_plan(sizes, 16, seed);
    ++first[{p.front().output, p.front().offset}];
  }
  EXPECT_EQ(first.size(), 32u);
}

}  // namespace
}  // namespace ptxbench::gpu
