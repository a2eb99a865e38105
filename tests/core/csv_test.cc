#include <gtest/gtest.h>

#include "core/csv.h"

namespace ptxbench {
namespace {

TEST(Csv, ParsesQuotesEscapesAndCrlf) {
  auto t = csv_table::parse("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\r\n\n2,,\"multi\nline\"\n3,z,w", "t.csv");
  ASSERT_TRUE(t) << t.err().message;
  ASSERT_EQ(t->rows(), 3u);
  EXPECT_EQ(t->at(0, 1), "x, y");
  EXPECT_EQ(t->at(0, 2), "say \"hi\"");
  EXPECT_EQ(t->at(1, 1), "");
  EXPECT_EQ(t->at(1, 2), "multi\nline");
  EXPECT_EQ(t->line_of(0), 2u);
  EXPECT_EQ(t->line_of(1), 4u);
  EXPECT_EQ(t->line_of(2), 6u);  // the quoted line break counts
  EXPECT_EQ(t->at(2, 2), "w");
  EXPECT_EQ(*t->column("c"), 2u);
  EXPECT_FALSE(t->column("d"));
}

TEST(Csv, ViewsSurviveMovingTheTable) {
  auto t = csv_table::parse("h\nx\n\"q\"\"\"\n", "t.csv");
  ASSERT_TRUE(t);
  csv_table moved = std::move(*t);
  EXPECT_EQ(moved.at(0, 0), "x");
  EXPECT_EQ(moved.at(1, 0), "q\"");
}

TEST(Csv, ErrorsNameFileAndLine) {
  auto a = csv_table::parse("a,b\n1,2\n3\n", "up.csv");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.err().message, "up.csv:3: expected 2 fields (as in the header), found 1");
  auto b = csv_table::parse("a\n\"open\n", "up.csv");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.err().message, "up.csv:2: quoted field is never closed");
  auto c = csv_table::parse("a\nx\"y\n", "up.csv");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.err().message, "up.csv:2: quote inside an unquoted field");
  auto d = csv_table::parse("a\n\"x\"y\n", "up.csv");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.err().message, "up.csv:2: unexpected text after a closing quote");
  EXPECT_FALSE(csv_table::parse("", "e.csv"));
}

TEST(Csv, BuilderQuotesOnlyWhenNeededAndRoundTrips) {
  csv_builder b({"name", "value", "n"});
  b.cell("plain").cell(0.1).cell(int64_t{3}).end_row();
  b.cell("a,\"b\"").cell(std::optional<double>{}).cell(std::optional<int64_t>{7}).end_row();
  EXPECT_EQ(b.text(), "name,value,n\nplain,0.1,3\n\"a,\"\"b\"\"\",,7\n");
  auto t = csv_table::parse(b.text(), "b.csv");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->at(1, 0), "a,\"b\"");
  EXPECT_THROW(b.cell("only one").end_row(), std::logic_error);
}

TEST(Csv, SplitsOneLineWithTheSameRulesAsTables) {
  auto f = split_csv_line("\"ID\",\"a, b\",\"say \"\"hi\"\"\",,7");
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, (std::vector<std::string>{"ID", "a, b", "say \"hi\"", "", "7"}));
  EXPECT_FALSE(split_csv_line("\"open,1"));
  EXPECT_FALSE(split_csv_line("\"x\"y,1"));
}

}  // namespace
}  // namespace ptxbench
