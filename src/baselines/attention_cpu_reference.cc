#include "baselines/attention_cpu_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace ptxbench::baselines {
namespace {

status check_sizes(const attention_shape& shape,
                   std::initializer_list<std::pair<const char*, const std::vector<float>*>> tensors,
                   std::initializer_list<std::pair<const char*, const std::vector<float>*>> row_tensors) {
  if (shape.heads <= 0 || shape.s <= 0 || shape.d <= 0) {
    return make_error(fmt::format("attention reference: heads, S, D must be positive (got {}, {}, {})", shape.heads,
                                  shape.s, shape.d));
  }
  const auto rows = static_cast<std::size_t>(shape.heads * shape.s);
  for (const auto& [name, t] : tensors) {
    if (t->size() != rows * static_cast<std::size_t>(shape.d)) {
      return make_error(fmt::format("attention reference: {} has {} values, expected heads*S*D = {}", name, t->size(),
                                    rows * static_cast<std::size_t>(shape.d)));
    }
  }
  for (const auto& [name, t] : row_tensors) {
    if (t->size() != rows) {
      return make_error(fmt::format("attention reference: {} has {} values, expected heads*S = {}", name, t->size(),
                                    rows));
    }
  }
  return ok();
}

// Indexing helpers over [heads, S, D].
struct view {
  const std::vector<float>& data;
  int64_t s, d;
  [[nodiscard]] double at(int64_t head, int64_t row, int64_t e) const {
    return data[static_cast<std::size_t>((head * s + row) * d + e)];
  }
};

double dot(const view& a, const view& b, int64_t head, int64_t i, int64_t j) {
  double sum = 0.0;
  for (int64_t e = 0; e < a.d; ++e) sum += a.at(head, i, e) * b.at(head, j, e);
  return sum;
}

bool visible(const attention_shape& shape, int64_t i, int64_t j) { return !shape.causal || j <= i; }

}  // namespace

result<attention_forward_result> attention_forward_cpu(const std::vector<float>& q, const std::vector<float>& k,
                                                       const std::vector<float>& v, const attention_shape& shape) {
  if (status s = check_sizes(shape, {{"Q", &q}, {"K", &k}, {"V", &v}}, {}); !s) return s.err();
  const view Q{q, shape.s, shape.d}, K{k, shape.s, shape.d}, V{v, shape.s, shape.d};
  attention_forward_result out;
  out.o.assign(q.size(), 0.0F);
  out.lse.assign(static_cast<std::size_t>(shape.heads * shape.s), 0.0F);
  std::vector<double> logits(static_cast<std::size_t>(shape.s));
  for (int64_t h = 0; h < shape.heads; ++h) {
    for (int64_t i = 0; i < shape.s; ++i) {
      double row_max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < shape.s; ++j) {
        logits[j] = visible(shape, i, j) ? shape.scale * dot(Q, K, h, i, j) : -std::numeric_limits<double>::infinity();
        row_max = std::max(row_max, logits[j]);
      }
      double row_sum = 0.0;
      for (int64_t j = 0; j < shape.s; ++j) row_sum += std::exp(logits[j] - row_max);
      const double lse = row_max + std::log(row_sum);
      out.lse[static_cast<std::size_t>(h * shape.s + i)] = static_cast<float>(lse);
      for (int64_t e = 0; e < shape.d; ++e) {
        double acc = 0.0;
        for (int64_t j = 0; j < shape.s; ++j) acc += std::exp(logits[j] - lse) * V.at(h, j, e);
        out.o[static_cast<std::size_t>((h * shape.s + i) * shape.d + e)] = static_cast<float>(acc);
      }
    }
  }
  return out;
}

result<attention_backward_result> attention_backward_cpu(const std::vector<float>& q, const std::vector<float>& k,
                                                         const std::vector<float>& v, const std::vector<float>& o,
                                                         const std::vector<float>& d_o, const std::vector<float>& lse,
                                                         const attention_shape& shape) {
  if (status s = check_sizes(shape, {{"Q", &q}, {"K", &k}, {"V", &v}, {"O", &o}, {"dO", &d_o}}, {{"L", &lse}}); !s) {
    return s.err();
  }
  const view Q{q, shape.s, shape.d}, K{k, shape.s, shape.d}, V{v, shape.s, shape.d}, O{o, shape.s, shape.d},
      dO{d_o, shape.s, shape.d};
  std::vector<double> dq(q.size(), 0.0), dk(q.size(), 0.0), dv(q.size(), 0.0);
  auto idx = [&](int64_t h, int64_t row, int64_t e) { return static_cast<std::size_t>((h * shape.s + row) * shape.d + e); };
  for (int64_t h = 0; h < shape.heads; ++h) {
    for (int64_t i = 0; i < shape.s; ++i) {
      const double delta = dot(dO, O, h, i, i);
      const double l = lse[static_cast<std::size_t>(h * shape.s + i)];
      for (int64_t j = 0; j < shape.s; ++j) {
        if (!visible(shape, i, j)) continue;
        const double p = std::exp(shape.scale * dot(Q, K, h, i, j) - l);
        const double ds = p * (dot(dO, V, h, i, j) - delta);
        for (int64_t e = 0; e < shape.d; ++e) {
          dv[idx(h, j, e)] += p * dO.at(h, i, e);
          dq[idx(h, i, e)] += shape.scale * ds * K.at(h, j, e);
          dk[idx(h, j, e)] += shape.scale * ds * Q.at(h, i, e);
        }
      }
    }
  }
  attention_backward_result out;
  out.dq.assign(dq.begin(), dq.end());
  out.dk.assign(dk.begin(), dk.end());
  out.dv.assign(dv.begin(), dv.end());
  return out;
}

}  // namespace ptxbench::baselines
