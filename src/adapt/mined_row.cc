#include "adapt/mined_row.h"

#include <fmt/format.h>

#include "adapt/staged_dir.h"
#include "core/sha256.h"
#include "core/jsonl_file.h"

namespace ptxbench::adapt {

std::string mined_row::stratum() const { return fmt::format("{}/turn{}", error_type_name(type), turn); }

std::string mined_row::stratum_sort() const {
  return upstream_error_label(type) + "\x1f" + std::to_string(turn);
}

std::string file_safe(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out;
}

ordered_json mined_row_json(const mined_row& r, const mined_files& f) {
  return {{"id", r.id},
          {"stratum", r.stratum()},
          {"error_type", error_type_name(r.type)},
          {"label", std::string(outcome_name(r.label))},
          {"task", r.task},
          {"target", r.target},
          {"arch", r.arch},
          {"variant", r.variant},
          {"model", r.model},
          {"run_dir", r.run_dir},
          {"trajectory", r.trajectory},
          {"trajectory_index", r.trajectory_index},
          {"turn", r.turn},
          {"verdict_message", r.verdict_message},
          {"system_prompt_file", f.system_prompt_file},
          {"task_prompt_file", f.task_prompt_file},
          {"kernel_file", f.kernel_file},
          {"kernel_sha256", f.kernel_sha256},
          {"log_file", f.log_file},
          {"log_sha256", f.log_sha256},
          {"reply_file", f.reply_file},
          {"reply_sha256", f.reply_sha256},
          {"feedback_file", f.feedback_file},
          {"feedback_sha256", f.feedback_sha256}};
}

result<std::vector<mined_row>> load_mined(const std::filesystem::path& dir) {
  const std::string rows_file = "mined.jsonl";
  auto staged = read_staged_rows(dir, k_mined_format, "`ptxbench fixit mine`", rows_file);
  if (!staged) return staged.err();
  std::vector<mined_row> rows;
  std::size_t n = 0;
  for (const auto& j : staged->rows) {
    ++n;
    json_errors errs;
    std::string where = fmt::format("{}:{}", (dir / rows_file).string(), n);
    mined_row r;
    r.id = get_string(j, "id", "", errs).value_or("");
    r.task = get_string(j, "task", "", errs).value_or("");
    r.target = get_string(j, "target", "", errs).value_or("");
    r.arch = get_string(j, "arch", "", errs).value_or("");
    r.variant = get_string(j, "variant", "", errs).value_or("");
    r.model = get_string(j, "model", "", errs, false, false).value_or("");
    r.run_dir = get_string(j, "run_dir", "", errs).value_or("");
    r.trajectory = get_string(j, "trajectory", "", errs).value_or("");
    r.trajectory_index = static_cast<int>(get_int(j, "trajectory_index", "", errs).value_or(0));
    r.turn = static_cast<int>(get_int(j, "turn", "", errs).value_or(0));
    r.verdict_message = get_string(j, "verdict_message", "", errs, false, false).value_or("");
    auto label = get_string(j, "label", "", errs);
    auto type = get_string(j, "error_type", "", errs);
    if (!errs.empty()) return errs.to_error().with_context(where);
    auto parsed = parse_outcome(*label);
    auto parsed_type = parse_error_type(*type);
    if (!parsed || !parsed_type || error_type_of(*parsed) != parsed_type)
      return make_error(fmt::format("{}: label '{}' with error_type '{}' is not a mined failure", where, *label, *type));
    r.label = *parsed;
    r.type = *parsed_type;
    auto file = [&](const char* key, const char* hash_key, std::string& into) -> status {
      auto text = read_listed_file(dir, j, "", key, hash_key, fmt::format("row {}", r.id), where, errs);
      if (!text) return text.err();
      into = std::move(*text);
      return ok();
    };
    for (auto st : {file("system_prompt_file", nullptr, r.system_prompt), file("task_prompt_file", nullptr, r.task_prompt),
                    file("kernel_file", "kernel_sha256", r.kernel), file("log_file", "log_sha256", r.error_log),
                    file("reply_file", "reply_sha256", r.reply), file("feedback_file", "feedback_sha256", r.feedback)})
      if (!st) return st.err();
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return make_error(fmt::format("{}: no mined rows", (dir / rows_file).string()));
  return rows;
}

}  // namespace ptxbench::adapt
