#include "note_fixtures.h"

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/sha256.h"

namespace ptxbench::testing {

ordered_json note_object(const std::vector<std::string>& instructions, const std::string& summary) {
  ordered_json list = ordered_json::array();
  for (const auto& i : instructions)
    list.push_back({{"instruction", i},
                    {"shape_context", "64x128 bf16 tiles, K-major"},
                    {"correct_example", "wgmma_fence();\nwgmma(...);\nwgmma_commit();"},
                    {"wrong_example", "wgmma(...);"},
                    {"operand_contract", "descriptors in 64-bit registers; accumulators in 64 f32 registers"},
                    {"required_sequence", {"wgmma.fence", "wgmma.mma_async", "wgmma.commit_group", "wgmma.wait_group"}},
                    {"diagnostics", "wrong values in every tile"},
                    {"do_not_do", {"issue wgmma before the fence"}}});
  return {{"summary", summary}, {"instruction_notes", list}, {"tags", {"wgmma", "compile_error"}}};
}

supervision::repair_note make_test_note(const note_spec& s) {
  supervision::repair_pair p;
  p.key = s.key;
  p.source = {"runs/src", s.task, "base", s.trajectory, 2, s.label};
  p.wrong_kernel = s.wrong_kernel;
  p.feedback = "Evaluation FAILED:\nerror: something";
  p.fixed_kernel = s.fixed_kernel;
  p.wrong_sha256 = sha256_hex(p.wrong_kernel);
  p.feedback_sha256 = sha256_hex(p.feedback);
  p.fixed_sha256 = sha256_hex(p.fixed_kernel);
  p.fixed_speedup = s.fixed_speedup;
  p.fixed_target_correct = true;
  p.origin = {{"id", s.key}};
  auto n = supervision::make_note(p, note_object(s.instructions, "Summary of " + s.key + "."),
                                  {{"model", "scripted"}, {"attempts", 1}});
  EXPECT_TRUE(n) << n.err().message;
  return *n;
}

std::filesystem::path write_notes_file(const std::filesystem::path& file, const std::vector<supervision::repair_note>& notes) {
  std::string text;
  for (const auto& n : notes) text += supervision::to_json(n).dump() + "\n";
  EXPECT_TRUE(write_file_atomic(file, text));
  return file;
}

void write_pairs_dir(const std::filesystem::path& dir, const std::vector<pair_spec>& pairs) {
  std::string lines;
  ordered_json files = ordered_json::object();
  auto put = [&](const std::string& rel, const std::string& text) {
    EXPECT_TRUE(write_file_atomic(dir / rel, text));
    files[rel] = sha256_hex(text);
    return sha256_hex(text);
  };
  // Prompts are stored once per content under their sha256, as `ptxbench fixit pairs` does.
  const std::string prompt = "Write a GEMM kernel.\nTask:\n{...}\n";
  std::string prompt_rel = "prompts/" + sha256_hex(prompt) + ".txt";
  put(prompt_rel, prompt);
  for (const auto& p : pairs) {
    std::string base = "files/" + p.id + "/";
    ordered_json line = {
        {"id", p.id}, {"task", p.task}, {"target", "h200"}, {"arch", "sm_90a"}, {"variant", "base"},
        {"error_type", "compile"}, {"label", "compile_error"}, {"system_prompt_file", prompt_rel},
        {"task_prompt_file", prompt_rel},
        {"wrong", {{"mined_id", p.id}, {"model", "student"},
                   {"trajectory", "/abs/runs/student/trajectories/" + p.trajectory_stem + ".json"}, {"turn", p.turn},
                   {"kernel_file", base + "wrong.cu"}, {"kernel_sha256", put(base + "wrong.cu", p.wrong)},
                   {"log_file", base + "wrong_log.txt"}, {"log_sha256", put(base + "wrong_log.txt", p.feedback)},
                   {"reply_file", base + "wrong_reply.md"}, {"reply_sha256", put(base + "wrong_reply.md", "```cuda\n" + p.wrong + "```\n")},
                   {"feedback_file", base + "wrong_feedback.txt"},
                   {"feedback_sha256", put(base + "wrong_feedback.txt", "<returncode>1</returncode>\n<output>\n" + p.feedback + "</output>")}}},
        {"correct", {{"model", "teacher"}, {"trajectory", "/abs/repairs/trajectories/" + p.id + ".json"}, {"turn", 1},
                     {"kernel_file", base + "correct.cu"}, {"kernel_sha256", put(base + "correct.cu", p.correct)},
                     {"reply_file", base + "correct_reply.md"}, {"reply_sha256", put(base + "correct_reply.md", p.correct)},
                     {"verdict_file", base + "correct_verdict.json"}, {"verdict_sha256", put(base + "correct_verdict.json", "{}")},
                     {"label", "passed"}, {"target_correct", true}, {"target_verdict", "executed"}, {"speedup", 0.41},
                     {"dynamic_counts", nullptr}}}};
    lines += line.dump() + "\n";
  }
  files["pairs.jsonl"] = sha256_hex(lines);
  EXPECT_TRUE(write_file_atomic(dir / "pairs.jsonl", lines));
  ordered_json manifest = {{"format", "ptxbench.fixit-pairs/1"}, {"counts", {{"pairs", pairs.size()}}}, {"files", files}};
  EXPECT_TRUE(write_file_atomic(dir / "manifest.json", manifest.dump(2)));
}

}  // namespace ptxbench::testing
