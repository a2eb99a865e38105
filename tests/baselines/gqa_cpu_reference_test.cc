// The double-precision GQA reference on cases small enough to work out by hand: the grouped head
// mapping, bottom-right causal masking with more keys than queries, paged keys through a shuffled
// page table (page sizes 1 and 2) equal to the same keys stored contiguously, decode, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "baselines/gqa_cpu_reference.h"

namespace ptxbench::baselines {
namespace {

// One sequence, one query, two keys; two query heads share one KV head (d = 1, scale 1).
// Head 0: q = 1, logits (0, 1): lse = log(1 + e), o = (10 + 20e)/(1 + e).
// Head 1: q = 2, logits (0, 2): lse = log(1 + e^2), o = (10 + 20e^2)/(1 + e^2).
TEST(GqaCpuReference, HandComputedTwoHeadsShareOneKvHead) {
  const gqa_shape shape{2, 1, 1, false, 1, false, 1.0};
  const gqa_index index{{0, 1}, {0, 2}, {}};
  auto r = gqa_forward_cpu({1.0F, 2.0F}, {0.0F, 1.0F}, {10.0F, 20.0F}, index, shape);
  ASSERT_TRUE(r.ok()) << r.err().message;
  const double e = std::exp(1.0), e2 = std::exp(2.0);
  EXPECT_NEAR(r->lse[0], std::log(1 + e), 1e-6);
  EXPECT_NEAR(r->o[0], (10 + 20 * e) / (1 + e), 1e-5);
  EXPECT_NEAR(r->lse[1], std::log(1 + e2), 1e-6);
  EXPECT_NEAR(r->o[1], (10 + 20 * e2) / (1 + e2), 1e-5);
}

// nq = 2, nk = 3, bottom-right: query 0 sees keys 0..1, query 1 sees keys 0..2. With q = 0 every
// visible logit is 0, so o is the mean of the visible values and lse = log(count).
TEST(GqaCpuReference, BottomRightCausalWithMoreKeysThanQueries) {
  const gqa_shape shape{1, 1, 1, false, 1, true, 0.5};
  const gqa_index index{{0, 2}, {0, 3}, {}};
  auto r = gqa_forward_cpu({0.0F, 0.0F}, {5.0F, -3.0F, 7.0F}, {1.0F, 2.0F, 6.0F}, index, shape);
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_NEAR(r->o[0], 1.5, 1e-6);
  EXPECT_NEAR(r->lse[0], std::log(2.0), 1e-6);
  EXPECT_NEAR(r->o[1], 3.0, 1e-6);
  EXPECT_NEAR(r->lse[1], std::log(3.0), 1e-6);
  // Not causal: both queries see all three keys.
  auto full = gqa_forward_cpu({0.0F, 0.0F}, {5.0F, -3.0F, 7.0F}, {1.0F, 2.0F, 6.0F}, index,
                              gqa_shape{1, 1, 1, false, 1, false, 0.5});
  ASSERT_TRUE(full.ok());
  EXPECT_NEAR(full->o[0], 3.0, 1e-6);
}

// h_q = 4, h_kv = 2: heads 0 and 1 read KV head 0 (values 1), heads 2 and 3 read KV head 1 (values 9).
TEST(GqaCpuReference, QueryHeadsMapToTheirGroupsKvHead) {
  const gqa_shape shape{4, 2, 1, false, 1, false, 1.0};
  const gqa_index index{{0, 1}, {0, 1}, {}};
  auto r = gqa_forward_cpu({0.3F, -1.0F, 2.0F, 0.0F}, {1.0F, 1.0F}, {1.0F, 9.0F}, index, shape);
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_FLOAT_EQ(r->o[0], 1.0F);
  EXPECT_FLOAT_EQ(r->o[1], 1.0F);
  EXPECT_FLOAT_EQ(r->o[2], 9.0F);
  EXPECT_FLOAT_EQ(r->o[3], 9.0F);
  // One key: lse is the single logit q * k.
  EXPECT_NEAR(r->lse[0], 0.3, 1e-6);
  EXPECT_NEAR(r->lse[2], 2.0, 1e-6);
}

// Two sequences (3 and 2 keys) stored contiguously, and the same keys in a pool through a shuffled
// page table: page size 1 and page size 2 (second sequence: one page).
TEST(GqaCpuReference, PagedKeysEqualTheSameKeysStoredContiguously) {
  const int64_t h_q = 2, h_kv = 1, d = 2;
  // Ragged keys: 5 rows of [h_kv, d].
  const std::vector<float> k = {0.1F, 0.2F, -0.5F, 0.3F, 0.9F, -0.1F, 0.4F, 0.4F, -0.2F, 0.7F};
  const std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<float> q = {0.5F, -0.25F, 1.0F, 0.5F, 2.0F, 1.0F, -1.0F, 0.5F};  // 2 queries x 2 heads x d
  const gqa_index ragged_index{{0, 1, 2}, {0, 3, 5}, {}};
  auto ragged = gqa_forward_cpu(q, k, v, ragged_index, gqa_shape{h_q, h_kv, d, false, 1, false, 0.7});
  ASSERT_TRUE(ragged.ok()) << ragged.err().message;

  // Page size 1: row r of the contiguous keys lives in page pool_of[r] of a 7-page pool.
  const std::vector<int32_t> pool_of = {4, 0, 6, 2, 5};
  std::vector<float> kp(7 * d, 99.0F), vp(7 * d, 99.0F);
  for (int r = 0; r < 5; ++r)
    for (int e = 0; e < d; ++e) {
      kp[pool_of[r] * d + e] = k[r * d + e];
      vp[pool_of[r] * d + e] = v[r * d + e];
    }
  auto paged = gqa_forward_cpu(q, kp, vp, gqa_index{{0, 1, 2}, {0, 3, 5}, pool_of},
                               gqa_shape{h_q, h_kv, d, true, 1, false, 0.7});
  ASSERT_TRUE(paged.ok()) << paged.err().message;
  for (std::size_t i = 0; i < ragged->o.size(); ++i) EXPECT_NEAR(paged->o[i], ragged->o[i], 1e-6) << i;
  for (std::size_t i = 0; i < ragged->lse.size(); ++i) EXPECT_NEAR(paged->lse[i], ragged->lse[i], 1e-6) << i;

  // Page size 2: sequence 0 = 4 keys (2 pages), sequence 1 = 2 keys (1 page); compare with ragged 4 + 2.
  const std::vector<float> k6 = {0.1F, 0.2F, -0.5F, 0.3F, 0.9F, -0.1F, 0.3F, 0.3F, 0.4F, 0.4F, -0.2F, 0.7F};
  const std::vector<float> v6 = {1, 2, 3, 4, 5, 6, 11, 12, 7, 8, 9, 10};
  auto ragged6 = gqa_forward_cpu(q, k6, v6, gqa_index{{0, 1, 2}, {0, 4, 6}, {}},
                                 gqa_shape{h_q, h_kv, d, false, 1, false, 0.7});
  ASSERT_TRUE(ragged6.ok());
  // Pool of 4 pages of 2 rows; logical pages (0: rows 0-1, 1: rows 2-3, 2: rows 4-5) go to pool pages 3, 1, 0.
  std::vector<float> kp2(4 * 2 * d, 99.0F), vp2(4 * 2 * d, 99.0F);
  const int pool_page[3] = {3, 1, 0};
  for (int r = 0; r < 6; ++r)
    for (int e = 0; e < d; ++e) {
      const int dst = (pool_page[r / 2] * 2 + r % 2) * d + e;
      kp2[dst] = k6[r * d + e];
      vp2[dst] = v6[r * d + e];
    }
  auto paged2 = gqa_forward_cpu(q, kp2, vp2, gqa_index{{0, 1, 2}, {0, 2, 3}, {3, 1, 0}},
                                gqa_shape{h_q, h_kv, d, true, 2, false, 0.7});
  ASSERT_TRUE(paged2.ok()) << paged2.err().message;
  for (std::size_t i = 0; i < ragged6->o.size(); ++i) EXPECT_NEAR(paged2->o[i], ragged6->o[i], 1e-6) << i;
}

// Decode: one query per sequence, qo_indptr = 0..n; each query attends only to its own sequence.
TEST(GqaCpuReference, DecodeQueriesSeeOnlyTheirOwnSequence) {
  const gqa_shape shape{1, 1, 1, true, 1, false, 1.0};
  // Sequence 0: pages {2}; sequence 1: pages {0, 1}. q = 0: o = mean of the sequence's values.
  auto r = gqa_forward_cpu({0.0F, 0.0F}, {1.0F, 2.0F, 3.0F}, {10.0F, 20.0F, 40.0F},
                           gqa_index{{0, 1, 2}, {0, 1, 3}, {2, 0, 1}}, shape);
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_FLOAT_EQ(r->o[0], 40.0F);
  EXPECT_NEAR(r->o[1], 15.0, 1e-6);
  EXPECT_NEAR(r->lse[1], std::log(2.0), 1e-6);
}

TEST(GqaCpuReference, BadIndicesAndShapesAreErrors) {
  const gqa_shape paged{1, 1, 1, true, 1, false, 1.0};
  auto out_of_range = gqa_forward_cpu({0.0F}, {1.0F, 2.0F}, {1.0F, 2.0F}, gqa_index{{0, 1}, {0, 1}, {2}}, paged);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.err().message.find("kv_indices[0] = 2 outside the pool [0, 2)"), std::string::npos);
  auto decreasing = gqa_forward_cpu({0.0F, 0.0F}, {1.0F, 2.0F}, {1.0F, 2.0F},
                                    gqa_index{{0, 1, 2}, {0, 2, 1}, {}}, gqa_shape{1, 1, 1, false, 1, false, 1.0});
  ASSERT_FALSE(decreasing.ok());
  EXPECT_NE(decreasing.err().message.find("kv_indptr decreases at 2"), std::string::npos);
  auto groups = gqa_forward_cpu({0.0F, 0.0F, 0.0F}, {1.0F, 1.0F}, {1.0F, 1.0F}, gqa_index{{0, 1}, {0, 1}, {}},
                                gqa_shape{3, 2, 1, false, 1, false, 1.0});
  ASSERT_FALSE(groups.ok());
  EXPECT_NE(groups.err().message.find("h_q = 3 is not a multiple of h_kv = 2"), std::string::npos);
  // Bottom-right causal with fewer keys than queries: query 0 sees nothing.
  auto unseen = gqa_forward_cpu({0.0F, 0.0F}, {1.0F}, {1.0F}, gqa_index{{0, 2}, {0, 1}, {}},
                                gqa_shape{1, 1, 1, false, 1, true, 1.0});
  ASSERT_FALSE(unseen.ok());
  EXPECT_NE(unseen.err().message.find("sees no key"), std::string::npos);
  auto short_q = gqa_forward_cpu({0.0F}, {1.0F}, {1.0F}, gqa_index{{0, 2}, {0, 1}, {}},
                                 gqa_shape{1, 1, 1, false, 1, false, 1.0});
  ASSERT_FALSE(short_q.ok());
  EXPECT_NE(short_q.err().message.find("qo_indptr ends at 2, expected 1"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::baselines
