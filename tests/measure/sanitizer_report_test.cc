#include <gtest/gtest.h>

#include <array>

#include "measure/sanitizer_report.h"
#include "sass/fixture_text.h"

namespace ptxbench::measure {
namespace {

using testing::fixture_text;
using triple = std::array<int, 3>;

// Without --padding the overflow lands in the next allocation and memcheck sees nothing; the parser
// reports what the tool said: clean.
TEST(SanitizerReport, AdjacentOverflowWithoutPaddingIsCleanBecauseTheToolSawNothing) {
  auto r = parse_sanitizer_output(fixture_text("sanitizer/memcheck_adjacent_overflow_no_padding.txt"));
  EXPECT_EQ(r.state, sanitizer_state::clean);
  EXPECT_TRUE(r.clean());
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.error_summary, 0);
  EXPECT_EQ(r.note, "");
  EXPECT_EQ(r.first_fault_text(), "");
}

TEST(SanitizerReport, MemcheckWithPaddingReportsEveryWrite) {
  auto r = parse_sanitizer_output(fixture_text("sanitizer/memcheck_adjacent_overflow_padding1024.txt"));
  EXPECT_EQ(r.state, sanitizer_state::findings);
  ASSERT_EQ(r.findings.size(), 9u);  // the fixture is cut at 4 KiB, inside the ninth block
  for (int i = 0; i < 9; ++i) {
    const auto& f = r.findings[i];
    EXPECT_EQ(f.category, finding_category::memory_access);
    EXPECT_EQ(f.kind, "Invalid __global__ write of size 4 bytes");
    EXPECT_EQ(f.kernel, "oob_write(float *, int)");
    EXPECT_EQ(f.pc_offset, "0xb0");
    EXPECT_EQ(f.source_file, "faults.cu");
    EXPECT_EQ(f.source_line, 5);
    EXPECT_EQ(f.thread, (triple{i, 0, 0}));
    EXPECT_EQ(f.block, (triple{0, 0, 0}));
  }
  EXPECT_EQ(r.findings[0].address, "0x7f1c70800400");
  EXPECT_EQ(r.findings[0].allocation, "1 bytes after the nearest allocation at 0x7f1c70800000 of size 1,024 bytes");
  EXPECT_EQ(r.findings[8].address, "0x7f1c70800420");
  EXPECT_EQ(r.findings[8].allocation, "33 bytes after the nearest allocation at 0x7f1c70800000 of size 1,024 bytes");
  EXPECT_FALSE(r.error_summary.has_value());
  EXPECT_EQ(r.note, "no ERROR SUMMARY or RACECHECK SUMMARY line (output cut short?)");
  EXPECT_EQ(r.first_fault_text(),
            "========= Invalid __global__ write of size 4 bytes\n"
            "=========     at oob_write(float *, int)+0xb0 in faults.cu:5\n"
            "=========     by thread (0,0,0) in block (0,0,0)\n"
            "=========     Access to 0x7f1c70800400 is out of bounds\n"
            "=========     and is 1 bytes after the nearest allocation at 0x7f1c70800000 of size 1,024 bytes\n");
}

TEST(SanitizerReport, RacecheckHazard) {
  auto r = parse_sanitizer_output(fixture_text("sanitizer/racecheck_smem_race.txt"));
  EXPECT_EQ(r.state, sanitizer_state::findings);
  ASSERT_EQ(r.findings.size(), 1u);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.category, finding_category::race);
  EXPECT_EQ(f.kind, "Race reported between Write access at smem_race(int *)+0xa0 in faults.cu:8");
  EXPECT_EQ(f.kernel, "smem_race(int *)");
  EXPECT_EQ(f.pc_offset, "0xa0");
  EXPECT_EQ(f.source_file, "faults.cu");
  EXPECT_EQ(f.source_line, 8);
  EXPECT_EQ(f.hazards, 192 + 384);
  EXPECT_EQ(f.lines.size(), 3u);
  EXPECT_EQ(r.racecheck_errors, 1);
  EXPECT_EQ(r.racecheck_warnings, 0);
  EXPECT_FALSE(r.error_summary.has_value());
  EXPECT_EQ(r.note, "");
}

TEST(SanitizerReport, TrapThenLaunchFailure) {
  auto r = parse_sanitizer_output(fixture_text("sanitizer/trap_plain_then_memcheck.txt"));
  EXPECT_EQ(r.state, sanitizer_state::findings);
  ASSERT_EQ(r.findings.size(), 2u);
  const auto& trap = r.findings[0];
  EXPECT_EQ(trap.category, finding_category::device_exception);
  EXPECT_EQ(trap.kind, "Trace/breakpoint trap");
  EXPECT_EQ(trap.kernel, "device_trap(int *)");
  EXPECT_EQ(trap.pc_offset, "0x60");
  EXPECT_EQ(trap.source_line, 11);
  EXPECT_EQ(trap.thread, (triple{5, 0, 0}));
  const auto& api = r.findings[1];
  EXPECT_EQ(api.category, finding_category::api_error);
  EXPECT_EQ(api.kind,
            "Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API call "
            "to cudaDeviceSynchronize");
  EXPECT_EQ(api.kernel, "");
  EXPECT_EQ(r.error_summary, 2);
  EXPECT_TRUE(r.target_returned_error);
  EXPECT_EQ(r.note, "");
  EXPECT_EQ(r.first_fault_text(),
            "========= Trace/breakpoint trap\n"
            "=========     at device_trap(int *)+0x60 in faults.cu:11\n"
            "=========     by thread (5,0,0) in block (0,0,0)\n");
}

// No fixture has it: a driver entry-point probe, dropped by the noise table, next to a real error.
TEST(SanitizerReport, CuGetProcAddressProbesAreFiltered) {
  std::string probe =
      "========= Program hit CUDA_ERROR_NOT_FOUND (error 500) due to \"named symbol not found\" on CUDA API call to "
      "cuGetProcAddress.\n"
      "=========     Saved host backtrace up to driver entry point at error\n"
      "=========         Host Frame: cudart::globalState::initializeDriver() [0x1234] in libcudart.so.13\n"
      "=========\n";
  auto clean = parse_sanitizer_output("========= COMPUTE-SANITIZER\n" + probe + "result: ok\n" +
                                      "========= ERROR SUMMARY: 1 error\n");
  EXPECT_EQ(clean.state, sanitizer_state::clean);
  EXPECT_EQ(clean.filtered_blocks, 1);
  EXPECT_EQ(clean.error_summary, 1);
  EXPECT_EQ(clean.note, "");  // the summary counts the probe too
  auto mixed = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\n" + probe + fixture_text("sanitizer/trap_plain_then_memcheck.txt"));
  EXPECT_EQ(mixed.state, sanitizer_state::findings);
  EXPECT_EQ(mixed.filtered_blocks, 1);
  ASSERT_EQ(mixed.findings.size(), 2u);
  EXPECT_EQ(mixed.findings[0].kind, "Trace/breakpoint trap");
  EXPECT_NE(mixed.note.find("ERROR SUMMARY says 2 errors; 3 report blocks were read"), std::string::npos);
  ASSERT_EQ(sanitizer_noise_patterns().size(), 1u);
}

TEST(SanitizerReport, SanitizerFailuresAreToolErrors) {
  for (const char* text : {
           "========= COMPUTE-SANITIZER\n========= Error: Device not supported\n========= ERROR SUMMARY: 0 errors\n",
           "========= COMPUTE-SANITIZER\n========= Error: Target application terminated before first instrumented "
           "API call\n",
           "========= COMPUTE-SANITIZER\n========= Error: Failed to initialize the driver (error 999)\n",
           "========= COMPUTE-SANITIZER\n========= Internal Sanitizer Error: The Sanitizer encountered an error while "
           "launching k and didn't track the launch. Errors might go undetected.\n========= ERROR SUMMARY: 0 errors\n",
           "bash: compute-sanitizer: command not found\n",
           ""}) {
    auto r = parse_sanitizer_output(text);
    EXPECT_EQ(r.state, sanitizer_state::tool_error) << text;
    EXPECT_EQ(r.tool_errors.size(), 1u) << text;
    EXPECT_FALSE(r.clean());
  }
  auto none = parse_sanitizer_output("bash: compute-sanitizer: command not found\n");
  EXPECT_EQ(none.tool_errors[0], "no '========= COMPUTE-SANITIZER' banner: the sanitizer did not run");
}

TEST(SanitizerReport, RealFindingsOutrankToolErrorsAndCrashesAreFindings) {
  auto r = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\n"
      "========= Internal Sanitizer Error: didn't track the launch\n" +
      fixture_text("sanitizer/racecheck_smem_race.txt"));
  EXPECT_EQ(r.state, sanitizer_state::findings);
  EXPECT_EQ(r.tool_errors.size(), 1u);
  auto crash = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\n"
      "========= Error: process didn't terminate successfully\n"
      "=========     The application may have hit an error when dereferencing Unified Memory from the host.\n"
      "========= Target application returned an error\n"
      "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_EQ(crash.state, sanitizer_state::findings);
  ASSERT_EQ(crash.findings.size(), 1u);
  EXPECT_EQ(crash.findings[0].category, finding_category::process);
  EXPECT_EQ(crash.findings[0].lines.size(), 2u);
  EXPECT_NE(crash.note.find("ERROR SUMMARY says 0 errors; 1 report blocks were read"), std::string::npos);
}

TEST(SanitizerReport, Json) {
  auto r = parse_sanitizer_output(fixture_text("sanitizer/trap_plain_then_memcheck.txt"));
  auto j = to_json(r);
  EXPECT_EQ(j["state"], "findings");
  EXPECT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["category"], "device_exception");
  EXPECT_EQ(j["findings"][0]["thread"], ordered_json::array({5, 0, 0}));
  EXPECT_TRUE(j["findings"][1]["thread"].is_null());
  EXPECT_EQ(j["error_summary"], 2);
}

}  // namespace
}  // namespace ptxbench::measure
