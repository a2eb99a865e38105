#include "supervision/pairs_reader.h"

#include <fmt/format.h>

#include "adapt/pairs.h"
#include "core/file_io.h"
#include "core/sha256.h"

namespace ptxbench::supervision {
namespace fs = std::filesystem;

result<pairs_input> read_pairs(const fs::path& path) {
  std::error_code ec;
  fs::path dir = fs::is_directory(path, ec) ? path : path.parent_path();
  if (dir.empty()) dir = ".";
  auto rows = adapt::load_pairs(dir);
  if (!rows) return rows.err();
  auto manifest_text = read_text_file(dir / "manifest.json", 256u << 20);  // load_pairs has read it: present
  if (!manifest_text) return manifest_text.err();
  pairs_input in;
  in.dir = dir;
  in.manifest_sha256 = sha256_hex(*manifest_text);
  for (const auto& row : *rows) {
    const auto& j = row.json;
    const auto& w = j["wrong"];
    const auto& c = j["correct"];
    repair_pair p;
    p.key = row.id;
    p.source.task = row.task;
    p.source.variant = row.variant;
    p.source.label = row.label;
    p.source.turn = row.wrong.turn;
    fs::path traj(row.wrong.trajectory);
    p.source.trajectory = traj.stem().string();
    // RUN_DIR/trajectories/<id>.json: the run is the folder above trajectories/.
    p.source.run = traj.parent_path().filename() == "trajectories" ? traj.parent_path().parent_path().string() : "";
    p.fixed_speedup = row.correct.speedup;
    if (c.contains("target_correct") && c["target_correct"].is_boolean()) p.fixed_target_correct = row.correct.target_correct;
    p.wrong_kernel = row.wrong.kernel;
    p.feedback = row.wrong.feedback;
    p.fixed_kernel = row.correct.kernel;
    // load_pairs checked each file against the sha256 its line records: those are the hashes.
    p.wrong_sha256 = w.value("kernel_sha256", "");
    p.feedback_sha256 = w.value("feedback_sha256", "");
    p.fixed_sha256 = c.value("kernel_sha256", "");
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
    in.task_prompts.push_back(row.task_prompt);
  }
  return in;
}

}  // namespace ptxbench::supervision
