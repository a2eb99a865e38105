#include "suite/sequence_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace ptxbench {
namespace {

// A tiny counter-free generator (splitmix64) with exact bounded draws. Our own, because the layout
// is part of the task and must be identical on every machine, while the standard library's
// distributions are implementation-defined.
class layout_rng {
 public:
  explicit layout_rng(uint64_t seed) : m_state(seed) {}
  uint64_t next() {
    uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n), n >= 1 (rejection removes the modulo bias).
  uint64_t below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    for (;;) {
      uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }

 private:
  uint64_t m_state;
};

// n positive parts summing to total (total >= n): n - 1 distinct cut points in [1, total - 1]
// chosen uniformly (Floyd's algorithm), so every composition is equally likely.
std::vector<int64_t> positive_composition(int64_t total, int64_t n, layout_rng& rng) {
  std::unordered_set<int64_t> cuts;
  const int64_t k = n - 1, m = total - 1;
  for (int64_t j = m - k + 1; j <= m; ++j) {
    int64_t t = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(j)));
    if (!cuts.insert(t).second) cuts.insert(j);
  }
  std::vector<int64_t> sorted(cuts.begin(), cuts.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> parts;
  int64_t previous = 0;
  for (int64_t c : sorted) {
    parts.push_back(c - previous);
    previous = c;
  }
  parts.push_back(total - previous);
  return parts;
}

// n non-negative parts summing to total.
std::vector<int64_t> nonnegative_composition(int64_t total, int64_t n, layout_rng& rng) {
  std::vector<int64_t> parts = positive_composition(total + n, n, rng);
  for (int64_t& p : parts) --p;
  return parts;
}

std::vector<int32_t> offsets_of(const std::vector<int64_t>& lengths) {
  std::vector<int32_t> out{0};
  for (int64_t l : lengths) out.push_back(static_cast<int32_t>(out.back() + l));
  return out;
}

struct index_input {
  const tensor_spec* spec = nullptr;
  input_spec source;
};

// The rows a tensor input indexes: the value of its first axis.
result<int64_t> first_axis(const definition& d, const std::map<std::string, int64_t>& axes, const char* name,
                           const char* why) {
  const tensor_spec* t = d.find_input(name);
  if (!t || !t->shape || t->shape->empty())
    return make_error(fmt::format("{} needs a tensor input named {} ({})", why, name, "its first axis is the row count"));
  return axes.at(t->shape->front());
}

// An indptr input: one int32 axis.
result<int64_t> indptr_length(const index_input& in, const std::map<std::string, int64_t>& axes) {
  if (in.spec->type != dtype::int32 || !in.spec->shape || in.spec->shape->size() != 1)
    return make_error(fmt::format("inputs.{}: an index input must be a one-dimensional int32 tensor", in.spec->name));
  return axes.at(in.spec->shape->front());
}

// Pinned indptr values: size, start 0, strictly increasing, end `total`; `unit` names what it counts.
status check_indptr(const std::string& name, const std::vector<int64_t>& v, int64_t length, int64_t total,
                    const char* unit) {
  const std::string where = fmt::format("inputs.{}.values", name);
  if (static_cast<int64_t>(v.size()) != length)
    return make_error(fmt::format("{}: has {} values, expected len_indptr = {}", where, v.size(), length));
  if (v.front() != 0) return make_error(fmt::format("{}[0] = {}: an indptr starts at 0", where, v.front()));
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i] <= v[i - 1])
      return make_error(fmt::format("{}[{}] = {} after {}: an indptr must increase strictly (every sequence has at "
                                    "least one {})",
                                    where, i, v[i], v[i - 1], unit));
  }
  if (v.back() != total)
    return make_error(fmt::format("{}[{}] = {}: the last offset must equal the {} count {}", where, v.size() - 1,
                                  v.back(), unit, total));
  return ok();
}

std::vector<int32_t> narrow(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

bool is_index_generator(std::string_view generator) {
  return generator == k_gen_qo_indptr || generator == k_gen_ragged_kv_indptr || generator == k_gen_paged_kv_indptr ||
         generator == k_gen_paged_kv_indices;
}

int64_t sequence_layout::max_q_len() const {
  int64_t m = 0;
  for (int64_t b = 0; b < sequences(); ++b) m = std::max(m, q_len(b));
  return m;
}

int64_t sequence_layout::max_kv_len() const {
  int64_t m = 0;
  for (int64_t b = 0; b < sequences(); ++b) m = std::max(m, kv_len(b));
  return m;
}

uint64_t layout_seed(const std::string& uuid) {
  uint64_t h = 0xCBF29CE484222325ULL;  // FNV-1a 64
  for (unsigned char c : uuid) h = (h ^ c) * 0x100000001B3ULL;
  return h;
}

result<std::optional<sequence_layout>> sequence_layout_for(const definition& d, const workload& w) {
  std::optional<index_input> qo, ragged_kv, paged_kv, indices;
  for (const auto& t : d.inputs) {
    input_spec s = w.input(t.name);
    if (s.kind != input_kind::derived) {
      if (s.kind == input_kind::random && (t.name == "qo_indptr" || t.name == "kv_indptr" || t.name == "kv_indices"))
        return make_error(fmt::format("inputs.{}: an index input cannot be random; give it a derived generator ({}, {}, "
                                      "{} or {})",
                                      t.name, k_gen_qo_indptr, k_gen_ragged_kv_indptr, k_gen_paged_kv_indptr,
                                      k_gen_paged_kv_indices));
      continue;
    }
    if (!is_index_generator(s.generator)) {
      if (s.generator.rfind("ragged.", 0) == 0 || s.generator.rfind("paged_kv.", 0) == 0)
        return make_error(fmt::format("inputs.{}: unknown index generator '{}' (expected {}, {}, {} or {})", t.name,
                                      s.generator, k_gen_qo_indptr, k_gen_ragged_kv_indptr, k_gen_paged_kv_indptr,
                                      k_gen_paged_kv_indices));
      if (s.values) return make_error(fmt::format("inputs.{}: only index inputs take \"values\"", t.name));
      continue;
    }
    std::optional<index_input>* slot = s.generator == k_gen_qo_indptr          ? &qo
                                       : s.generator == k_gen_ragged_kv_indptr ? &ragged_kv
                                       : s.generator == k_gen_paged_kv_indptr  ? &paged_kv
                                                                               : &indices;
    if (*slot) return make_error(fmt::format("inputs.{}: a second input with generator '{}'", t.name, s.generator));
    *slot = index_input{&t, s};
  }
  if (!qo && !ragged_kv && !paged_kv && !indices) return std::optional<sequence_layout>{};

  const auto axes = resolve_axes(w, d);
  if (ragged_kv && (paged_kv || indices))
    return make_error("a layout is either ragged (ragged.kv_indptr) or paged (paged_kv.indptr, paged_kv.indices), not both");
  if (!ragged_kv && !paged_kv) return make_error("an index layout needs a kv_indptr input (ragged.kv_indptr or paged_kv.indptr)");
  if (paged_kv && !indices) return make_error("paged_kv.indptr needs a kv_indices input with generator paged_kv.indices");
  if (indices && !paged_kv) return make_error("paged_kv.indices needs a kv_indptr input with generator paged_kv.indptr");

  sequence_layout l;
  l.paged = paged_kv.has_value();
  l.decode = !qo.has_value();
  const index_input& kv = l.paged ? *paged_kv : *ragged_kv;

  auto rows_q = first_axis(d, axes, "q", "an index layout");
  if (!rows_q) return rows_q.err();
  l.total_q = *rows_q;
  auto kv_length = indptr_length(kv, axes);
  if (!kv_length) return kv_length.err();
  const int64_t len_indptr = *kv_length;
  if (len_indptr < 2) return make_error(fmt::format("inputs.{}: len_indptr = {}, need at least 2 (one sequence)",
                                                    kv.spec->name, len_indptr));
  const int64_t n = len_indptr - 1;
  if (qo) {
    auto qo_length = indptr_length(*qo, axes);
    if (!qo_length) return qo_length.err();
    if (*qo_length != len_indptr)
      return make_error(fmt::format("inputs.{} has {} entries but inputs.{} has {}: both delimit the same sequences",
                                    qo->spec->name, *qo_length, kv.spec->name, len_indptr));
  } else if (l.total_q != n) {
    return make_error(fmt::format("decode has one query per sequence: len_indptr = {} needs {} query rows, q has {} "
                                  "(len_indptr must be batch_size + 1)",
                                  len_indptr, n, l.total_q));
  }
  if (l.total_q < n) return make_error(fmt::format("{} sequences need at least {} query rows, q has {}", n, n, l.total_q));

  int64_t kv_count = 0;  // what kv_indptr counts: pages (entries of kv_indices) or key rows
  if (l.paged) {
    const tensor_spec* cache = d.find_input("k_cache");
    if (!cache || !cache->shape || cache->shape->size() < 2)
      return make_error("a paged layout needs a k_cache input shaped [num_pages, page_size, ...]");
    l.num_pages = axes.at((*cache->shape)[0]);
    l.page_size = axes.at((*cache->shape)[1]);
    if (indices->spec->type != dtype::int32 || !indices->spec->shape || indices->spec->shape->size() != 1)
      return make_error(fmt::format("inputs.{}: an index input must be a one-dimensional int32 tensor", indices->spec->name));
    l.num_kv_indices = axes.at(indices->spec->shape->front());
    kv_count = l.num_kv_indices;
    l.total_kv = l.num_kv_indices * l.page_size;
  } else {
    auto rows_k = first_axis(d, axes, "k", "a ragged layout");
    if (!rows_k) return rows_k.err();
    l.total_kv = kv_count = *rows_k;
  }
  if (kv_count < n)
    return make_error(fmt::format("inputs.{}: {} sequences need at least {} {}, there are {}", kv.spec->name, n, n,
                                  l.paged ? "pages (num_kv_indices)" : "key rows", kv_count));

  // Pinned values first; whatever is not pinned is drawn from the uuid.
  const char* q_unit = "query";
  const char* kv_unit = l.paged ? "page" : "key";
  if (qo && qo->source.values) {
    if (status s = check_indptr(qo->spec->name, *qo->source.values, len_indptr, l.total_q, q_unit); !s) return s.err();
    l.qo_indptr = narrow(*qo->source.values);
  }
  if (kv.source.values) {
    if (status s = check_indptr(kv.spec->name, *kv.source.values, len_indptr, kv_count, kv_unit); !s) return s.err();
    l.kv_indptr = narrow(*kv.source.values);
  }
  if (qo && !qo->source.values && kv.source.values)
    return make_error(fmt::format("inputs.{}: pin qo_indptr's values too when kv_indptr's are pinned (the queries must "
                                  "fit the keys of each sequence)",
                                  kv.spec->name));
  layout_rng rng(layout_seed(w.uuid));
  if (l.decode) {
    std::vector<int32_t> ones(static_cast<std::size_t>(n) + 1);
    std::iota(ones.begin(), ones.end(), 0);
    l.qo_indptr = ones;
    if (l.kv_indptr.empty()) l.kv_indptr = offsets_of(positive_composition(kv_count, n, rng));
  } else {
    if (l.qo_indptr.empty()) l.qo_indptr = offsets_of(positive_composition(l.total_q, n, rng));
    if (l.kv_indptr.empty()) {
      // Each sequence gets at least the keys its queries need (whole pages), the rest spread at random.
      std::vector<int64_t> need;
      int64_t needed = 0;
      for (int64_t b = 0; b < n; ++b) {
        need.push_back((l.q_len(b) + l.page_size - 1) / (l.paged ? l.page_size : 1));
        needed += need.back();
      }
      if (needed > kv_count)
        return make_error(fmt::format("inputs.{}: the queries need at least {} {}s, there are {}", kv.spec->name,
                                      needed, kv_unit, kv_count));
      std::vector<int64_t> extra = nonnegative_composition(kv_count - needed, n, rng);
      for (int64_t b = 0; b < n; ++b) need[b] += extra[b];
      l.kv_indptr = offsets_of(need);
    }
    for (int64_t b = 0; b < n; ++b) {
      if (l.kv_len(b) < l.q_len(b))
        return make_error(fmt::format("inputs.{}: sequence {} has {} queries but only {} keys (bottom-right causal: "
                                      "every query must see a key; lengths inconsistent)",
                                      kv.spec->name, b, l.q_len(b), l.kv_len(b)));
    }
  }

  if (l.paged) {
    if (indices->source.values) {
      const auto& v = *indices->source.values;
      const std::string where = fmt::format("inputs.{}.values", indices->spec->name);
      if (static_cast<int64_t>(v.size()) != l.num_kv_indices)
        return make_error(fmt::format("{}: has {} values, expected num_kv_indices = {}", where, v.size(), l.num_kv_indices));
      for (std::size_t i = 0; i < v.size(); ++i)
        if (v[i] < 0 || v[i] >= l.num_pages)
          return make_error(fmt::format("{}[{}] = {}: page index out of range [0, {})", where, i, v[i], l.num_pages));
      l.pinned_kv_indices = narrow(v);
    } else if (l.num_kv_indices > l.num_pages) {
      return make_error(fmt::format("inputs.{}: {} distinct pages cannot be drawn from a pool of {} (num_kv_indices > "
                                    "num_pages)",
                                    indices->spec->name, l.num_kv_indices, l.num_pages));
    }
  }
  return std::optional<sequence_layout>(std::move(l));
}

std::vector<int32_t> kv_indices_for_trial(const sequence_layout& layout, uint64_t seed) {
  if (layout.pinned_kv_indices) return *layout.pinned_kv_indices;
  // Partial Fisher-Yates: the first num_kv_indices entries of a random permutation of the pool.
  std::vector<int32_t> pool(static_cast<std::size_t>(layout.num_pages));
  std::iota(pool.begin(), pool.end(), 0);
  layout_rng rng(seed ^ 0x5D3A6B1F2C4E8A97ULL);
  for (int64_t i = 0; i < layout.num_kv_indices; ++i) {
    const int64_t j = i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(layout.num_pages - i)));
    std::swap(pool[i], pool[j]);
  }
  pool.resize(static_cast<std::size_t>(layout.num_kv_indices));
  return pool;
}

result<std::vector<int32_t>> index_input_values(const sequence_layout& layout, std::string_view generator,
                                                uint64_t trial_seed) {
  if (generator == k_gen_qo_indptr && !layout.decode) return layout.qo_indptr;
  if ((generator == k_gen_ragged_kv_indptr && !layout.paged) || (generator == k_gen_paged_kv_indptr && layout.paged))
    return layout.kv_indptr;
  if (generator == k_gen_paged_kv_indices && layout.paged) return kv_indices_for_trial(layout, trial_seed);
  return make_error(fmt::format("index generator '{}' does not fit this {} {} layout", generator,
                                layout.paged ? "paged" : "ragged", layout.decode ? "decode" : "prefill"));
}

}  // namespace ptxbench
