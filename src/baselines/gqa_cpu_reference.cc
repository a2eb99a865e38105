#include "baselines/gqa_cpu_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptxbench::baselines {
namespace {

status check_indptr(const std::vector<int32_t>& v, const char* name, int64_t total) {
  if (v.size() < 2) return make_error(fmt::format("GQA reference: {} needs at least 2 entries", name));
  if (v.front() != 0) return make_error(fmt::format("GQA reference: {}[0] = {}, expected 0", name, v.front()));
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] < v[i - 1])
      return make_error(fmt::format("GQA reference: {} decreases at {} ({} after {})", name, i, v[i], v[i - 1]));
  if (v.back() != total)
    return make_error(fmt::format("GQA reference: {} ends at {}, expected {}", name, v.back(), total));
  return ok();
}

// Row `key` (0-based within sequence b) of the key/value storage, as an element offset of head 0.
struct key_rows {
  const gqa_index& index;
  const gqa_shape& shape;
  [[nodiscard]] std::size_t offset(int64_t b, int64_t key) const {
    int64_t row = 0;
    if (shape.paged) {
      const int64_t page = index.kv_indices[static_cast<std::size_t>(index.kv_indptr[b] + key / shape.page_size)];
      row = page * shape.page_size + key % shape.page_size;
    } else {
      row = index.kv_indptr[b] + key;
    }
    return static_cast<std::size_t>(row * shape.h_kv * shape.d);
  }
  [[nodiscard]] int64_t keys(int64_t b) const {
    return (index.kv_indptr[b + 1] - index.kv_indptr[b]) * (shape.paged ? shape.page_size : 1);
  }
};

}  // namespace

result<attention_forward_result> gqa_forward_cpu(const std::vector<float>& q, const std::vector<float>& k,
                                                 const std::vector<float>& v, const gqa_index& index,
                                                 const gqa_shape& shape) {
  if (shape.h_q <= 0 || shape.h_kv <= 0 || shape.d <= 0 || shape.page_size <= 0)
    return make_error("GQA reference: h_q, h_kv, d and page_size must be positive");
  if (shape.h_q % shape.h_kv != 0)
    return make_error(fmt::format("GQA reference: h_q = {} is not a multiple of h_kv = {}", shape.h_q, shape.h_kv));
  const int64_t row_q = shape.h_q * shape.d, row_kv = shape.h_kv * shape.d;
  if (q.size() % static_cast<std::size_t>(row_q) != 0)
    return make_error(fmt::format("GQA reference: q has {} values, not a multiple of h_q*d = {}", q.size(), row_q));
  const int64_t total_q = static_cast<int64_t>(q.size()) / row_q;
  if (k.size() != v.size() || k.size() % static_cast<std::size_t>(row_kv * shape.page_size) != 0)
    return make_error(fmt::format("GQA reference: k and v must have the same size, a multiple of {}",
                                  row_kv * shape.page_size));
  const int64_t kv_rows = static_cast<int64_t>(k.size()) / row_kv;  // key rows, or pages * page_size
  if (status s = check_indptr(index.qo_indptr, "qo_indptr", total_q); !s) return s.err();
  if (index.kv_indptr.size() != index.qo_indptr.size())
    return make_error("GQA reference: qo_indptr and kv_indptr differ in length");
  if (shape.paged) {
    if (status s = check_indptr(index.kv_indptr, "kv_indptr", static_cast<int64_t>(index.kv_indices.size())); !s)
      return s.err();
    const int64_t pages = kv_rows / shape.page_size;
    for (std::size_t i = 0; i < index.kv_indices.size(); ++i)
      if (index.kv_indices[i] < 0 || index.kv_indices[i] >= pages)
        return make_error(fmt::format("GQA reference: kv_indices[{}] = {} outside the pool [0, {})", i,
                                      index.kv_indices[i], pages));
  } else if (status s = check_indptr(index.kv_indptr, "kv_indptr", kv_rows); !s) {
    return s.err();
  }

  const key_rows rows{index, shape};
  const int64_t group = shape.h_q / shape.h_kv;
  attention_forward_result out;
  out.o.assign(q.size(), 0.0F);
  out.lse.assign(static_cast<std::size_t>(total_q * shape.h_q), 0.0F);
  std::vector<double> logits;
  for (int64_t b = 0; b + 1 < static_cast<int64_t>(index.qo_indptr.size()); ++b) {
    const int64_t q0 = index.qo_indptr[b], nq = index.qo_indptr[b + 1] - q0, nk = rows.keys(b);
    for (int64_t i = 0; i < nq; ++i) {
      const int64_t last = shape.causal ? std::min(nk - 1, i + (nk - nq)) : nk - 1;
      if (last < 0)
        return make_error(fmt::format("GQA reference: query {} of sequence {} sees no key ({} queries, {} keys)", i, b,
                                      nq, nk));
      for (int64_t h = 0; h < shape.h_q; ++h) {
        const std::size_t qi = static_cast<std::size_t>((q0 + i) * row_q + h * shape.d);
        const std::size_t head = static_cast<std::size_t>((h / group) * shape.d);
        logits.assign(static_cast<std::size_t>(last + 1), 0.0);
        double row_max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j <= last; ++j) {
          const std::size_t kj = rows.offset(b, j) + head;
          double dot = 0.0;
          for (int64_t e = 0; e < shape.d; ++e) dot += static_cast<double>(q[qi + e]) * k[kj + e];
          logits[j] = shape.scale * dot;
          row_max = std::max(row_max, logits[j]);
        }
        double row_sum = 0.0;
        for (double x : logits) row_sum += std::exp(x - row_max);
        const double lse = row_max + std::log(row_sum);
        out.lse[static_cast<std::size_t>((q0 + i) * shape.h_q + h)] = static_cast<float>(lse);
        for (int64_t e = 0; e < shape.d; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j <= last; ++j) acc += std::exp(logits[j] - lse) * v[rows.offset(b, j) + head + e];
          out.o[qi + e] = static_cast<float>(acc);
        }
      }
    }
  }
  return out;
}

}  // namespace ptxbench::baselines
