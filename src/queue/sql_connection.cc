#include "queue/sql_connection.h"

#include <cctype>
#include <cstdlib>

namespace ptxbench::queue {

std::string sql_rows::text(std::size_t row, std::size_t col) const {
  const auto& cell = rows.at(row).at(col);
  return cell ? *cell : std::string();
}

int64_t sql_rows::integer(std::size_t row, std::size_t col) const {
  const auto& cell = rows.at(row).at(col);
  return cell ? std::strtoll(cell->c_str(), nullptr, 10) : 0;
}

std::string sqlite_placeholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '$' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      c = '?';
    }
    out += c;
  }
  return out;
}

}  // namespace ptxbench::queue
