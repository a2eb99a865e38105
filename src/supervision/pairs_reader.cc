#include "supervision/pairs_reader.h"

#include <set>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "supervision/jsonl_store.h"

namespace ptxbench::supervision {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_max_pairs_bytes = std::size_t{256} << 20;
constexpr std::size_t k_max_member_bytes = std::size_t{64} << 20;

// A file named by a pairs line: relative, inside the directory, present, with the stated sha256.
result<std::string> member(const fs::path& dir, const ordered_json& obj, const char* file_key, const char* sha_key,
                           const std::string& where) {
  json_errors errs;
  auto rel = get_string(obj, file_key, where, errs);
  auto sha = get_string(obj, sha_key, where, errs);
  if (!errs.empty()) return errs.to_error();
  fs::path p(*rel);
  if (p.is_absolute() || p.lexically_normal().string().rfind("..", 0) == 0)
    return make_error(fmt::format("{}.{}: '{}' is not a path inside the pairs directory", where, file_key, *rel));
  auto text = read_file(dir / p, k_max_member_bytes);
  if (!text) return text.err().with_context(where);
  if (sha256_hex(*text) != *sha)
    return make_error(fmt::format("{}: {} does not match {} (the pairs directory was changed after it was written)",
                                  where, *rel, sha_key));
  return text;
}

}  // namespace

result<pairs_input> read_pairs(const fs::path& path) {
  std::error_code ec;
  fs::path dir = fs::is_directory(path, ec) ? path : path.parent_path();
  if (dir.empty()) dir = ".";
  fs::path manifest_path = dir / "manifest.json";
  if (!fs::exists(manifest_path, ec))
    return make_error(fmt::format("{}: not a Fixit pairs directory (no manifest.json; `ptxbench fixit pairs` writes one)",
                                  path.string()));
  auto manifest_text = read_text_file(manifest_path, 64u << 20);
  if (!manifest_text) return manifest_text.err();
  auto manifest = parse_json(*manifest_text, manifest_path.string());
  if (!manifest) return manifest.err();
  if (!manifest->is_object() || manifest->value("format", "") != k_pairs_format)
    return make_error(fmt::format("{}: format is {}, expected \"{}\"", manifest_path.string(),
                                  manifest->is_object() && manifest->contains("format") ? (*manifest)["format"].dump()
                                                                                       : std::string("missing"),
                                  k_pairs_format));
  // The manifest names every file with its sha256; pairs.jsonl itself is checked here, the files
  // each line names are checked against the line below.
  if (manifest->contains("files") && (*manifest)["files"].is_object() && (*manifest)["files"].contains("pairs.jsonl")) {
    const auto& recorded = (*manifest)["files"]["pairs.jsonl"];
    auto text = read_file(dir / "pairs.jsonl", k_max_pairs_bytes);
    if (!text) return text.err();
    if (!recorded.is_string() || sha256_hex(*text) != recorded.get<std::string>())
      return make_error(fmt::format("{}: does not match the sha256 manifest.json records for it (the pairs directory "
                                    "was changed after it was written)", (dir / "pairs.jsonl").string()));
  }
  auto lines = read_jsonl(dir / "pairs.jsonl", k_max_pairs_bytes);
  if (!lines) return lines.err();
  if (lines->torn_tail) return make_error(fmt::format("{}: the last line is incomplete", (dir / "pairs.jsonl").string()));
  pairs_input in;
  in.dir = dir;
  in.manifest_sha256 = sha256_hex(*manifest_text);
  std::set<std::string> ids;
  for (const auto& rec : lines->records) {
    const auto& j = rec.value;
    std::string where = fmt::format("{}:{}", (dir / "pairs.jsonl").string(), rec.line);
    json_errors errs;
    if (!expect_object(j, "", errs)) return errs.to_error().with_context(where);
    repair_pair p;
    p.key = get_string(j, "id", "", errs).value_or("");
    p.source.task = get_string(j, "task", "", errs).value_or("");
    p.source.variant = get_string(j, "variant", "", errs, false, false).value_or("");
    p.source.label = get_string(j, "label", "", errs).value_or("");
    for (const char* side : {"wrong", "correct"})
      if (!j.contains(side)) errs.add(side, "missing required field");
      else expect_object(j[side], side, errs);
    if (!errs.empty()) return errs.to_error().with_context(where);
    if (!ids.insert(p.key).second) return make_error(fmt::format("{}: pair id '{}' appears twice", where, p.key));
    const auto& w = j["wrong"];
    const auto& c = j["correct"];
    std::string pw = where + ": pair " + p.key;
    auto trajectory = get_string(w, "trajectory", "wrong", errs);
    p.source.turn = static_cast<int>(get_int(w, "turn", "wrong", errs).value_or(-1));
    p.fixed_speedup = get_number(c, "speedup", "correct", errs, false);
    p.fixed_target_correct = get_bool(c, "target_correct", "correct", errs, false);
    if (!errs.empty()) return errs.to_error().with_context(pw);
    fs::path traj(*trajectory);
    p.source.trajectory = traj.stem().string();
    // RUN_DIR/trajectories/<id>.json: the run is the folder above trajectories/.
    p.source.run = traj.parent_path().filename() == "trajectories" ? traj.parent_path().parent_path().string() : "";
    auto wrong = member(dir, w, "kernel_file", "kernel_sha256", pw + ": wrong");
    if (!wrong) return wrong.err();
    auto feedback = member(dir, w, "feedback_file", "feedback_sha256", pw + ": wrong");
    if (!feedback) return feedback.err();
    auto fixed = member(dir, c, "kernel_file", "kernel_sha256", pw + ": correct");
    if (!fixed) return fixed.err();
    std::string task_prompt;
    if (j.contains("task_prompt_file") && j["task_prompt_file"].is_string()) {
      fs::path tp(j["task_prompt_file"].get<std::string>());
      if (tp.is_absolute() || tp.lexically_normal().string().rfind("..", 0) == 0)
        return make_error(fmt::format("{}.task_prompt_file: not a path inside the pairs directory", pw));
      auto text = read_file(dir / tp, k_max_member_bytes);
      if (!text) return text.err().with_context(pw);
      // Prompts are stored once per content as prompts/<sha256>.txt: the name is the hash.
      if (sha256_hex(*text) != tp.stem().string())
        return make_error(fmt::format("{}: {} does not match the sha256 its name gives (the pairs directory was "
                                      "changed after it was written)", pw, tp.string()));
      task_prompt = std::move(*text);
    }
    p.wrong_kernel = std::move(*wrong);
    p.feedback = std::move(*feedback);
    p.fixed_kernel = std::move(*fixed);
    p.wrong_sha256 = sha256_hex(p.wrong_kernel);
    p.feedback_sha256 = sha256_hex(p.feedback);
    p.fixed_sha256 = sha256_hex(p.fixed_kernel);
    ordered_json origin = {{"pairs_manifest_sha256", in.manifest_sha256}, {"id", p.key}};
    for (const char* k : {"target", "arch", "error_type"})
      if (j.contains(k)) origin[k] = j[k];
    ordered_json wo = ordered_json::object(), co = ordered_json::object();
    for (const char* k : {"mined_id", "model", "trajectory", "turn", "log_sha256", "reply_sha256"})
      if (w.contains(k)) wo[k] = w[k];
    for (const char* k : {"model", "trajectory", "turn", "label", "target_verdict", "verdict_sha256", "reply_sha256"})
      if (c.contains(k)) co[k] = c[k];
    origin["wrong"] = wo;
    origin["correct"] = co;
    p.origin = std::move(origin);
    in.pairs.push_back(std::move(p));
    in.task_prompts.push_back(std::move(task_prompt));
  }
  if (in.pairs.empty()) return make_error(fmt::format("{}: no pairs", (dir / "pairs.jsonl").string()));
  return in;
}

}  // namespace ptxbench::supervision
