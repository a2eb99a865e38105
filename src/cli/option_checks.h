#pragma once
// Checks for numeric command-line options, attached with CLI11's `->check(...)`. Every numeric
// option of every subcommand uses one of these, so NaN, infinities, negative or out-of-range
// values are refused the same way before any work starts: CLI11 prefixes the message with the
// option's name, main.cc prints it as one line and exits 2, e.g.
//   ptxbench: --turns: expected a whole number from 1 to 1000, got '0'
// (CLI::Range is not used: it accepts NaN, whose comparisons are all false, and prints its bounds
// with std::to_string, which is how `--turns 0` once printed a 309-digit limit.)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ptxbench::cli {

/// A whole number in [lo, hi] written in decimal (no sign for lo >= 0, no fraction, no exponent).
CLI::Validator whole_number(int64_t lo, int64_t hi);

/// Any value of a uint64 seed: decimal digits only, at most 2^64 - 1.
CLI::Validator seed_value();

/// A finite number > 0 and <= hi (a speedup); `what` names it in the message ("a number", "seconds").
CLI::Validator positive_number(double hi, const std::string& what = "a number");

/// A finite number in [lo, hi] (NaN and infinities are refused).
CLI::Validator number_in(double lo, double hi);

/// "off", or a finite number in [lo, hi] (a bound that can be switched off, e.g. --min-speedup).
CLI::Validator number_in_or_off(double lo, double hi);

/// The value of an option checked with number_in_or_off: nullopt for "off".
std::optional<double> number_or_off(const std::string& text);

/// A share of a whole from 0 to 1 (0.9 = 90%), worded as `metrics --min-coverage` words it.
CLI::Validator share();

/// A comma list of one or more of `allowed`, each at most once (e.g. --sanitizer-tools).
CLI::Validator comma_list_of(const std::vector<std::string>& allowed);

/// Exactly one of `allowed` (e.g. --cap-rule).
CLI::Validator one_of(const std::vector<std::string>& allowed);

/// Seconds for a timeout: > 0 and at most a week.
CLI::Validator timeout_seconds();

}  // namespace ptxbench::cli
