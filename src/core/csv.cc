#include "core/csv.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace ptxbench {
namespace {

struct cursor {
  std::string_view text;
  std::size_t pos = 0;
  std::size_t line = 1;
};

// Reads one field starting at c.pos; leaves c.pos on the delimiter (',' '\n' '\r') or at the end.
result<std::string_view> read_field(cursor& c, std::deque<std::string>& unescaped, const std::string& source) {
  const std::string_view t = c.text;
  if (c.pos < t.size() && t[c.pos] == '"') {
    const std::size_t start_line = c.line;
    std::size_t begin = ++c.pos;
    bool escaped = false;
    for (;;) {
      std::size_t q = t.find('"', c.pos);
      if (q == std::string_view::npos)
        return make_error(fmt::format("{}:{}: quoted field is never closed", source, start_line));
      for (std::size_t i = c.pos; i < q; ++i) c.line += t[i] == '\n';
      if (q + 1 < t.size() && t[q + 1] == '"') { escaped = true; c.pos = q + 2; continue; }
      c.pos = q + 1;
      if (c.pos < t.size() && t[c.pos] != ',' && t[c.pos] != '\n' && t[c.pos] != '\r')
        return make_error(fmt::format("{}:{}: unexpected text after a closing quote", source, c.line));
      std::string_view raw = t.substr(begin, q - begin);
      if (!escaped) return raw;
      std::string& s = unescaped.emplace_back();
      s.reserve(raw.size());
      for (std::size_t i = 0; i < raw.size(); ++i) {
        s += raw[i];
        if (raw[i] == '"') ++i;  // "" -> "
      }
      return std::string_view(s);
    }
  }
  std::size_t end = t.find_first_of(",\n\r\"", c.pos);
  if (end == std::string_view::npos) end = t.size();
  if (end < t.size() && t[end] == '"')
    return make_error(fmt::format("{}:{}: quote inside an unquoted field", source, c.line));
  std::string_view field = t.substr(c.pos, end - c.pos);
  c.pos = end;
  return field;
}

// Consumes a line end if there is one; returns false at the end of the text.
bool next_line(cursor& c) {
  if (c.pos < c.text.size() && c.text[c.pos] == '\r') ++c.pos;
  if (c.pos < c.text.size() && c.text[c.pos] == '\n') { ++c.pos; ++c.line; }
  return c.pos < c.text.size();
}

}  // namespace

result<csv_table> csv_table::parse(std::string text, const std::string& source) {
  csv_table table;
  table.m_store = std::make_unique<storage>();
  table.m_store->text = std::move(text);
  table.m_source = source;
  cursor c{table.m_store->text};
  if (c.text.substr(0, 3) == "\xEF\xBB\xBF") c.pos = 3;  // a UTF-8 byte-order mark
  std::vector<std::string_view> row;
  bool have_header = false;
  while (c.pos < c.text.size()) {
    if (c.text[c.pos] == '\n' || c.text[c.pos] == '\r') {  // blank line
      if (!next_line(c)) break;
      continue;
    }
    const std::size_t row_line = c.line;
    row.clear();
    for (;;) {
      auto f = read_field(c, table.m_store->unescaped, source);
      if (!f) return f.err();
      row.push_back(*f);
      if (c.pos < c.text.size() && c.text[c.pos] == ',') { ++c.pos; continue; }
      break;
    }
    if (!have_header) {
      for (auto h : row) table.m_header.emplace_back(h);
      have_header = true;
    } else {
      if (row.size() != table.m_header.size())
        return make_error(fmt::format("{}:{}: expected {} fields (as in the header), found {}", source, row_line,
                                      table.m_header.size(), row.size()));
      table.m_cells.insert(table.m_cells.end(), row.begin(), row.end());
      table.m_lines.push_back(row_line);
    }
    if (!next_line(c)) break;
  }
  if (!have_header) return make_error(source + ": empty file (expected a header line)");
  return table;
}

std::optional<std::size_t> csv_table::column(std::string_view name) const {
  for (std::size_t i = 0; i < m_header.size(); ++i)
    if (m_header[i] == name) return i;
  return std::nullopt;
}

std::optional<std::vector<std::string>> split_csv_line(std::string_view line) {
  cursor c{line};
  std::deque<std::string> unescaped;
  std::vector<std::string> fields;
  for (;;) {
    auto f = read_field(c, unescaped, "");
    if (!f || (c.pos < line.size() && line[c.pos] != ',')) return std::nullopt;
    fields.emplace_back(*f);
    if (c.pos >= line.size()) return fields;
    ++c.pos;
  }
}

csv_builder::csv_builder(std::vector<std::string> header) : m_columns(header.size()) {
  for (const auto& h : header) cell(h);
  end_row();
}

csv_builder& csv_builder::cell(std::string_view text) {
  if (m_in_row++ > 0) m_out += ',';
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) {
    m_out += text;
    return *this;
  }
  m_out += '"';
  for (char ch : text) {
    if (ch == '"') m_out += '"';
    m_out += ch;
  }
  m_out += '"';
  return *this;
}

csv_builder& csv_builder::cell(double v) {
  return cell(std::isfinite(v) ? std::string_view(fmt::format("{}", v)) : std::string_view());
}

csv_builder& csv_builder::cell(int64_t v) { return cell(std::string_view(fmt::format("{}", v))); }

csv_builder& csv_builder::cell(const std::optional<double>& v) { return v ? cell(*v) : cell(std::string_view()); }

csv_builder& csv_builder::cell(const std::optional<int64_t>& v) { return v ? cell(*v) : cell(std::string_view()); }

csv_builder& csv_builder::end_row() {
  if (m_in_row != m_columns)
    throw std::logic_error(fmt::format("csv row has {} cells, header has {}", m_in_row, m_columns));
  m_out += '\n';
  m_in_row = 0;
  return *this;
}

}  // namespace ptxbench
