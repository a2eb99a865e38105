#include "cli/option_checks.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ptxbench::cli {
namespace {

// A number as people write bounds: 1000000, not 1e+06; 0.5, not 0.500000.
std::string shown(double v) { return fmt::format("{:.15g}", v); }

// Parses the whole of `text` as a decimal integer; nullopt for anything else (a fraction,
// an exponent, trailing characters, overflow).
std::optional<long long> parse_whole(const std::string& text) {
  if (text.empty() || text.size() > 24) return std::nullopt;
  std::size_t i = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (i == text.size()) return std::nullopt;
  for (std::size_t k = i; k < text.size(); ++k)
    if (text[k] < '0' || text[k] > '9') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> parse_finite(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) return std::nullopt;  // "nan", "inf", "1e999", "2x"
  return v;
}

}  // namespace

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  std::string expect = fmt::format("expected a whole number from {} to {}", lo, hi);
  return CLI::Validator(
      [lo, hi, expect](std::string& text) -> std::string {
        auto v = parse_whole(text);
        if (!v || *v < lo || *v > hi) return fmt::format("{}, got '{}'", expect, text);
        return {};
      },
      fmt::format("{}..{}", lo, hi));
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        bool digits = !text.empty() && text.size() <= 20;
        for (char c : text) digits = digits && c >= '0' && c <= '9';
        errno = 0;
        if (digits) std::strtoull(text.c_str(), nullptr, 10);
        if (!digits || errno == ERANGE)
          return fmt::format("expected a whole number from 0 to {}, got '{}'",
                             std::numeric_limits<uint64_t>::max(), text);
        return {};
      },
      "0..2^64-1");
}

CLI::Validator number_in(double lo, double hi) {
  std::string expect = fmt::format("expected a number from {} to {}", shown(lo), shown(hi));
  return CLI::Validator(
      [lo, hi, expect](std::string& text) -> std::string {
        auto v = parse_finite(text);
        if (!v || *v < lo || *v > hi) return fmt::format("{}, got '{}'", expect, text);
        return {};
      },
      fmt::format("{}..{}", shown(lo), shown(hi)));
}

CLI::Validator number_in_or_off(double lo, double hi) {
  std::string expect = fmt::format("expected off or a number from {} to {}", shown(lo), shown(hi));
  return CLI::Validator(
      [lo, hi, expect](std::string& text) -> std::string {
        if (text == "off") return {};
        auto v = parse_finite(text);
        if (!v || *v < lo || *v > hi) return fmt::format("{}, got '{}'", expect, text);
        return {};
      },
      fmt::format("off|{}..{}", shown(lo), shown(hi)));
}

std::optional<double> number_or_off(const std::string& text) {
  if (text == "off") return std::nullopt;
  return parse_finite(text);
}

CLI::Validator share() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto v = parse_finite(text);
        if (!v || *v < 0 || *v > 1) return fmt::format("expected a share from 0 to 1 (0.9 = 90%), got '{}'", text);
        return {};
      },
      "0..1");
}

CLI::Validator comma_list_of(const std::vector<std::string>& allowed) {
  std::string expect = fmt::format("expected a comma list of {}", fmt::join(allowed, ", "));
  return CLI::Validator(
      [allowed, expect](std::string& text) -> std::string {
        std::vector<std::string> seen;
        std::size_t start = 0;
        while (true) {
          auto end = std::min(text.find(',', start), text.size());
          std::string item = text.substr(start, end - start);
          bool known = std::find(allowed.begin(), allowed.end(), item) != allowed.end();
          bool again = std::find(seen.begin(), seen.end(), item) != seen.end();
          if (!known || again) return fmt::format("{}, got '{}'", expect, text);
          seen.push_back(item);
          if (end == text.size()) return {};
          start = end + 1;
        }
      },
      "LIST");
}

CLI::Validator one_of(const std::vector<std::string>& allowed) {
  std::string expect = fmt::format("expected one of {}", fmt::join(allowed, ", "));
  return CLI::Validator(
      [allowed, expect](std::string& text) -> std::string {
        if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return {};
        return fmt::format("{}, got '{}'", expect, text);
      },
      fmt::format("{}", fmt::join(allowed, "|")));
}

CLI::Validator positive_number(double hi, const std::string& what) {
  std::string expect = fmt::format("expected {} above 0 and at most {}", what, shown(hi));
  return CLI::Validator(
      [hi, expect](std::string& text) -> std::string {
        auto v = parse_finite(text);
        if (!v || !(*v > 0) || *v > hi) return fmt::format("{}, got '{}'", expect, text);
        return {};
      },
      ">0");
}

CLI::Validator timeout_seconds() {
  constexpr double k_week_s = 7 * 24 * 3600;
  return positive_number(k_week_s, "seconds").description("seconds");
}

}  // namespace ptxbench::cli
