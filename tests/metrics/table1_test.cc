#include <gtest/gtest.h>

#include "metrics/table1.h"

namespace ptxbench::metrics {
namespace {

turn_rate_row row(std::string model, std::string arch, std::string def, std::string dir, int t, int n, int c, int tc) {
  turn_rates v;
  v.n_turns = n;
  v.correct_turns = c;
  v.target_correct_turns = tc;
  v.rate = double(c) / n;
  v.target_rate = double(tc) / n;
  return {{std::move(model), std::move(arch), std::move(def), std::move(dir)}, t, v};
}

TEST(MetricsTable1, MarkdownHasTargetLineThenPlainInParentheses) {
  std::vector<turn_rate_row> rows = {row("M", "hopper", "gemm", "/r/a", 1, 12, 11, 11), row("M", "hopper", "gemm", "/r/a", 8, 96, 91, 91),
                                     row("N", "hopper", "mha", "/r/b", 1, 12, 6, 1), row("N", "hopper", "mha", "/r/b", 8, 96, 48, 10)};
  auto blocks = build_table1(rows, {1, 8});
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].definitions, (std::vector<std::string>{"gemm", "mha"}));
  EXPECT_EQ(render_table1_markdown(blocks, {1, 8}),
            "Target-instruction turn correctness rate (%) at ≤1 / ≤8 turns; plain turn correctness rate in "
            "parentheses below it.\n"
            "\n### hopper\n\n| Model | gemm | mha |\n|---|---|---|\n"
            "| M | 91.7 / 94.8 |  |\n|  | (91.7 / 94.8) |  |\n"
            "| N |  | 8.3 / 10.4 |\n|  |  | (50.0 / 50.0) |\n");
}

TEST(MetricsTable1, ExtraRunsGetTheirOwnRowsAndANote) {
  std::vector<turn_rate_row> rows = {row("G", "hopper", "bwd", "/r/g1", 8, 160, 31, 31), row("G", "hopper", "bwd", "/r/g2", 8, 96, 37, 37),
                                     row("H", "hopper", "bwd", "/r/h", 8, 96, 0, 0), row("G", "blackwell", "bwd", "/r/g3", 8, 96, 2, 2)};
  auto blocks = build_table1(rows, {8});
  ASSERT_EQ(blocks.size(), 2u);
  const auto& hopper = blocks[0];
  ASSERT_EQ(hopper.rows.size(), 3u);
  EXPECT_EQ(hopper.rows[0].label, "G");
  EXPECT_EQ(hopper.rows[1].label, "G (run 2)");  // right below G, before H
  EXPECT_EQ(hopper.rows[1].cells[0].target_line, "38.5");
  EXPECT_EQ(hopper.rows[2].label, "H");
  ASSERT_EQ(hopper.notes.size(), 1u);
  EXPECT_EQ(hopper.notes[0], "G has several runs on hopper: bwd run 1 = g1; bwd run 2 = g2");
  EXPECT_EQ(blocks[1].arch, "blackwell");
  EXPECT_TRUE(blocks[1].notes.empty());
}

TEST(MetricsTable1, PercentText) {
  EXPECT_EQ(percent_text(0.9479166), "94.8");
  EXPECT_EQ(percent_text(0.0), "0.0");
  EXPECT_EQ(percent_text(std::nullopt), "–");
}

}  // namespace
}  // namespace ptxbench::metrics
