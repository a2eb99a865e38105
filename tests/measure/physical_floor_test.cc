// The physical floor (eval/physical_floor.h) and where the timing decision applies it
// (find_below_floor in eval/timing_stats.h), on numbers from the suite and recorded H200 runs.
#include <gtest/gtest.h>

#include <fstream>

#include "core/file_io.h"
#include "core/json_check.h"
#include "verdict/harness_protocol.h"
#include "verdict/verdict_json.h"
#include "measure/physical_floor.h"
#include "measure/timing_stats.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench::measure {
namespace {

constexpr double k_h200_l2_bytes = 50.0 * 1024 * 1024;  // GH100: 50 MiB

floor_inputs inputs_for(const std::string& task_name, const std::string& target) {
  static const suite s = [] {
    auto loaded = load_suite(testing::repo_root() / "suite");
    if (!loaded) throw std::runtime_error(loaded.err().message);
    return std::move(*loaded);
  }();
  return {target, *s.find_task(task_name)->work, *s.find_target(target)->peaks};
}

TEST(PhysicalFloor, GemmOnH200IsComputeBound) {
  // 601,295,421,440 FLOP / 1.0705e15 FLOP/s = 0.5617 ms; bytes: A+B 157,286,400 read, C 117,440,512
  // written of which 117,440,512 − 52,428,800 = 65,011,712 must leave L2 → 222,298,112 B / 4.8e12 B/s
  // = 0.0463 ms. The floor is the larger: 0.5617 ms.
  auto f = physical_floor_for(inputs_for("gemm_n7168_k5120", "h200"), k_h200_l2_bytes);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->compute_ms, 0.56169, 1e-4);
  EXPECT_EQ(f->dram_bytes, 222298112.0);
  EXPECT_NEAR(f->memory_ms, 0.046312, 1e-5);
  EXPECT_EQ(f->floor_ms, f->compute_ms);
  EXPECT_NE(f->basis.find("on h200"), std::string::npos) << f->basis;
  EXPECT_NE(f->basis.find("1070.5 TFLOP/s"), std::string::npos) << f->basis;
}

TEST(PhysicalFloor, DecodeIsMemoryBound) {
  // GQA decode: 118,272,000 FLOP is 0.11 µs of tensor time; 39,554,724 B read / 4.8e12 = 8.24 µs.
  auto f = physical_floor_for(inputs_for("gqa_paged_decode_h24_kv8_d128_ps1", "h200"), k_h200_l2_bytes);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->floor_ms, 39554724.0 / 4.8e12 * 1e3, 1e-9);
  EXPECT_EQ(f->floor_ms, f->memory_ms);
}

TEST(PhysicalFloor, SmallerL2OnlyRaisesTheFloor) {
  auto in = inputs_for("mha_with_lse_d128", "h200");
  in.work.flops = 0;  // look at the memory term alone
  auto with_l2 = physical_floor_for(in, k_h200_l2_bytes);
  auto without = physical_floor_for(in, 0);
  EXPECT_LT(with_l2->floor_ms, without->floor_ms);
  EXPECT_EQ(without->dram_bytes, in.work.bytes());
}

TEST(PhysicalFloor, NoPeaksNoFloor) {
  floor_inputs in{"x", {1e12, 1e9, 1e9}, {}};
  EXPECT_FALSE(physical_floor_for(in, 0).has_value());
}

TEST(PhysicalFloor, EveryRecordedH200ReferenceIsAboveItsFloor) {
  // The floor must never fail an honest kernel: every cuBLASLt and cuDNN call timed on the H200
  // (bench/results/h200, 50 calls per evaluation) is slower than the floor of its task.
  int checked = 0;
  for (const char* file : {"gemm_examples.json", "attention_examples.json", "attention_cudnn_system_examples.json"}) {
    auto text = read_text_file(testing::repo_root() / "bench/results/h200" / file, 64u << 20);
    ASSERT_TRUE(text.ok()) << file;
    auto doc = parse_json(*text, file);
    ASSERT_TRUE(doc.ok());
    for (const auto& v : *doc) {
      if (!v.contains("stages")) continue;
      auto f = physical_floor_for(inputs_for(v["task"].get<std::string>(), "h200"), k_h200_l2_bytes);
      ASSERT_TRUE(f.has_value());
      for (const auto& s : v["stages"]) {
        if (s["stage"] != "timing" || !s["details"].is_object()) continue;
        for (const char* key : {"reference_ms", "candidate_span_ms"})
          for (const auto& ms : s["details"][key]) {
            EXPECT_GT(ms.get<double>(), f->floor_ms) << file << " " << v["task"] << " " << key;
            ++checked;
          }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(PhysicalFloor, InputsRoundTripThroughJson) {
  auto in = inputs_for("mha_bwd_d128", "h200");
  auto back = floor_inputs_from_json(to_json(in));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->work.flops, in.work.flops);
  EXPECT_EQ(back->work.bytes_written, in.work.bytes_written);
  EXPECT_EQ(back->peaks.memory_bytes_per_s, in.peaks.memory_bytes_per_s);
  EXPECT_EQ(back->target, "h200");
  EXPECT_FALSE(floor_inputs_from_json(ordered_json::array()).ok());
}

TEST(PhysicalFloor, TheHarnessJobCarriesItsInputs) {
  harness_job job;
  job.task_name = "gemm_n7168_k5120";
  job.runner = "/bin/ptxbench-runner";
  job.work_dir = "/tmp/w";
  auto plain = harness_job_from_json(ordered_json::parse(to_json(job).dump()));
  ASSERT_FALSE(plain.ok());  // a job needs its definition; only the floor's absence is checked below
  EXPECT_FALSE(to_json(job).contains("physical_floor"));
  job.physical_floor = inputs_for("gemm_n7168_k5120", "h200");
  auto j = to_json(job);
  ASSERT_TRUE(j.contains("physical_floor"));
  auto back = floor_inputs_from_json(j["physical_floor"]);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->work.flops, 601295421440.0);
  EXPECT_EQ(back->peaks.bf16_dense_flops_per_s, 1070.5e12);
}

// --- where the timing decision applies it ---

TEST(FloorInTiming, HonestCallsPass) {
  wallclock_calibration cal{1.4, 0.9};
  // A 0.75 ms GEMM span with a wall clock that agrees; floor 0.5617 ms.
  EXPECT_FALSE(find_below_floor({{0.73, 0.75, 2.2}, {0.73, 0.76, 2.1}}, cal, 0.5617).has_value());
}

TEST(FloorInTiming, DecoySpanFailsEvenWhenTheWallClockSawTheRealWork) {
  // The exploit: CUPTI records off around the real GEMM, on for a 20 µs decoy. The wall
  // clock (2.3 − 1.4 = 0.9 ms) would replace the span, but the span itself is impossible.
  wallclock_calibration cal{1.4, 0.9};
  auto v = find_below_floor({{0.73, 0.75, 2.2}, {0.73, 0.02, 2.3}}, cal, 0.5617);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pair, 1);
  EXPECT_TRUE(v->from_span);
  EXPECT_DOUBLE_EQ(v->span_ms, 0.02);
  EXPECT_NEAR(v->bound_ms, 0.9, 1e-12);
}

TEST(FloorInTiming, CoarseWallClockFailsOnlyBeyondItsAllowance) {
  wallclock_calibration cal{1.4, 0.9};
  // No span (events fallback): bound 1.5 − 1.4 = 0.1 ms, + 0.9 allowance = 1.0 ms ≥ 0.5617: not proof.
  EXPECT_FALSE(find_below_floor({{0.73, 0.0, 1.5}}, cal, 0.5617).has_value());
  // With a tight calibration the same bound is proof: 0.1 + 0.1 < 0.5617.
  auto v = find_below_floor({{0.73, 0.0, 1.5}}, {1.4, 0.1}, 0.5617);
  ASSERT_TRUE(v.has_value());
  EXPECT_FALSE(v->from_span);
}

TEST(FloorInTiming, TheMessageSaysWhatWasImpossible) {
  auto f = physical_floor_for(inputs_for("gemm_n7168_k5120", "h200"), k_h200_l2_bytes);
  floor_violation v{1, 0.02, 0.9, true};
  auto m = floor_violation_message(v, *f, 0.9, 11, 1011);
  EXPECT_EQ(m.rfind("faster than physically possible: timed call 11 (seed 1011) reported a GPU span of 0.0200 ms", 0), 0u)
      << m;
  EXPECT_NE(m.find("work was hidden from the measurement"), std::string::npos) << m;
  EXPECT_NE(m.find("below the physical floor of 0.5617 ms = max(6.013e+11 FLOP / 1070.5 TFLOP/s"), std::string::npos) << m;
}

TEST(FloorInTiming, ZeroFloorDisablesTheCheck) {
  EXPECT_FALSE(find_below_floor({{0.73, 0.001, 0.0}}, {0, 0.1}, 0).has_value());
}

TEST(FloorInTiming, TheTimingSummaryCarriesTheFloor) {
  // The harness records the floor every timed call was above in the timing summary it returns.
  timing_summary ts;
  EXPECT_TRUE(to_json(ts)["physical_floor"].is_null());
  EXPECT_FALSE(timing_from_json(to_json(ts)).floor.has_value());
  ts.floor = physical_floor_for(inputs_for("gemm_n7168_k5120", "h200"), k_h200_l2_bytes);
  auto back = timing_from_json(ordered_json::parse(to_json(ts).dump()));
  ASSERT_TRUE(back.floor.has_value());
  EXPECT_EQ(back.floor->floor_ms, ts.floor->floor_ms);
  EXPECT_EQ(back.floor->dram_bytes, 222298112.0);
  EXPECT_EQ(back.floor->basis, ts.floor->basis);
}

}  // namespace
}  // namespace ptxbench::measure
