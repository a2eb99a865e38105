#include "supervision/repair_note.h"

#include <set>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "core/jsonl_file.h"
#include "supervision/note_schema.h"

namespace ptxbench::supervision {
namespace {

std::vector<std::string> strings(const ordered_json& a) {
  std::vector<std::string> out;
  for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

ordered_json optional_json(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }
ordered_json optional_json(const std::optional<bool>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

// The format of the file the text came from, for a message that says what was given instead.
std::string describe_format(const ordered_json& j) {
  if (!j.is_object()) return fmt::format("a JSON {}", json_type_name(j));
  if (j.contains("format") && j["format"].is_string()) return fmt::format("format '{}'", j["format"].get<std::string>());
  if (j.contains("messages")) return "a chat record or trajectory";
  return "an object without a \"format\" field";
}

}  // namespace

result<repair_note> make_note(const repair_pair& pair, const ordered_json& obj, ordered_json teacher) {
  if (auto st = repair_note_schema().validate(obj); !st) return st.err();
  repair_note n;
  n.pair = pair;
  n.note = obj;
  n.teacher = std::move(teacher);
  n.summary = obj["summary"].get<std::string>();
  for (const auto& i : obj["instruction_notes"])
    n.instructions.push_back({i["instruction"].get<std::string>(), i["shape_context"].get<std::string>(),
                              i["correct_example"].get<std::string>(), i["wrong_example"].get<std::string>(),
                              i["operand_contract"].get<std::string>(), strings(i["required_sequence"]),
                              i["diagnostics"].get<std::string>(), strings(i["do_not_do"])});
  n.tags = strings(obj["tags"]);
  return n;
}

ordered_json to_json(const repair_note& n) {
  const auto& p = n.pair;
  return {{"format", k_note_format},
          {"key", p.key},
          {"source", {{"run", p.source.run}, {"task", p.source.task}, {"variant", p.source.variant},
                      {"trajectory", p.source.trajectory}, {"turn", p.source.turn}, {"label", p.source.label}}},
          {"pair", {{"wrong_kernel_sha256", p.wrong_sha256}, {"feedback_sha256", p.feedback_sha256},
                    {"fixed_kernel_sha256", p.fixed_sha256}, {"fixed_speedup", optional_json(p.fixed_speedup)},
                    {"fixed_target_correct", optional_json(p.fixed_target_correct)}, {"origin", p.origin}}},
          {"teacher", n.teacher},
          {"note", n.note},
          {"wrong_kernel", p.wrong_kernel},
          {"feedback", p.feedback},
          {"fixed_kernel", p.fixed_kernel}};
}

result<repair_note> note_from_json(const ordered_json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("format") || j["format"] != k_note_format)
    return make_error(fmt::format("{}: not a repair note: {} (expected \"format\": \"{}\"; a pairs file is turned into "
                                  "notes by `ptxbench notes collect`)",
                                  where, describe_format(j), k_note_format));
  json_errors errs;
  reject_unknown_keys(j, {"format", "key", "source", "pair", "teacher", "note", "wrong_kernel", "feedback", "fixed_kernel"},
                      "", errs);
  repair_pair p;
  p.key = get_string(j, "key", "", errs).value_or("");
  if (j.contains("source") && expect_object(j["source"], "source", errs)) {
    const auto& s = j["source"];
    p.source.run = get_string(s, "run", "source", errs, true, false).value_or("");
    p.source.task = get_string(s, "task", "source", errs).value_or("");
    p.source.variant = get_string(s, "variant", "source", errs, true, false).value_or("");
    p.source.trajectory = get_string(s, "trajectory", "source", errs, true, false).value_or("");
    p.source.turn = static_cast<int>(get_int(s, "turn", "source", errs).value_or(-1));
    p.source.label = get_string(s, "label", "source", errs, true, false).value_or("");
  } else if (!j.contains("source")) {
    errs.add("source", "missing required field");
  }
  if (j.contains("pair") && expect_object(j["pair"], "pair", errs)) {
    const auto& q = j["pair"];
    p.wrong_sha256 = get_string(q, "wrong_kernel_sha256", "pair", errs).value_or("");
    p.feedback_sha256 = get_string(q, "feedback_sha256", "pair", errs).value_or("");
    p.fixed_sha256 = get_string(q, "fixed_kernel_sha256", "pair", errs).value_or("");
    p.fixed_speedup = get_number(q, "fixed_speedup", "pair", errs, false);
    p.fixed_target_correct = get_bool(q, "fixed_target_correct", "pair", errs, false);
    if (q.contains("origin")) p.origin = q["origin"];
  } else if (!j.contains("pair")) {
    errs.add("pair", "missing required field");
  }
  p.wrong_kernel = get_string(j, "wrong_kernel", "", errs).value_or("");
  p.feedback = get_string(j, "feedback", "", errs, true, false).value_or("");
  p.fixed_kernel = get_string(j, "fixed_kernel", "", errs).value_or("");
  if (!j.contains("note")) errs.add("note", "missing required field");
  if (!errs.empty()) return errs.to_error().with_context(where);
  auto check = [&](const std::string& text, const std::string& sha, const char* what) -> status {
    if (sha256_hex(text) != sha)
      return make_error(fmt::format("{}: pair.{}_sha256 does not match {} (the file was edited or damaged)", where, what, what));
    return ok();
  };
  if (auto st = check(p.wrong_kernel, p.wrong_sha256, "wrong_kernel"); !st) return st.err();
  if (auto st = check(p.feedback, p.feedback_sha256, "feedback"); !st) return st.err();
  if (auto st = check(p.fixed_kernel, p.fixed_sha256, "fixed_kernel"); !st) return st.err();
  ordered_json teacher = j.contains("teacher") ? j["teacher"] : ordered_json::object();
  auto n = make_note(p, j["note"], std::move(teacher));
  if (!n) return n.err().with_context(where + ": note");
  return n;
}

result<note_set> read_note_set(const std::filesystem::path& file) {
  std::error_code ec;
  // The usual mix-up: the Fixit pairs directory the notes are collected from, given in their place.
  if (std::filesystem::is_directory(file, ec) && std::filesystem::exists(file / "pairs.jsonl", ec))
    return make_error(fmt::format("{}: a Fixit pairs directory, not a notes file; turn it into notes with `ptxbench "
                                  "notes collect {} --model TEACHER --out NOTES.jsonl`",
                                  file.string(), file.string()));
  auto contents = read_jsonl(file, k_max_notes_file_bytes);
  if (!contents) return contents.err();
  if (contents->torn_tail) {
    // A last line without its newline: a complete JSON value (a file written by another tool) is read
    // like any line; half a record (a collection killed mid-append) must be finished first.
    auto last = parse_json(contents->tail, "tail");
    if (!last)
      return make_error(fmt::format("{}: the last line is incomplete (a note collection was interrupted); run the same "
                                    "`ptxbench notes collect` command again to finish the file",
                                    file.string()));
    contents->records.push_back({std::move(*last), static_cast<int>(contents->records.size()) + 1});
  }
  note_set set;
  set.file = file;
  auto bytes = read_file(file, k_max_notes_file_bytes);
  if (!bytes) return bytes.err();
  set.sha256 = sha256_hex(*bytes);
  std::set<std::string> keys;
  for (const auto& r : contents->records) {
    std::string where = fmt::format("{}:{}", file.string(), r.line);
    auto n = note_from_json(r.value, where);
    if (!n) return n.err();
    if (!keys.insert(n->pair.key).second) return make_error(fmt::format("{}: key '{}' appears twice", where, n->pair.key));
    set.notes.push_back(std::move(*n));
  }
  if (set.notes.empty()) return make_error(fmt::format("{}: no notes", file.string()));
  return set;
}

}  // namespace ptxbench::supervision
