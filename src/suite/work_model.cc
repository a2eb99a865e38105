#include "suite/work_model.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace ptxbench {
namespace {

// Recursive descent over: expr = term {(+|-) term}; term = factor {(*|/) factor};
// factor = [-] (number | axis | "(" expr ")").
class formula_parser {
 public:
  formula_parser(std::string_view text, const std::map<std::string, int64_t>& axes) : m_text(text), m_axes(axes) {}

  result<double> parse() {
    auto v = expr();
    if (!v) return v;
    skip_space();
    if (m_pos != m_text.size()) return fail(fmt::format("unexpected '{}'", m_text[m_pos]));
    return v;
  }

 private:
  result<double> fail(const std::string& why) const {
    return make_error(fmt::format("{} at character {} of \"{}\"", why, m_pos + 1, m_text));
  }
  void skip_space() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
  }
  bool take(char c) {
    skip_space();
    if (m_pos < m_text.size() && m_text[m_pos] == c) { ++m_pos; return true; }
    return false;
  }
  result<double> expr() {
    auto left = term();
    if (!left) return left;
    double v = *left;
    while (true) {
      bool plus = take('+');
      if (!plus && !take('-')) return v;
      auto right = term();
      if (!right) return right;
      v = plus ? v + *right : v - *right;
    }
  }
  result<double> term() {
    auto left = factor();
    if (!left) return left;
    double v = *left;
    while (true) {
      bool times = take('*');
      if (!times && !take('/')) return v;
      auto right = factor();
      if (!right) return right;
      if (!times && *right == 0) return fail("division by zero");
      v = times ? v * *right : v / *right;
    }
  }
  result<double> factor() {
    if (++m_depth > 64) return fail("nested too deeply");
    auto v = primary();
    --m_depth;
    return v;
  }
  result<double> primary() {
    if (take('-')) {
      auto v = factor();
      if (!v) return v;
      return -*v;
    }
    if (take('(')) {
      auto v = expr();
      if (!v) return v;
      if (!take(')')) return fail("missing ')'");
      return v;
    }
    skip_space();
    if (m_pos >= m_text.size()) return fail("expression ends early");
    char c = m_text[m_pos];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t start = m_pos;
      while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
      if (m_pos - start > 15) return fail("number too long");
      return std::stod(std::string(m_text.substr(start, m_pos - start)));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = m_pos;
      while (m_pos < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
        ++m_pos;
      std::string name(m_text.substr(start, m_pos - start));
      auto it = m_axes.find(name);
      if (it == m_axes.end()) {
        m_pos = start;
        return fail(fmt::format("unknown axis \"{}\"", name));
      }
      return static_cast<double>(it->second);
    }
    return fail(fmt::format("unexpected '{}'", c));
  }

  std::string_view m_text;
  const std::map<std::string, int64_t>& m_axes;
  std::size_t m_pos = 0;
  int m_depth = 0;
};

}  // namespace

result<double> evaluate_work_formula(std::string_view formula, const std::map<std::string, int64_t>& axes,
                                     const std::string& what) {
  auto v = formula_parser(formula, axes).parse();
  if (!v) return v.err().with_context(what);
  if (!std::isfinite(*v) || *v < 0)
    return make_error(fmt::format("{}: \"{}\" evaluates to {}, expected a finite value >= 0", what, formula, *v));
  return v;
}

result<task_work> evaluate_work(const work_formulas& w, const std::map<std::string, int64_t>& axes) {
  task_work out;
  auto flops = evaluate_work_formula(w.flops, axes, "work.flops");
  if (!flops) return flops.err();
  auto read = evaluate_work_formula(w.bytes_read, axes, "work.bytes_read");
  if (!read) return read.err();
  auto written = evaluate_work_formula(w.bytes_written, axes, "work.bytes_written");
  if (!written) return written.err();
  out.flops = *flops;
  out.bytes_read = *read;
  out.bytes_written = *written;
  return out;
}

}  // namespace ptxbench
