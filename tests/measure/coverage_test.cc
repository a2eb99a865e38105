// Work coverage (eval/coverage.h): from Nsight Compute's pages to the share of the task's work each
// required family did, on the real H200 probe fixture and on synthetic pages with known counts.
#include <gtest/gtest.h>

#include "core/file_io.h"
#include "measure/coverage.h"
#include "test_support.h"
#include "verdict/harness_protocol.h"
#include "verdict/verdict_json.h"

namespace ptxbench::measure {
namespace {

const suite& the_suite() {
  static const suite s = [] {
    auto loaded = load_suite(testing::repo_root() / "suite");
    if (!loaded) throw std::runtime_error(loaded.err().message);
    return std::move(*loaded);
  }();
  return s;
}

std::string fixture(const std::string& name) {
  auto text = read_text_file(testing::fixtures_dir() / "ncu" / name, 1u << 20);
  if (!text) throw std::runtime_error(text.err().message);
  return *text;
}

const task& gemm() { return *the_suite().find_task("gemm_n7168_k5120"); }
const std::vector<std::string> k_hopper = {"GMMA", "TMA"};

TEST(CoverageEvidence, RealProbeSourcePage) {
  // probe_source_page.csv (H200): wgmma_probe runs one HGMMA.64x8x16 in one warpgroup (4 warp
  // executions, 128 predicate-on threads); wgmma_dead's HGMMA shows 0/0 and is left out;
  // bulk_copy_probe runs UBLKCP once; tma_tensor_probe runs UTMALDG.2D once. Duplicated blocks
  // are dropped by the parser.
  auto ev = evidence_from_ncu_output(fixture("probe_source_page.csv"), "", fixture("probe_per_opcode_details.csv"));
  EXPECT_EQ(ev.instructions_missing, "");
  EXPECT_EQ(ev.counters_missing, "ncu reported none of the TMA byte counters");
  ASSERT_EQ(ev.instructions.size(), 3u);
  std::map<std::string, executed_instruction> by_family;
  for (const auto& i : ev.instructions) by_family[i.family] = i;
  EXPECT_EQ(by_family["GMMA"].kernel, "wgmma_probe(float *)");
  EXPECT_EQ(by_family["GMMA"].mnemonic, "HGMMA.64x8x16.F32.BF16");
  EXPECT_EQ(by_family["GMMA"].inst_executed, 4);
  EXPECT_EQ(by_family["GMMA"].thread_pred_on, 128);
  EXPECT_EQ(by_family["UBLKCP"].mnemonic, "UBLKCP.S.G");
  EXPECT_EQ(by_family["TMA"].mnemonic, "UTMALDG.2D");
  EXPECT_EQ(by_family["TMA"].thread_pred_on, 1);

  // Against a pretend task of exactly one m64n8k16 tile (2·64·8·16 = 16,384 FLOP): 100 %.
  auto c = compute_coverage({"GMMA"}, task_work{16384, 4096, 0}, ev);
  ASSERT_TRUE(c["GMMA"].fraction.has_value());
  EXPECT_DOUBLE_EQ(*c["GMMA"].fraction, 1.0);
  EXPECT_EQ(c["GMMA"].done, 16384.0);
}

TEST(Coverage, WgmmaGemmCoversTheWholeTask) {
  // synthetic_gemm_source_page.csv: four HGMMA.64x128x16 rows of 73,400,320 predicate-on threads
  // = 293,601,280 / 128 = 2,293,760 warpgroup executions × 262,144 FLOP = 601,295,421,440 FLOP,
  // the GEMM's 2·M·N·K exactly (the H200 run of examples/gemm/wgmma.cu counted 293,601,280).
  auto ev = evidence_from_ncu_output(fixture("synthetic_gemm_source_page.csv"), "", "");
  auto c = compute_coverage(k_hopper, gemm().work, ev);
  ASSERT_TRUE(c["GMMA"].fraction.has_value()) << c["GMMA"].reason;
  EXPECT_DOUBLE_EQ(*c["GMMA"].fraction, 1.0);
  EXPECT_EQ(c["GMMA"].done, 601295421440.0);
  EXPECT_EQ(c["GMMA"].unit, "flop");
  EXPECT_NE(c["GMMA"].reason.find("2.29376e+06 warpgroup executions of HGMMA.64x128x16.F32.BF16"), std::string::npos)
      << c["GMMA"].reason;
  EXPECT_NE(c["GMMA"].reason.find("(100.0%)"), std::string::npos) << c["GMMA"].reason;
  // No TMA instruction ran: TMA coverage is a known 0.
  ASSERT_TRUE(c["TMA"].fraction.has_value());
  EXPECT_EQ(*c["TMA"].fraction, 0.0);
}

TEST(Coverage, TokenWgmmaIsNearZero) {
  // An FMA GEMM plus a side kernel with one executed HGMMA.64x8x16 (16,384 FLOP) and one under a
  // false predicate (0 threads): 16,384 / 601,295,421,440 = 2.7e-8.
  auto ev = evidence_from_ncu_output(fixture("synthetic_token_wgmma_source_page.csv"), "", "");
  auto c = compute_coverage(k_hopper, gemm().work, ev);
  ASSERT_TRUE(c["GMMA"].fraction.has_value());
  EXPECT_EQ(c["GMMA"].done, 16384.0);
  EXPECT_NEAR(*c["GMMA"].fraction, 16384.0 / 601295421440.0, 1e-15);
  EXPECT_LT(*c["GMMA"].fraction, 1e-6);
}

coverage_evidence tma_evidence(double ld_bytes, bool also_bulk_copy) {
  coverage_evidence ev;
  ev.instructions.push_back({"k", "UTMALDG.2D", "TMA", 8960, 286720});
  ev.instructions.push_back({"k", "HGMMA.64x256x16.F32.BF16", "GMMA", 4587520, 146800640});
  if (also_bulk_copy) ev.instructions.push_back({"k", "UBLKCP.S.G", "UBLKCP", 1, 1});
  for (const auto& m : tma_byte_metrics()) ev.counters["k"][m] = 0;
  ev.counters["k"][tma_byte_metrics()[0]] = ld_bytes;
  return ev;
}

TEST(Coverage, TmaBytesOverTheTasksMinimum) {
  // wgmma_tma_pipelined.cu's pattern: 1,792 blocks × 80 k-steps × (16 KiB of A + 32 KiB of B) =
  // 7,046,430,720 bytes loaded, against the GEMM's minimum 274,726,912: 25.6× (tiles are re-read
  // through L2). GMMA: 146,800,640 / 128 × 2·64·256·16 = 601,295,421,440 → 100 %.
  auto c = compute_coverage(k_hopper, gemm().work, tma_evidence(7046430720.0, false));
  ASSERT_TRUE(c["TMA"].fraction.has_value()) << c["TMA"].reason;
  EXPECT_NEAR(*c["TMA"].fraction, 7046430720.0 / 274726912.0, 1e-9);
  EXPECT_EQ(c["TMA"].unit, "byte");
  EXPECT_DOUBLE_EQ(*c["GMMA"].fraction, 1.0);
  // A token TMA load of one 128x64 bf16 tile: 16 KiB of 274,726,912 = 0.006 %.
  auto token = compute_coverage(k_hopper, gemm().work, tma_evidence(16384, false));
  EXPECT_LT(*token["TMA"].fraction, 1e-4);
}

TEST(Coverage, GmmaIsScaledToThePerOpcodeTotal) {
  // The source page drops an immediate identical repeat of a kernel's block, so a second launch
  // with identical counts can vanish from it; the per-opcode metric (per launch ID) still has it.
  auto ev = evidence_from_ncu_output(fixture("synthetic_gemm_source_page.csv"), "", "");
  auto halves = compute_coverage(k_hopper, gemm().work, ev, family_counts{{"GMMA", 2 * 293601280LL}});
  EXPECT_DOUBLE_EQ(*halves["GMMA"].fraction, 2.0);
  EXPECT_NE(halves["GMMA"].reason.find("scaled by 2 to the per-opcode count"), std::string::npos)
      << halves["GMMA"].reason;
  auto same = compute_coverage(k_hopper, gemm().work, ev, family_counts{{"GMMA", 293601280LL}});
  EXPECT_DOUBLE_EQ(*same["GMMA"].fraction, 1.0);
  EXPECT_EQ(same["GMMA"].reason.find("scaled"), std::string::npos);
  auto none_on_page = compute_coverage(k_hopper, gemm().work, coverage_evidence{}, family_counts{{"GMMA", 128}});
  EXPECT_FALSE(none_on_page["GMMA"].fraction.has_value());
}

TEST(Coverage, TmaIsUnknownWhenBulkCopiesShareTheCounters) {
  auto c = compute_coverage(k_hopper, gemm().work, tma_evidence(7046430720.0, true));
  EXPECT_FALSE(c["TMA"].fraction.has_value());
  EXPECT_NE(c["TMA"].reason.find("non-tensor bulk copies"), std::string::npos) << c["TMA"].reason;
  EXPECT_TRUE(c["GMMA"].fraction.has_value());  // GMMA does not depend on the counters
}

TEST(Coverage, MissingDataIsUnknownWithTheReason) {
  coverage_evidence ev = tma_evidence(1, false);
  ev.counters.clear();
  ev.counters_missing = "ncu rejected a coverage metric: ==ERROR== Failed to find metric x";
  auto c = compute_coverage(k_hopper, gemm().work, ev);
  EXPECT_FALSE(c["TMA"].fraction.has_value());
  EXPECT_NE(c["TMA"].reason.find("Failed to find metric"), std::string::npos);
  auto none = compute_coverage(k_hopper, gemm().work,
                               evidence_from_ncu(std::nullopt, std::nullopt, "ncu --page source: exited with code 1", "x"));
  EXPECT_FALSE(none["GMMA"].fraction.has_value());
  EXPECT_NE(none["GMMA"].reason.find("exited with code 1"), std::string::npos);
  auto no_work = compute_coverage(k_hopper, std::nullopt, ev);
  EXPECT_FALSE(no_work["GMMA"].fraction.has_value());
  auto blackwell = compute_coverage({"TCGEN05"}, gemm().work, ev);
  EXPECT_FALSE(blackwell["TCGEN05"].fraction.has_value());
  EXPECT_NE(blackwell["TCGEN05"].reason.find("instruction descriptor"), std::string::npos);
}

TEST(Coverage, EvidenceRoundTripsThroughJson) {
  auto ev = tma_evidence(123, true);
  ev.instructions_missing = "";
  ev.counters_missing = "";
  auto back = coverage_evidence_from_json(to_json(ev));
  ASSERT_TRUE(back.ok()) << back.err().message;
  ASSERT_EQ(back->instructions.size(), 3u);
  EXPECT_EQ(back->instructions[2].family, "UBLKCP");
  EXPECT_EQ(back->counters["k"][tma_byte_metrics()[0]], 123.0);
  EXPECT_FALSE(coverage_evidence_from_json(ordered_json::parse(R"({"instructions": [{"kernel": 1}]})")).ok());
  EXPECT_FALSE(coverage_evidence_from_json(ordered_json::parse(R"({"counters": {"k": {"m": "x"}}})")).ok());
}

verdict passed_verdict(const coverage_evidence& ev) {
  verdict v;
  v.mode = eval_mode::eval;
  v.task = "gemm_n7168_k5120";
  v.target = "h200";
  v.decided = {eval_outcome::passed, std::nullopt, "passed", ""};
  v.targets.target = "h200";
  v.targets.required_families = k_hopper;
  v.targets.verdict = target_verdict::executed;
  v.targets.reason = "executed on the workload: GMMA (128 predicate-on thread instructions)";
  int64_t gmma = 0;  // the per-opcode count agrees with the source page
  for (const auto& i : ev.instructions)
    if (i.family == "GMMA") gmma += i.thread_pred_on;
  v.targets.dynamic.counts = family_counts{{"GMMA", gmma}, {"TMA", 0}};
  v.targets.dynamic.method = "ncu";
  v.targets.dynamic.ran = true;
  v.targets.dynamic.evidence = ev;
  v.stages.push_back({stage_id::dynamic_check, stage_outcome::passed, 1.0, "1 kernel launch(es) profiled"});
  return v;
}

TEST(ApplyCoverage, MinCoverageMakesTheTokenCandidateNotTargetCorrect) {
  const auto* h200 = the_suite().find_target("h200");
  auto token = passed_verdict(evidence_from_ncu_output(fixture("synthetic_token_wgmma_source_page.csv"), "", ""));
  apply_coverage(token, gemm(), *h200, std::nullopt);
  EXPECT_TRUE(token.target_correct());  // the paper's rule: GMMA executed
  EXPECT_LT(*token.targets.coverage["GMMA"].fraction, 1e-6);
  apply_coverage(token, gemm(), *h200, 0.9);
  EXPECT_FALSE(token.target_correct());
  EXPECT_NE(token.targets.reason.find("no required family did 90.0% of the task's work"), std::string::npos)
      << token.targets.reason;

  auto honest = passed_verdict(evidence_from_ncu_output(fixture("synthetic_gemm_source_page.csv"), "", ""));
  apply_coverage(honest, gemm(), *h200, 0.9);
  EXPECT_TRUE(honest.target_correct());
  EXPECT_EQ(*honest.targets.min_coverage, 0.9);
}

TEST(ApplyCoverage, WithoutEvidence) {
  const auto* h200 = the_suite().find_target("h200");
  verdict absent;
  absent.targets.required_families = k_hopper;
  absent.targets.verdict = target_verdict::absent_in_sass;
  apply_coverage(absent, gemm(), *h200, std::nullopt);
  EXPECT_EQ(*absent.targets.coverage["GMMA"].fraction, 0.0);
  EXPECT_EQ(absent.targets.coverage["TMA"].unit, "byte");

  verdict deferred;  // `ptxbench check`: present in SASS, nothing ran
  deferred.targets.required_families = k_hopper;
  deferred.targets.static_counts = family_counts{{"GMMA", 4}};
  deferred.targets.verdict = target_verdict::deferred;
  deferred.targets.reason = "the runtime check was not run";
  apply_coverage(deferred, gemm(), *h200, std::nullopt);
  EXPECT_FALSE(deferred.targets.coverage["GMMA"].fraction.has_value());
  EXPECT_EQ(deferred.targets.coverage["GMMA"].reason, "not established: the runtime check was not run");

  auto no_evidence = passed_verdict({});
  no_evidence.targets.dynamic.evidence.reset();
  no_evidence.targets.dynamic.counts = family_counts{{"GMMA", 128}, {"TMA", 0}};
  apply_coverage(no_evidence, gemm(), *h200, 0.5);
  EXPECT_FALSE(no_evidence.targets.coverage["GMMA"].fraction.has_value());
  EXPECT_NE(no_evidence.targets.coverage["GMMA"].reason.find("recorded no coverage evidence"), std::string::npos)
      << no_evidence.targets.coverage["GMMA"].reason;
  EXPECT_EQ(no_evidence.targets.coverage["TMA"].fraction, std::optional<double>(0.0));  // TMA never ran
  EXPECT_FALSE(no_evidence.target_correct());  // unknown coverage never meets a minimum

  verdict blackwell;
  blackwell.targets.required_families = {"TCGEN05"};
  blackwell.targets.verdict = target_verdict::deferred;
  apply_coverage(blackwell, gemm(), *the_suite().find_target("b200"), std::nullopt);
  EXPECT_NE(blackwell.targets.coverage["TCGEN05"].reason.find("no b200 GPU here"), std::string::npos);
}

TEST(ApplyCoverage, VerdictJsonKeepsCoverage) {
  auto v = passed_verdict(evidence_from_ncu_output(fixture("synthetic_token_wgmma_source_page.csv"), "", ""));
  apply_coverage(v, gemm(), *the_suite().find_target("h200"), 0.5);
  auto j = to_json(v);
  EXPECT_EQ(j["target_correct"], false);
  EXPECT_EQ(j["target_instructions"]["min_coverage"], 0.5);
  EXPECT_EQ(j["target_instructions"]["coverage"]["GMMA"]["done"], 16384.0);
  auto back = verdict_from_json(j);
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(*back->targets.min_coverage, 0.5);
  EXPECT_EQ(back->targets.coverage["GMMA"].done, 16384.0);
  EXPECT_FALSE(back->target_correct());
  EXPECT_EQ(back->targets.coverage["TMA"].fraction, std::optional<double>(0.0));
}

TEST(ApplyCoverage, EvidenceTravelsInTheHarnessResultsRuntimeCounts) {
  // The harness puts the evidence in the runtime counts of its result; merge_into hands it to the
  // verdict, where apply_coverage finds it.
  gpu_stage_result r;
  r.id = "c0";
  r.decided = {eval_outcome::passed, std::nullopt, "passed", ""};
  r.dynamic.counts = family_counts{{"GMMA", 128}, {"TMA", 0}};  // one HGMMA.64x8x16 in one warpgroup
  r.dynamic.method = "ncu";
  r.dynamic.ran = true;
  r.dynamic.evidence = evidence_from_ncu_output(fixture("synthetic_token_wgmma_source_page.csv"), "", "");
  auto back = gpu_stage_result_from_json(ordered_json::parse(to_json(r).dump()));
  ASSERT_TRUE(back.ok()) << back.err().message;
  ASSERT_TRUE(back->dynamic.evidence.has_value());
  EXPECT_EQ(back->dynamic.evidence->instructions.size(), r.dynamic.evidence->instructions.size());
  verdict v;
  v.targets.required_families = k_hopper;
  merge_into(*back, v);
  v.targets.verdict = target_verdict::executed;
  apply_coverage(v, gemm(), *the_suite().find_target("h200"), std::nullopt);
  ASSERT_TRUE(v.targets.coverage["GMMA"].fraction.has_value()) << v.targets.coverage["GMMA"].reason;
  EXPECT_EQ(v.targets.coverage["GMMA"].done, 16384.0);
}

TEST(ApplyCoverage, MalformedEvidenceReadsAsUnknownWithTheReason) {
  ordered_json j = ordered_json::object();
  write_runtime_counts(runtime_counts{}, j);
  EXPECT_TRUE(j["dynamic_coverage_evidence"].is_null());
  EXPECT_FALSE(read_runtime_counts(j).evidence.has_value());
  j["dynamic_coverage_evidence"] = ordered_json::parse(R"({"instructions": [{"kernel": 1}]})");
  auto r = read_runtime_counts(j);
  ASSERT_TRUE(r.evidence.has_value());
  EXPECT_TRUE(r.evidence->instructions.empty());
  EXPECT_NE(r.evidence->instructions_missing.find("kernel"), std::string::npos) << r.evidence->instructions_missing;
  auto c = compute_coverage(k_hopper, gemm().work, *r.evidence);
  EXPECT_FALSE(c["GMMA"].fraction.has_value());
}

}  // namespace
}  // namespace ptxbench::measure
