#pragma once
// Reading compute-sanitizer output (memcheck, racecheck, synccheck, initcheck) into typed findings.
// The tool prints each report as a block of lines prefixed "========= ": a headline ("Invalid
// __global__ write of size 4 bytes"), indented detail lines (location, thread, address, host
// backtrace) and a bare "=========" line. Lines without the prefix are the program's own output.
//
// What the tool did not see, this parser cannot report: without `--padding`, memcheck misses an
// overflow that lands in a neighbouring allocation and prints "ERROR SUMMARY: 0 errors"
// (fixture tests/fixtures/sanitizer/memcheck_adjacent_overflow_no_padding.txt); that text parses as clean. Run
// memcheck with padding (or allocate guard space) to make such overflows visible.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::measure {

enum class sanitizer_state {
  clean,       ///< the sanitizer ran and reported nothing (after the noise filter)
  findings,    ///< at least one real report
  tool_error,  ///< the sanitizer itself failed or did not run; nothing is known about the candidate
};
std::string_view sanitizer_state_name(sanitizer_state s);

enum class finding_category {
  memory_access,   ///< memcheck: Invalid __global__/__shared__/__local__ read/write, misaligned
  race,            ///< racecheck: Race reported between ..., or a hazard report
  device_exception,///< trap, illegal instruction, illegal address ...
  api_error,       ///< Program hit <error> on CUDA API call to ...
  leak,            ///< memcheck --leak-check full: Leaked N bytes
  sync,            ///< synccheck: barrier errors
  uninitialized,   ///< initcheck: Uninitialized __global__ memory read
  process,         ///< the program itself crashed ("process didn't terminate successfully")
  other,           ///< any other block; kept so that nothing the tool reported is lost
};
std::string_view finding_category_name(finding_category c);

struct sanitizer_finding {
  finding_category category = finding_category::other;
  std::string kind;            ///< the headline, e.g. "Invalid __global__ write of size 4 bytes"
  std::string kernel;          ///< "oob_write(float *, int)" (as printed, demangled)
  std::string pc_offset;       ///< "0xb0"
  std::string source_file;     ///< "faults.cu" (needs -lineinfo)
  int source_line = 0;
  std::optional<std::array<int, 3>> thread, block;
  std::string address;         ///< "0x7f1c70800400"
  std::string allocation;      ///< "1 bytes after the nearest allocation at 0x... of size 1,024 bytes"
  int64_t hazards = 0;         ///< racecheck: sum of the "[N hazards]" counts
  std::vector<std::string> lines;  ///< the block as printed, prefix included
};

struct sanitizer_report {
  sanitizer_state state = sanitizer_state::tool_error;
  std::vector<sanitizer_finding> findings;
  std::vector<std::string> tool_errors;          ///< why the sanitizer failed, verbatim
  int filtered_blocks = 0;                       ///< blocks dropped by the noise table
  std::optional<int64_t> error_summary;          ///< "ERROR SUMMARY: N errors"
  std::optional<int64_t> racecheck_errors;       ///< "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
  std::optional<int64_t> racecheck_warnings;
  bool target_returned_error = false;            ///< "Target application returned an error"
  std::string note;                              ///< e.g. the summary disagreeing with the findings

  [[nodiscard]] bool clean() const { return state == sanitizer_state::clean; }
  /// The first finding's block, host backtrace removed ("Saved host backtrace ..." and "Host
  /// Frame:" lines), for feedback to a model; empty when there is no finding.
  [[nodiscard]] std::string first_fault_text() const;
};

/// A block the parser drops as driver-probe noise: the headline starts with `headline_prefix` and
/// contains `contains`. The table is sanitizer_noise_patterns(); docs/sass-and-profiling.md lists it.
struct sanitizer_noise_pattern {
  std::string_view headline_prefix;
  std::string_view contains;
  std::string_view why;
};
const std::vector<sanitizer_noise_pattern>& sanitizer_noise_patterns();

/// Parses the combined stdout+stderr of a compute-sanitizer run. Never fails: text in which the
/// sanitizer did not run (no "COMPUTE-SANITIZER" banner) or reported its own failure is tool_error.
sanitizer_report parse_sanitizer_output(std::string_view text);

/// The report as JSON (state, findings without their raw lines, summaries), for a stage's details.
ordered_json to_json(const sanitizer_report& r);

}  // namespace ptxbench::measure
