#pragma once
// The project's one CSV reader and writer (RFC 4180: quoted fields, "" inside quotes, LF or CRLF
// line ends): upstream PTXBench's exports, Nsight Compute's CSV pages, the metrics tables. Fields are views into the text, so the
// 3.5 MB per-turn export parses in a few milliseconds without a string per cell.
//
// Why not a Debian package: libcsv-dev is a callback C library that would add a shared object to
// binaries carried to the GPU host (whose Ubuntu release differs from bookworm), and libfccp-dev is
// a 2016 snapshot whose column count is a compile-time template argument and whose errors are
// exceptions without our file:line shape. What we need is ~100 lines.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxbench {

class csv_table {
 public:
  /// Parses text (the whole file). Fails with "<source>:<line>: <problem>" on an unterminated quote,
  /// a stray quote inside an unquoted field, or a row whose field count differs from the header's.
  static result<csv_table> parse(std::string text, const std::string& source);

  [[nodiscard]] const std::vector<std::string>& header() const { return m_header; }
  /// Returns the index of the named column, or nullopt.
  [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const;
  [[nodiscard]] std::size_t rows() const { return m_lines.size(); }
  [[nodiscard]] std::size_t columns() const { return m_header.size(); }
  /// Returns the field (unquoted, unescaped) at a data row (0-based, header excluded) and column.
  [[nodiscard]] std::string_view at(std::size_t row, std::size_t col) const { return m_cells[row * m_header.size() + col]; }
  /// Returns the 1-based line in the file where the data row starts, for error messages.
  [[nodiscard]] std::size_t line_of(std::size_t row) const { return m_lines[row]; }
  [[nodiscard]] const std::string& source() const { return m_source; }

 private:
  struct storage {
    std::string text;
    std::deque<std::string> unescaped;  ///< quoted fields containing "" (a deque never moves its elements)
  };
  std::unique_ptr<storage> m_store;     ///< heap-pinned, so views stay valid when the table moves
  std::string m_source;
  std::vector<std::string> m_header;
  std::vector<std::string_view> m_cells;
  std::vector<std::size_t> m_lines;
};

/// Splits one line of CSV into its fields (unquoted, unescaped). Returns nullopt when a quote is left
/// open or text follows a closing quote. For tools whose CSV comes after free-form lines (ncu).
std::optional<std::vector<std::string>> split_csv_line(std::string_view line);

/// Builds CSV text row by row; quotes a field only when it holds a comma, quote or line break.
class csv_builder {
 public:
  /// Starts the text with the header row.
  explicit csv_builder(std::vector<std::string> header);
  /// Appends one field to the current row (each overload returns *this for chaining).
  csv_builder& cell(std::string_view text);
  csv_builder& cell(const char* text) { return cell(std::string_view(text)); }
  csv_builder& cell(const std::string& text) { return cell(std::string_view(text)); }
  /// Shortest text that reads back to the same double; NaN and infinities become an empty field.
  csv_builder& cell(double v);
  csv_builder& cell(int64_t v);
  csv_builder& cell(int v) { return cell(static_cast<int64_t>(v)); }
  csv_builder& cell(bool v) { return cell(static_cast<int64_t>(v ? 1 : 0)); }
  /// An empty field for nullopt.
  csv_builder& cell(const std::optional<double>& v);
  csv_builder& cell(const std::optional<int64_t>& v);
  /// Ends the row; throws std::logic_error when it has a different number of cells than the header.
  csv_builder& end_row();
  [[nodiscard]] const std::string& text() const { return m_out; }

 private:
  std::size_t m_columns;
  std::size_t m_in_row = 0;
  std::string m_out;
};

}  // namespace ptxbench
