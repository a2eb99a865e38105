#pragma once
// Run directories and upstream files with something wrong, made from the committed fixtures for the
// data-warning tests (unit, CLI, report, browser): an unfinished trajectory, a planned file that is
// missing, an unreadable file, every upstream row doubled, a conflicting duplicate.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/json_check.h"
#include "test_support.h"

namespace ptxbench::metrics::testing_runs {
namespace fs = std::filesystem;

inline fs::path run_small() { return ptxbench::testing::fixtures_dir() / "trajectories/run_small"; }
inline fs::path run_cpu_only() { return ptxbench::testing::fixtures_dir() / "trajectories/run_cpu_only"; }
inline fs::path upstream_subset() { return ptxbench::testing::fixtures_dir() / "upstream/turns_subset.csv"; }

/// Copies a fixture run directory to `dest` (which must not exist) and returns dest.
inline fs::path copy_run(const fs::path& fixture, const fs::path& dest) {
  fs::copy(fixture, dest, fs::copy_options::recursive);
  return dest;
}

/// Rewrites a trajectory as an interrupted run leaves it: exit status "Running", only the first
/// `keep_turns` turns (message pairs), no exit message.
inline void make_unfinished(const fs::path& file, int keep_turns) {
  auto j = parse_json(*read_text_file(file, 64 << 20), file.string());
  ASSERT_TRUE(j);
  (*j)["info"]["exit_status"] = "Running";
  auto& msgs = (*j)["messages"];
  while (msgs.size() > static_cast<std::size_t>(2 + 2 * keep_turns)) msgs.erase(msgs.size() - 1);
  ASSERT_TRUE(write_file_atomic(file, dump_pretty(*j)));
}

/// The run_small fixture with base-t0.json interrupted after 2 of its 3 turns and multicast-t1.json
/// (planned) deleted: what a run killed mid-way and copied without one file looks like.
inline fs::path incomplete_run(const fs::path& dest) {
  copy_run(run_small(), dest);
  make_unfinished(dest / "trajectories/base-t0.json", 2);
  fs::remove(dest / "trajectories/multicast-t1.json");
  return dest;
}

/// Writes the upstream subset with every data row twice (each row followed by its copy) and returns
/// the path; `change_line` (1-based file line of a data row, 0: none) makes that row's copy differ in
/// its correctness column.
inline fs::path doubled_upstream(const fs::path& dest, std::size_t change_line = 0) {
  std::string text = *read_text_file(upstream_subset(), 64 << 20);
  std::string out;
  std::size_t pos = 0, line = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    std::string row = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? text.size() : end + 1;
    ++line;
    out += row + "\n";
    if (line == 1) continue;  // the header once
    if (line == change_line) {
      auto at = row.find(",Compilation error,");
      if (at == std::string::npos) at = row.find(",Correct,");
      EXPECT_NE(at, std::string::npos) << row;
      row.replace(at, row.find(',', at + 1) - at, ",Runtime error");
    }
    out += row + "\n";
  }
  EXPECT_TRUE(write_file_atomic(dest, out));
  return dest;
}

}  // namespace ptxbench::metrics::testing_runs
