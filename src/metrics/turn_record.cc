#include "metrics/turn_record.h"

#include <cmath>

#include <fmt/format.h>

#include "core/csv.h"

namespace ptxbench::metrics {
namespace {

std::string counts_text(const std::optional<family_counts>& c) {
  if (!c) return "";
  std::string out;
  for (const auto& [family, n] : *c) {
    if (!out.empty()) out += ';';
    out += family + "=" + std::to_string(n);
  }
  return out;
}

// Appends a JSON string literal. Inputs were checked as UTF-8 when read, so only quotes, backslashes
// and control characters need escaping.
void put_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') { out += '\\'; out += c; }
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else out += c;
  }
  out += '"';
}

void put_key(std::string& out, std::string_view key) {
  if (out.back() != '{') out += ',';
  put_string(out, key);
  out += ':';
}

void put_text(std::string& out, std::string_view key, std::string_view value, bool empty_is_null = false) {
  put_key(out, key);
  if (empty_is_null && value.empty()) out += "null";
  else put_string(out, value);
}

template <typename T>
void put_number(std::string& out, std::string_view key, const std::optional<T>& v) {
  put_key(out, key);
  if (v && std::isfinite(static_cast<double>(*v))) out += fmt::format("{}", *v);
  else out += "null";
}

void put_counts(std::string& out, std::string_view key, const std::optional<family_counts>& c) {
  put_key(out, key);
  if (!c) { out += "null"; return; }
  out += '{';
  for (const auto& [family, n] : *c) {
    if (out.back() != '{') out += ',';
    put_string(out, family);
    out += fmt::format(":{}", n);
  }
  out += '}';
}

}  // namespace

std::string records_to_csv(const std::vector<turn_record>& records) {
  csv_builder csv({"model", "target", "arch", "language", "definition", "exp_dir", "variant", "trajectory", "turn", "label",
                   "source_label", "correct", "target_correct", "speedup", "target_verdict", "arch_tag",
                   "static_counts", "dynamic_counts", "reasoning_tokens", "completion_tokens", "latency_s",
                   "cost_usd", "coverage", "arm"});
  for (const auto& r : records) {
    csv.cell(r.model).cell(r.target).cell(r.arch).cell(r.language).cell(r.definition).cell(r.exp_dir).cell(r.variant);
    csv.cell(r.trajectory).cell(r.turn).cell(outcome_name(r.label)).cell(r.source_label).cell(r.correct());
    csv.cell(r.target_correct).cell(r.speedup).cell(r.target_verdict).cell(r.arch_tag);
    csv.cell(counts_text(r.static_counts)).cell(counts_text(r.dynamic_counts));
    csv.cell(r.reasoning_tokens).cell(r.completion_tokens).cell(r.latency_s).cell(r.cost_usd).cell(r.coverage).cell(r.arm).end_row();
  }
  return csv.text();
}

}  // namespace ptxbench::metrics

namespace ptxbench::metrics {

std::string records_to_json_text(const std::vector<turn_record>& records) {
  std::string out = "[\n";
  out.reserve(records.size() * 480);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    out += '{';
    put_text(out, "model", r.model);
    put_text(out, "target", r.target, true);
    put_text(out, "arch", r.arch);
    put_text(out, "language", r.language);
    put_text(out, "definition", r.definition);
    put_text(out, "exp_dir", r.exp_dir);
    put_text(out, "variant", r.variant, true);
    put_text(out, "trajectory", r.trajectory);
    put_number(out, "turn", std::optional<int>(r.turn));
    put_text(out, "label", outcome_name(r.label));
    put_text(out, "source_label", r.source_label);
    put_key(out, "correct");
    out += r.correct() ? "true" : "false";
    put_key(out, "target_correct");
    out += r.target_correct ? "true" : "false";
    put_number(out, "speedup", r.speedup);
    put_text(out, "target_verdict", r.target_verdict, true);
    put_text(out, "arch_tag", r.arch_tag, true);
    put_counts(out, "static_counts", r.static_counts);
    put_counts(out, "dynamic_counts", r.dynamic_counts);
    put_number(out, "reasoning_tokens", r.reasoning_tokens);
    put_number(out, "completion_tokens", r.completion_tokens);
    put_number(out, "latency_s", r.latency_s);
    put_number(out, "cost_usd", r.cost_usd);
    put_number(out, "coverage", r.coverage);
    put_text(out, "arm", r.arm);
    out += i + 1 < records.size() ? "},\n" : "}\n";
  }
  return out + "]\n";
}

}  // namespace ptxbench::metrics
