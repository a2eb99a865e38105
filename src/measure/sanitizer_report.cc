#include "measure/sanitizer_report.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::measure {


std::string_view sanitizer_state_name(sanitizer_state s) {
  switch (s) {
    case sanitizer_state::clean: return "clean";
    case sanitizer_state::findings: return "findings";
    case sanitizer_state::tool_error: return "tool_error";
  }
  return "unknown";
}

std::string_view finding_category_name(finding_category c) {
  switch (c) {
    case finding_category::memory_access: return "memory_access";
    case finding_category::race: return "race";
    case finding_category::device_exception: return "device_exception";
    case finding_category::api_error: return "api_error";
    case finding_category::leak: return "leak";
    case finding_category::sync: return "sync";
    case finding_category::uninitialized: return "uninitialized";
    case finding_category::process: return "process";
    case finding_category::other: return "other";
  }
  return "other";
}

const std::vector<sanitizer_noise_pattern>& sanitizer_noise_patterns() {
  // Libraries and the CUDA runtime ask the driver for optional entry points with cuGetProcAddress;
  // a symbol the driver lacks is an expected "error" that memcheck still reports. Upstream PTXBench
  // drops exactly these blocks in its sanitize step; anything else is kept.
  static const std::vector<sanitizer_noise_pattern> table = {
      {"Program hit", "on CUDA API call to cuGetProcAddress", "driver entry-point probe by the runtime/libraries"},
  };
  return table;
}

namespace {

constexpr std::string_view k_prefix = "=========";

// Headlines that are not reports; they close the current block.
enum class info_kind { banner, error_summary, racecheck_summary, target_error, other_info };
struct info_rule { std::string_view prefix; info_kind kind; };
constexpr info_rule k_info_rules[] = {
    {"COMPUTE-SANITIZER", info_kind::banner},
    {"ERROR SUMMARY:", info_kind::error_summary},
    {"RACECHECK SUMMARY:", info_kind::racecheck_summary},
    {"Target application returned an error", info_kind::target_error},
    {"LEAK SUMMARY:", info_kind::other_info},
    {"No CUDA-MEMCHECK results found", info_kind::other_info},
};

// Report headlines by category, first match wins. "Error:" headlines not matched here are the
// sanitizer's own failures (tool_error), as are the explicit tool-error rules below.
struct category_rule { std::string_view prefix, contains; finding_category category; };
constexpr category_rule k_category_rules[] = {
    {"", "Race reported", finding_category::race},
    {"", "hazard detected", finding_category::race},
    {"Invalid __", "", finding_category::memory_access},
    {"Program hit", "", finding_category::api_error},
    {"Leaked ", "", finding_category::leak},
    {"Barrier error", "", finding_category::sync},
    {"Uninitialized ", "", finding_category::uninitialized},
    {"Error: process didn't terminate successfully", "", finding_category::process},
    {"Trace/breakpoint trap", "", finding_category::device_exception},
    {"Illegal Instruction", "", finding_category::device_exception},
    {"Invalid PC", "", finding_category::device_exception},
    {"Warp ", "", finding_category::device_exception},
    {"Lane ", "", finding_category::device_exception},
    {"Hardware Stack Overflow", "", finding_category::device_exception},
};
constexpr std::string_view k_tool_error_contains[] = {
    "Internal Sanitizer Error", "Device not supported", "not supported on this device",
};

bool matches(std::string_view s, std::string_view prefix, std::string_view contains) {
  return starts_with(s, prefix) && (contains.empty() || s.find(contains) != std::string_view::npos);
}

std::optional<finding_category> categorize(std::string_view headline) {
  for (const auto& r : k_category_rules)
    if (matches(headline, r.prefix, r.contains)) return r.category;
  return std::nullopt;
}

bool is_tool_error(std::string_view headline) {
  for (auto c : k_tool_error_contains)
    if (headline.find(c) != std::string_view::npos) return true;
  return starts_with(headline, "Error:");
}

std::optional<std::array<int, 3>> triple_after(std::string_view s, std::string_view key) {
  auto p = s.find(key);
  if (p == std::string_view::npos) return std::nullopt;
  std::array<int, 3> v{};
  if (std::sscanf(std::string(s.substr(p + key.size())).c_str(), "(%d,%d,%d)", &v[0], &v[1], &v[2]) != 3)
    return std::nullopt;
  return v;
}

// "oob_write(float *, int)+0xb0 in faults.cu:5 [192 hazards]" -> kernel, offset, file, line, hazards.
void read_location(std::string_view s, sanitizer_finding& f, bool overwrite) {
  s = trim(s);
  if (auto lb = s.rfind(" ["); lb != std::string_view::npos && s.back() == ']') {
    f.hazards += parse_count(s.substr(lb + 2, s.find(' ', lb + 2) - lb - 2)).value_or(0);
    s = trim(s.substr(0, lb));
  }
  if (!overwrite) return;
  auto plus = s.rfind("+0x");
  if (plus == std::string_view::npos) { f.kernel = std::string(s); return; }
  f.kernel = std::string(s.substr(0, plus));
  auto rest = s.substr(plus + 1);
  auto in = rest.find(" in ");
  f.pc_offset = std::string(rest.substr(0, in));
  if (in == std::string_view::npos) return;
  auto file = rest.substr(in + 4);
  auto colon = file.rfind(':');
  auto line = colon == std::string_view::npos ? std::nullopt : parse_count(file.substr(colon + 1));
  f.source_file = std::string(line ? file.substr(0, colon) : file);
  f.source_line = line ? static_cast<int>(*line) : 0;
}

void read_detail(std::string_view d, sanitizer_finding& f) {
  if (starts_with(d, "at ")) {
    read_location(d.substr(3), f, f.kernel.empty());
  } else if (starts_with(d, "by thread ")) {
    f.thread = triple_after(d, "by thread ");
    f.block = triple_after(d, " in block ");
  } else if (starts_with(d, "Access to ") || starts_with(d, "Address ")) {
    auto p = d.find("0x");
    if (p != std::string_view::npos) f.address = std::string(d.substr(p, d.find(' ', p) - p));
  } else if (starts_with(d, "and is ")) {
    f.allocation = std::string(d.substr(7));
  } else if (starts_with(d, "and ")) {
    auto at = d.find(" at ");
    if (at != std::string_view::npos) read_location(d.substr(at + 4), f, false);
  }
}

struct block {
  std::string headline;
  std::vector<std::string> lines;
};

void finish_block(block& b, sanitizer_report& r) {
  if (b.headline.empty()) return;
  auto category = categorize(b.headline);
  if (!category && is_tool_error(b.headline)) {
    std::string msg = b.headline;
    for (std::size_t i = 1; i < b.lines.size(); ++i) msg += " " + std::string(trim(std::string_view(b.lines[i]).substr(k_prefix.size())));
    r.tool_errors.push_back(msg);
  } else {
    bool noise = false;
    for (const auto& p : sanitizer_noise_patterns()) noise = noise || matches(b.headline, p.headline_prefix, p.contains);
    if (noise) {
      ++r.filtered_blocks;
    } else {
      sanitizer_finding f;
      f.category = category.value_or(finding_category::other);
      std::string_view kind = b.headline;
      for (std::string_view level : {"Error: ", "Warning: "})
        if (f.category == finding_category::race && starts_with(kind, level)) kind.remove_prefix(level.size());
      if (auto at = kind.find(" access at "); f.category == finding_category::race && at != std::string_view::npos)
        read_location(kind.substr(at + 11), f, true);
      if (f.category == finding_category::api_error && !kind.empty() && kind.back() == '.') kind.remove_suffix(1);
      f.kind = std::string(kind);
      for (std::size_t i = 1; i < b.lines.size(); ++i) read_detail(trim(std::string_view(b.lines[i]).substr(k_prefix.size())), f);
      f.lines = std::move(b.lines);
      r.findings.push_back(std::move(f));
    }
  }
  b = block{};
}

void read_info(info_kind kind, std::string_view h, sanitizer_report& r, bool& banner) {
  switch (kind) {
    case info_kind::banner: banner = true; break;
    case info_kind::error_summary: {
      auto n = trim(h.substr(h.find(':') + 1));
      r.error_summary = parse_count(n.substr(0, n.find(' ')));
      break;
    }
    case info_kind::racecheck_summary: {
      auto open = h.find('(');
      if (open == std::string_view::npos) break;
      auto inner = h.substr(open + 1);
      r.racecheck_errors = parse_count(inner.substr(0, inner.find(' ')));
      auto comma = inner.find(", ");
      if (comma != std::string_view::npos) r.racecheck_warnings = parse_count(inner.substr(comma + 2, inner.find(' ', comma + 2) - comma - 2));
      break;
    }
    case info_kind::target_error: r.target_returned_error = true; break;
    case info_kind::other_info: break;
  }
}

}  // namespace

sanitizer_report parse_sanitizer_output(std::string_view text) {
  sanitizer_report r;
  bool banner = false;
  block current;
  for (std::string_view line : split_lines(text)) {
    if (!starts_with(line, k_prefix)) continue;  // the program's own output
    std::string_view body = line.substr(k_prefix.size());
    if (trim(body).empty()) { finish_block(current, r); continue; }
    bool headline = body.size() >= 2 && body[0] == ' ' && body[1] != ' ' && body[1] != '\t';
    if (!headline) {
      if (!current.headline.empty()) current.lines.emplace_back(line);
      continue;
    }
    finish_block(current, r);
    std::string_view h = trim(body);
    bool info = false;
    for (const auto& rule : k_info_rules)
      if (starts_with(h, rule.prefix)) { read_info(rule.kind, h, r, banner); info = true; break; }
    if (!info) current = block{std::string(h), {std::string(line)}};
  }
  finish_block(current, r);
  if (!banner && r.findings.empty() && r.tool_errors.empty())
    r.tool_errors.push_back("no '========= COMPUTE-SANITIZER' banner: the sanitizer did not run");
  r.state = !r.findings.empty() ? sanitizer_state::findings
            : !r.tool_errors.empty() ? sanitizer_state::tool_error : sanitizer_state::clean;
  auto seen = static_cast<int64_t>(r.findings.size()) + r.filtered_blocks;
  if (!r.error_summary && !r.racecheck_errors)
    r.note = "no ERROR SUMMARY or RACECHECK SUMMARY line (output cut short?)";
  else if (r.error_summary && *r.error_summary != seen)
    r.note = fmt::format("ERROR SUMMARY says {} errors; {} report blocks were read", *r.error_summary, seen);
  return r;
}

std::string sanitizer_report::first_fault_text() const {
  if (findings.empty()) return "";
  std::string out;
  for (const auto& l : findings.front().lines) {
    std::string_view d = trim(std::string_view(l).substr(std::min(l.size(), k_prefix.size())));
    if (starts_with(d, "Saved host backtrace") || starts_with(d, "Host Frame:")) continue;
    out += l + "\n";
  }
  return out;
}

namespace {

ordered_json triple_json(const std::optional<std::array<int, 3>>& t) {
  return t ? ordered_json::array({(*t)[0], (*t)[1], (*t)[2]}) : ordered_json();
}

template <typename T>
ordered_json optional_json(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json();
}

}  // namespace

ordered_json to_json(const sanitizer_report& r) {
  ordered_json findings = ordered_json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"category", finding_category_name(f.category)}, {"kind", f.kind}, {"kernel", f.kernel},
                        {"pc_offset", f.pc_offset}, {"source_file", f.source_file}, {"source_line", f.source_line},
                        {"thread", triple_json(f.thread)}, {"block", triple_json(f.block)}, {"address", f.address},
                        {"allocation", f.allocation}, {"hazards", f.hazards}});
  return {{"state", sanitizer_state_name(r.state)},
          {"findings", std::move(findings)},
          {"tool_errors", r.tool_errors},
          {"filtered_blocks", r.filtered_blocks},
          {"error_summary", optional_json(r.error_summary)},
          {"racecheck_errors", optional_json(r.racecheck_errors)},
          {"racecheck_warnings", optional_json(r.racecheck_warnings)},
          {"target_returned_error", r.target_returned_error},
          {"note", r.note}};
}

}  // namespace ptxbench::measure
