#include "baselines/attention_cpu_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace ptxbench::baselines {
namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  std::vector<float> out(n);
  for (float& x : out) x = dist(gen);
  return out;
}

attention_shape shape_of(int64_t heads, int64_t s, int64_t d, bool causal) {
  return attention_shape{heads, s, d, causal, 1.0 / std::sqrt(static_cast<double>(d))};
}

TEST(AttentionCpuReference, HandComputedTwoByTwo) {
  // q = [1, 2], k = [0, 1], v = [10, 20], D = 1, scale 1: row i has logits [0, q_i].
  attention_shape shape{1, 2, 1, false, 1.0};
  auto r = attention_forward_cpu({1.0F, 2.0F}, {0.0F, 1.0F}, {10.0F, 20.0F}, shape);
  ASSERT_TRUE(r.ok()) << r.err().message;
  for (int i = 0; i < 2; ++i) {
    const double e = std::exp(static_cast<double>(i + 1));
    EXPECT_NEAR(r->o[i], (10.0 + 20.0 * e) / (1.0 + e), 1e-5);
    EXPECT_NEAR(r->lse[i], std::log(1.0 + e), 1e-6);
  }
  shape.causal = true;
  auto c = attention_forward_cpu({1.0F, 2.0F}, {0.0F, 1.0F}, {10.0F, 20.0F}, shape);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->o[0], 10.0, 1e-6);  // query 0 sees key 0 only
  EXPECT_NEAR(c->lse[0], 0.0, 1e-6);
  EXPECT_NEAR(c->o[1], (10.0 + 20.0 * std::exp(2.0)) / (1.0 + std::exp(2.0)), 1e-5);
}

TEST(AttentionCpuReference, UniformValueRowsGiveThatRow) {
  for (bool causal : {false, true}) {
    const attention_shape shape = shape_of(2, 7, 4, causal);
    const std::size_t n = 2 * 7 * 4;
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 4) - 1.5F;  // every row = [-1.5, -0.5, .5, 1.5]
    auto r = attention_forward_cpu(random_values(n, 1), random_values(n, 2), v, shape);
    ASSERT_TRUE(r.ok());
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(r->o[i], v[i], 1e-5) << "causal=" << causal << " at " << i;
  }
}

TEST(AttentionCpuReference, IdenticalLogitsGiveLogOfVisibleCount) {
  // Q = 0 makes every logit 0: LSE = log(number of visible keys), O = mean of the visible V rows.
  for (bool causal : {false, true}) {
    const int64_t s = 6, d = 3;
    const attention_shape shape = shape_of(1, s, d, causal);
    const std::vector<float> v = random_values(s * d, 3);
    auto r = attention_forward_cpu(std::vector<float>(s * d, 0.0F), random_values(s * d, 4), v, shape);
    ASSERT_TRUE(r.ok());
    for (int64_t i = 0; i < s; ++i) {
      const int64_t visible = causal ? i + 1 : s;
      EXPECT_NEAR(r->lse[i], std::log(static_cast<double>(visible)), 1e-6);
      for (int64_t e = 0; e < d; ++e) {
        double mean = 0.0;
        for (int64_t j = 0; j < visible; ++j) mean += v[j * d + e];
        EXPECT_NEAR(r->o[i * d + e], mean / visible, 1e-5);
      }
    }
  }
}

TEST(AttentionCpuReference, RejectsMismatchedSizes) {
  auto r = attention_forward_cpu(std::vector<float>(8), std::vector<float>(7), std::vector<float>(8),
                                 shape_of(1, 2, 4, false));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("K has 7 values"), std::string::npos) << r.err().message;
  auto b = attention_backward_cpu(std::vector<float>(8), std::vector<float>(8), std::vector<float>(8),
                                  std::vector<float>(8), std::vector<float>(8), std::vector<float>(3),
                                  shape_of(1, 2, 4, false));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.err().message.find("L has 3 values"), std::string::npos) << b.err().message;
}

// loss(Q, K, V) = sum(O * G); its gradients are the backward's outputs with dO = G, O and L from
// the forward. Central differences on every input element check all three.
double loss(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
            const std::vector<float>& g, const attention_shape& shape) {
  auto r = attention_forward_cpu(q, k, v, shape);
  double sum = 0.0;
  for (std::size_t i = 0; i < g.size(); ++i) sum += static_cast<double>(r->o[i]) * g[i];
  return sum;
}

TEST(AttentionCpuReference, BackwardMatchesFiniteDifferences) {
  for (bool causal : {false, true}) {
    const attention_shape shape = shape_of(2, 5, 3, causal);
    const std::size_t n = 2 * 5 * 3;
    std::vector<float> q = random_values(n, 10), k = random_values(n, 11), v = random_values(n, 12),
                       g = random_values(n, 13);
    auto fwd = attention_forward_cpu(q, k, v, shape);
    ASSERT_TRUE(fwd.ok());
    auto bwd = attention_backward_cpu(q, k, v, fwd->o, g, fwd->lse, shape);
    ASSERT_TRUE(bwd.ok()) << bwd.err().message;
    const float h = 1e-2F;
    for (auto [input, grad, name] : {std::tuple{&q, &bwd->dq, "dQ"}, {&k, &bwd->dk, "dK"}, {&v, &bwd->dv, "dV"}}) {
      for (std::size_t i = 0; i < n; ++i) {
        const float saved = (*input)[i];
        (*input)[i] = saved + h;
        const double up = loss(q, k, v, g, shape);
        (*input)[i] = saved - h;
        const double down = loss(q, k, v, g, shape);
        (*input)[i] = saved;
        const double numeric = (up - down) / (2.0 * h);
        EXPECT_NEAR((*grad)[i], numeric, 2e-3 + 1e-2 * std::abs(numeric))
            << name << "[" << i << "] causal=" << causal;
      }
    }
  }
}

TEST(AttentionCpuReference, CausalMaskLeavesLaterKeysWithoutGradient) {
  // With causal masking key j only receives gradient from queries i >= j; key 0 from everyone, and
  // a change to the last key cannot change any output but the last row.
  const attention_shape shape = shape_of(1, 4, 2, true);
  std::vector<float> q = random_values(8, 20), k = random_values(8, 21), v = random_values(8, 22);
  std::vector<float> g(8, 0.0F);
  g[0] = 1.0F;  // only O[0, 0] matters
  auto fwd = attention_forward_cpu(q, k, v, shape);
  auto bwd = attention_backward_cpu(q, k, v, fwd->o, g, fwd->lse, shape);
  ASSERT_TRUE(bwd.ok());
  for (std::size_t i = 2; i < 8; ++i) {
    EXPECT_EQ(bwd->dk[i], 0.0F) << i;
    EXPECT_EQ(bwd->dv[i], 0.0F) << i;
  }
  EXPECT_NEAR(bwd->dv[0], 1.0F, 1e-6);  // O[0] = V[0] exactly
}

}  // namespace
}  // namespace ptxbench::baselines
