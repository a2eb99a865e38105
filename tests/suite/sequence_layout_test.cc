// The index inputs of the GQA tasks (qo_indptr, kv_indptr, kv_indices): the suite's layouts satisfy
// every invariant on the stated axes, the generators' draws are valid and reproducible, and a
// workload that breaks a rule fails the suite's load with one clear line.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/file_io.h"
#include "suite/sequence_layout.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench {
namespace {

constexpr const char* k_decode = "gqa_paged_decode_h24_kv8_d128_ps1";
constexpr const char* k_paged_prefill = "gqa_paged_prefill_causal_h24_kv8_d128_ps1";
constexpr const char* k_ragged = "gqa_ragged_prefill_causal_h32_kv4_d128";

const suite& repo_suite() {
  static const suite s = [] {
    auto loaded = load_suite(testing::repo_root() / "suite");
    if (!loaded) throw std::runtime_error(loaded.err().message);
    return *loaded;
  }();
  return s;
}

sequence_layout layout_of(const task& t) {
  auto l = sequence_layout_for(t.def, t.wl);
  if (!l || !*l) throw std::runtime_error(t.name + ": no layout");
  return **l;
}

// Start at 0, increase strictly, end at `total`, `n + 1` entries.
void expect_valid_indptr(const std::vector<int32_t>& v, int64_t n, int64_t total, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(v.size()), n + 1) << what;
  EXPECT_EQ(v.front(), 0) << what;
  EXPECT_EQ(v.back(), total) << what;
  for (std::size_t i = 1; i < v.size(); ++i) EXPECT_GT(v[i], v[i - 1]) << what << " at " << i;
}

TEST(SequenceLayout, SuiteGqaLayoutsFitTheirAxes) {
  for (const char* name : {k_decode, k_paged_prefill, k_ragged}) {
    const task& t = *repo_suite().find_task(name);
    const sequence_layout l = layout_of(t);
    const auto axes = resolve_axes(t.wl, t.def);
    const int64_t n = axes.at("len_indptr") - 1;
    EXPECT_EQ(l.sequences(), n) << name;
    expect_valid_indptr(l.qo_indptr, n, l.total_q, std::string(name) + " qo_indptr");
    expect_valid_indptr(l.kv_indptr, n, l.paged ? axes.at("num_kv_indices") : axes.at("total_kv"),
                        std::string(name) + " kv_indptr");
    for (int64_t b = 0; b < n; ++b) {
      EXPECT_GE(l.kv_len(b), l.q_len(b)) << name << " sequence " << b;
      EXPECT_GE(l.q_len(b), 1);
    }
  }
}

TEST(SequenceLayout, DecodeHasOneQueryPerSequenceOnTheWorkloadsAxes) {
  const sequence_layout l = layout_of(*repo_suite().find_task(k_decode));
  EXPECT_TRUE(l.paged);
  EXPECT_TRUE(l.decode);
  EXPECT_EQ(l.sequences(), 15);
  EXPECT_EQ(l.num_pages, 42784);
  EXPECT_EQ(l.num_kv_indices, 9625);
  EXPECT_EQ(l.page_size, 1);
  EXPECT_EQ(l.max_q_len(), 1);
  EXPECT_EQ(l.kv_indptr.back(), 9625);
  EXPECT_EQ(l.max_kv_len(), 3229);  // sequence 12: 9109 - 5880
}

TEST(SequenceLayout, PagedPrefillIsOneSequenceOfAllItsQueries) {
  const sequence_layout l = layout_of(*repo_suite().find_task(k_paged_prefill));
  EXPECT_FALSE(l.decode);
  EXPECT_EQ(l.qo_indptr, (std::vector<int32_t>{0, 892}));
  EXPECT_EQ(l.kv_indptr, (std::vector<int32_t>{0, 892}));
  EXPECT_EQ(l.num_pages, 43676);
}

TEST(SequenceLayout, RaggedPrefillHas33SequencesWithKeysEqualToQueries) {
  const sequence_layout l = layout_of(*repo_suite().find_task(k_ragged));
  EXPECT_FALSE(l.paged);
  EXPECT_EQ(l.sequences(), 33);
  EXPECT_EQ(l.total_q, 16294);
  EXPECT_EQ(l.qo_indptr, l.kv_indptr);  // total_q == total_kv leaves no room for extra keys
  EXPECT_EQ(l.max_q_len(), 2026);       // 8446 - 6420
}

// The pinned values are what the generator draws from the uuid: anyone can regenerate them.
TEST(SequenceLayout, PinnedSuiteValuesAreTheUuidDraws) {
  for (const char* name : {k_decode, k_paged_prefill, k_ragged}) {
    const task& t = *repo_suite().find_task(name);
    workload unpinned = t.wl;
    for (auto& [input, spec] : unpinned.inputs) spec.values.reset();
    auto drawn = sequence_layout_for(t.def, unpinned);
    ASSERT_TRUE(drawn && *drawn) << name;
    const sequence_layout pinned = layout_of(t);
    EXPECT_EQ((*drawn)->qo_indptr, pinned.qo_indptr) << name;
    EXPECT_EQ((*drawn)->kv_indptr, pinned.kv_indptr) << name;
  }
}

TEST(SequenceLayout, DrawsAreValidForManySeeds) {
  const task& t = *repo_suite().find_task(k_ragged);
  for (int i = 0; i < 50; ++i) {
    workload w = t.wl;
    w.uuid = "seed-" + std::to_string(i);
    for (auto& [input, spec] : w.inputs) spec.values.reset();
    auto l = sequence_layout_for(t.def, w);
    ASSERT_TRUE(l && *l) << (l ? "" : l.err().message);
    expect_valid_indptr((*l)->qo_indptr, 33, 16294, "qo");
    EXPECT_EQ((*l)->kv_indptr, (*l)->qo_indptr);
  }
}

TEST(SequenceLayout, ExtraKeysAreSpreadWhenKeysOutnumberQueries) {
  const task& t = *repo_suite().find_task(k_ragged);
  workload w = t.wl;
  for (auto& [name, value] : w.axes)
    if (name == "total_kv") value = 20000;
  for (auto& [input, spec] : w.inputs) spec.values.reset();
  auto l = sequence_layout_for(t.def, w);
  ASSERT_TRUE(l && *l) << (l ? "" : l.err().message);
  expect_valid_indptr((*l)->kv_indptr, 33, 20000, "kv");
  int64_t with_extra = 0;
  for (int64_t b = 0; b < 33; ++b) {
    EXPECT_GE((*l)->kv_len(b), (*l)->q_len(b));
    with_extra += (*l)->kv_len(b) > (*l)->q_len(b);
  }
  EXPECT_GT(with_extra, 10);
}

TEST(SequenceLayout, KvIndicesAreDistinctPagesInRangeAndSeeded) {
  const sequence_layout l = layout_of(*repo_suite().find_task(k_decode));
  const auto a = kv_indices_for_trial(l, 7);
  ASSERT_EQ(a.size(), 9625u);
  EXPECT_EQ(std::set<int32_t>(a.begin(), a.end()).size(), a.size());
  EXPECT_GE(*std::min_element(a.begin(), a.end()), 0);
  EXPECT_LT(*std::max_element(a.begin(), a.end()), 42784);
  EXPECT_EQ(kv_indices_for_trial(l, 7), a);
  EXPECT_NE(kv_indices_for_trial(l, 8), a);
  EXPECT_FALSE(std::is_sorted(a.begin(), a.end()));  // pages are scattered, not a contiguous run
}

TEST(SequenceLayout, IndexInputValuesByGenerator) {
  const sequence_layout decode = layout_of(*repo_suite().find_task(k_decode));
  EXPECT_EQ(*index_input_values(decode, k_gen_paged_kv_indptr, 1), decode.kv_indptr);
  EXPECT_EQ(index_input_values(decode, k_gen_paged_kv_indices, 1)->size(), 9625u);
  EXPECT_FALSE(index_input_values(decode, k_gen_qo_indptr, 1).ok());
  const sequence_layout ragged = layout_of(*repo_suite().find_task(k_ragged));
  EXPECT_FALSE(index_input_values(ragged, k_gen_paged_kv_indices, 1).ok());
  EXPECT_EQ(*index_input_values(ragged, k_gen_qo_indptr, 1), ragged.qo_indptr);
}

TEST(SequenceLayout, WorkloadValuesRoundTrip) {
  const task& t = *repo_suite().find_task(k_ragged);
  auto back = workload_from_json(to_json(t.wl));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->input("qo_indptr").values, t.wl.input("qo_indptr").values);
  EXPECT_TRUE(back->input("qo_indptr").values.has_value());
}

// A copy of the suite with one workload input edited; returns the load error ("" if it loaded).
std::string load_with_edit(const std::string& task_name, const std::string& sub,
                           const std::function<void(ordered_json& workload)>& edit) {
  auto dir = testing::make_temp_dir("layout");
  std::filesystem::copy(testing::repo_root() / "suite", dir / "suite", std::filesystem::copy_options::recursive);
  const auto file = dir / "suite/workloads" / sub / (task_name + ".jsonl");
  auto text = read_file(file, 1 << 20);
  auto line = ordered_json::parse(*text);
  edit(line["workload"]);
  EXPECT_TRUE(write_file_atomic(file, line.dump() + "\n").ok());
  auto s = load_suite(dir / "suite");
  std::filesystem::remove_all(dir);
  return s ? "" : s.err().message;
}

void expect_one_line_error(const std::string& message, const std::string& needle) {
  EXPECT_NE(message.find(needle), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find(".jsonl: workload"), std::string::npos) << message;
}

TEST(SequenceLayoutErrors, IndptrNotMonotoneIsRejectedAtLoad) {
  auto m = load_with_edit(k_ragged, "gqa_ragged", [](ordered_json& w) {
    auto& v = w["inputs"]["qo_indptr"]["values"];
    std::swap(v[3], v[4]);
  });
  expect_one_line_error(m, "inputs.qo_indptr.values[4] = 2104 after 2171");
  expect_one_line_error(m, "must increase strictly");
}

TEST(SequenceLayoutErrors, IndptrNotStartingAtZeroOrNotEndingAtTheTotal) {
  auto start = load_with_edit(k_decode, "gqa_paged", [](ordered_json& w) { w["inputs"]["kv_indptr"]["values"][0] = 1; });
  expect_one_line_error(start, "starts at 0");
  auto end = load_with_edit(k_decode, "gqa_paged", [](ordered_json& w) { w["inputs"]["kv_indptr"]["values"][15] = 9624; });
  expect_one_line_error(end, "must equal the page count 9625");
  auto size = load_with_edit(k_decode, "gqa_paged", [](ordered_json& w) { w["inputs"]["kv_indptr"]["values"].erase(3); });
  expect_one_line_error(size, "expected len_indptr = 16");
}

TEST(SequenceLayoutErrors, PageIndexOutOfRangeIsRejected) {
  auto m = load_with_edit(k_paged_prefill, "gqa_paged", [](ordered_json& w) {
    ordered_json values = ordered_json::array();
    for (int i = 0; i < 892; ++i) values.push_back(i);
    values[100] = 43676;  // one past the pool
    w["inputs"]["kv_indices"]["values"] = values;
  });
  expect_one_line_error(m, "inputs.kv_indices.values[100] = 43676: page index out of range [0, 43676)");
  auto negative = load_with_edit(k_paged_prefill, "gqa_paged", [](ordered_json& w) {
    ordered_json values = ordered_json::array();
    for (int i = 0; i < 892; ++i) values.push_back(i == 5 ? -1 : i);
    w["inputs"]["kv_indices"]["values"] = values;
  });
  expect_one_line_error(negative, "page index out of range");
}

TEST(SequenceLayoutErrors, FewerKeysThanQueriesIsInconsistent) {
  auto m = load_with_edit(k_ragged, "gqa_ragged", [](ordered_json& w) {
    auto& kv = w["inputs"]["kv_indptr"]["values"];
    kv[1] = kv[1].get<int>() - 1;  // sequence 0 loses a key, sequence 1 gains one
  });
  expect_one_line_error(m, "sequence 0 has 963 queries but only 962 keys");
}

TEST(SequenceLayoutErrors, DecodeNeedsLenIndptrOfBatchPlusOne) {
  auto m = load_with_edit(k_decode, "gqa_paged", [](ordered_json& w) {
    w["axes"]["batch_size"] = 14;
  });
  expect_one_line_error(m, "len_indptr must be batch_size + 1");
}

TEST(SequenceLayoutErrors, MorePagesThanThePoolCannotBeDrawn) {
  auto m = load_with_edit(k_paged_prefill, "gqa_paged", [](ordered_json& w) { w["axes"]["num_pages"] = 500; });
  expect_one_line_error(m, "892 distinct pages cannot be drawn from a pool of 500");
}

TEST(SequenceLayoutErrors, RandomIndexInputAndUnknownGenerator) {
  auto random = load_with_edit(k_decode, "gqa_paged", [](ordered_json& w) {
    w["inputs"]["kv_indices"] = {{"type", "random"}};
  });
  expect_one_line_error(random, "an index input cannot be random");
  auto unknown = load_with_edit(k_decode, "gqa_paged", [](ordered_json& w) {
    w["inputs"]["kv_indices"]["generator"] = "paged_kv.pages";
  });
  expect_one_line_error(unknown, "unknown index generator 'paged_kv.pages'");
  auto bad_value = load_with_edit(k_decode, "gqa_paged", [](ordered_json& w) {
    w["inputs"]["kv_indptr"]["values"][2] = "x";
  });
  EXPECT_NE(bad_value.find("values[2]: expected integer"), std::string::npos) << bad_value;
}

}  // namespace
}  // namespace ptxbench
