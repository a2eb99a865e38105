// Every recipe s0-s6 (configs/recipes) end to end on the CPU: student (or teacher) runs -> the
// recipe's stages -> an SFT file, with scripted teachers and the fake evaluator, one test per recipe.
// The runs are chosen so each recipe's own filters show: run A (mha_with_lse_d128, variant
// fa3_fwd_v0, six failed turns), run B (mha_with_lse_d64, fa3_fwd_v0, two), run C (mha_with_lse_d128,
// ablation_params, one, with a <think> block before its kernel). s1 takes the d128 tasks and turns
// 0-4 (A's first five, C), s2 every turn (A, C), s3 the eight tasks (A, B, C), s4-s6 the fa3 variants
// and turns 0-4 (A's first five, B), s5 and s6 with upstream's cap of 33 per task (which stops unless
// underfilled tasks are allowed). Each test checks the counts, the rows, and that the report puts the
// paper's counts beside ours with the reasons they differ. Rows are measured with the tiny test
// tokenizer, so the recipes' 65,536-token limit is raised with --max-tokens (and the report says so).
#include <mutex>

#include <gtest/gtest.h>

#include "adapt_cli.h"
#include "agent/fake_llm_server.h"
#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::adapt {
namespace {

using namespace ptxbench::adapt::testing;
using ptxbench::testing::fake_llm_server;
namespace fs = std::filesystem;

const std::string k_think_reply = "<think>I plan the kernel before I write it.</think>\n";

struct shared_runs {
  fs::path dir, a, b, c, teacher;
  std::string error;
  ~shared_runs() {
    std::error_code ec;
    if (!dir.empty() && error.empty()) fs::remove_all(dir, ec);
  }
};

class Recipes : public AdaptCli {
 protected:
  // The student and teacher runs every recipe test reads, made once.
  const shared_runs& runs() {
    static shared_runs r;
    static std::once_flag once;
    std::call_once(once, [this] {
      r.dir = ptxbench::testing::make_temp_dir("recipe-runs");
      auto run = [&](const std::vector<std::string>& replies, const std::string& task, const std::string& variant,
                     int trajectories, const fs::path& out) {
        fake_llm_server s;
        if (trajectories == 1)
          for (std::size_t k = 0; k < replies.size(); ++k) s.set_reply(static_cast<int>(k), replies[k]);
        else
          s.add_rule("", replies, 0);
        auto p = cli({"run", "--model", "openai:scripted", "--base-url", s.base_url(), "--tasks", task, "--variants",
                      variant, "--trajectories", std::to_string(trajectories), "--turns",
                      std::to_string(trajectories == 1 ? replies.size() : 1), "--out", out.string(), "--evaluator",
                      "fake", "--parallel", "1", "-q"});
        if (!p.succeeded()) r.error += describe_exit(p) + ": " + p.err;
      };
      r.a = r.dir / "student-a";
      run({kernel("a0", "FAKE_COMPILE_ERROR"), kernel("a1", "FAKE_WRONG"), kernel("a2", "FAKE_RUNTIME_ERROR"),
           kernel("a3", "FAKE_TIMEOUT"), kernel("a4", "FAKE_COMPILE_ERROR"), kernel("a5", "FAKE_WRONG")},
          "mha_with_lse_d128", "fa3_fwd_v0", 1, r.a);
      r.b = r.dir / "student-b";
      run({kernel("b0", "FAKE_COMPILE_ERROR"), kernel("b1", "FAKE_WRONG")}, "mha_with_lse_d64", "fa3_fwd_v0", 1, r.b);
      r.c = r.dir / "student-c";
      run({k_think_reply + kernel("c0", "FAKE_COMPILE_ERROR")}, "mha_with_lse_d128", "ablation_params", 1, r.c);
      r.teacher = r.dir / "teacher";
      run({kernel("kg-a", "FAKE_SPEEDUP=0.5", true), kernel("kg-b", "FAKE_SPEEDUP=0.7", true), kernel("kg-plain", "")},
          "mha_with_lse_d64", "fa3_fwd_v0", 3, r.teacher);
    });
    return r;
  }

  void SetUp() override {
    AdaptCli::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(runs().error.empty()) << runs().error;
    m_teacher.set_default_reply(kernel("fixed", "FAKE_SPEEDUP=0.3", true));
    m_reasoner.set_default_reply(rationale(16));  // 3,000+ characters: over every recipe's minimum
    ASSERT_TRUE(write_file_atomic(m_dir / "models.json", models_file({{"scripted-teacher", m_teacher.base_url()},
                                                                       {"scripted-reasoner", m_reasoner.base_url()}})
                                                             .dump()));
  }

  std::vector<std::string> args(const std::string& name, const std::vector<fs::path>& run_dirs) {
    std::vector<std::string> a = {"sft", "recipe", name, "--out", (m_dir / name).string(), "--repair-model",
                                  "scripted-teacher", "--reason-model", "scripted-reasoner", "--models-file",
                                  (m_dir / "models.json").string(), "--tokenizer", tiny_tokenizer().string(),
                                  "--max-tokens", "4000000", "--evaluator", "fake", "--parallel", "2", "-q", "--runs"};
    for (const auto& r : run_dirs) a.push_back(r.string());
    return a;
  }

  // Runs the recipe; checks its stdout table and report; returns the report.
  json run_recipe(const std::string& name, const std::vector<fs::path>& run_dirs, int paper_rows,
                  std::vector<std::string> extra = {}) {
    auto a = args(name, run_dirs);
    a.insert(a.end(), extra.begin(), extra.end());
    auto r = cli(a, 600);
    EXPECT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
    EXPECT_NE(r.out.find("recipe " + name + " ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(std::to_string(paper_rows)), std::string::npos) << r.out;  // the paper's count beside ours
    json report = read_json(m_dir / name / "recipe_report.json");
    EXPECT_EQ(report["paper"]["rows"], paper_rows);
    // Every stage row pairs our count with the paper's; the SFT row cannot match on runs this small.
    json rows_stage;
    for (const auto& s : report["comparison"])
      if (s["stage"] == "SFT rows") rows_stage = s;
    EXPECT_EQ(rows_stage["paper"], paper_rows);
    EXPECT_EQ(rows_stage["matches"], false);
    std::string why = report["why_different"].dump();
    EXPECT_NE(why.find("trajectories of the recipe's tasks"), std::string::npos) << why;
    EXPECT_NE(why.find("reasoning teacher scripted-reasoner instead of the recipe's"), std::string::npos) << why;
    EXPECT_NE(why.find("evaluator fake"), std::string::npos) << why;
    EXPECT_NE(why.find("rows limited to 4000000 tokens instead of the recipe's 65536"), std::string::npos) << why;
    // The teacher was asked at upstream's sampling.
    for (const auto& body : m_reasoner.request_bodies()) {
      EXPECT_EQ(body["temperature"], 1.0);
      EXPECT_EQ(body["top_p"], 0.95);
    }
    return report;
  }

  // Checks the Fixit rows: five messages, only the last labelled, upstream's answer layout.
  void check_fixit_rows(const std::string& name, int expected) {
    auto rows = read_jsonl(m_dir / name / "sft" / "sft.jsonl");
    ASSERT_EQ(static_cast<int>(rows.size()), expected);
    for (const auto& row : rows) {
      const auto& m = row["messages"];
      ASSERT_EQ(m.size(), 5u);
      for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(m[i]["step_loss_mask"], i == 4 ? 1 : 0);
      std::string answer = m[4]["content"];
      EXPECT_EQ(answer.rfind("<think>\nI look at what the evaluator told me", 0), 0u) << answer.substr(0, 60);
      EXPECT_NE(answer.find("\n</think>\n\n```cpp\n#include <ptxbench/abi.h>\n// tag-fixed-"), std::string::npos);
      EXPECT_EQ(answer.substr(answer.size() - 4), "\n```");
      EXPECT_EQ(row["metadata"]["format"], "fixit");
    }
    json m = read_json(m_dir / name / "sft" / "manifest.json");
    EXPECT_EQ(m["token_count"]["chat_template"], "qwen3");  // the recipe's
    EXPECT_EQ(m["normalize_with_chat_template"], true);
    EXPECT_EQ(m["recipe"]["name"], name);
  }

  fake_llm_server m_teacher, m_reasoner;
};

TEST_F(Recipes, S0KernelGenFromTheTeachersTargetCorrectKernels) {
  json report = run_recipe("s0", {runs().teacher}, 494);
  EXPECT_EQ(report["counts"]["correct_turns"], 3);
  EXPECT_EQ(report["counts"]["kernels"], 2);  // require_target leaves the plain kernel out
  EXPECT_EQ(report["counts"]["rationales"], 2);
  EXPECT_EQ(report["counts"]["rows"], 2);
  EXPECT_EQ(report["paper"]["correct_kernel_turns"], 521);
  EXPECT_EQ(m_reasoner.requests(), 2);
  // The KernelGen teacher sees the pack, the task prompt and the kernel.
  for (const auto& body : m_reasoner.request_bodies())
    EXPECT_EQ(body["messages"][1]["content"].get<std::string>().rfind("# Base knowledge\n", 0), 0u);
  auto rows = read_jsonl(m_dir / "s0" / "sft" / "sft.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  auto reasoning = read_jsonl(m_dir / "s0" / "reasoning" / "reasoning.jsonl");
  for (const auto& row : rows) {
    const auto& m = row["messages"];
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[2]["step_loss_mask"], 1);
    EXPECT_EQ(m[1]["step_loss_mask"], 0);
    // <think>, the rationale, </think>, then the teacher's reply stripped; Qwen3's template writes the
    // reasoning block with a blank line after it (upstream's normalisation).
    std::string rationale_text;
    for (const auto& r : reasoning)
      if (r["id"] == row["id"]) rationale_text = r["rationale"];
    std::string reply = read(m_dir / "s0" / "kernels" / "files" / row["id"].get<std::string>() / "reply.md");
    EXPECT_EQ(m[2]["content"], "<think>\n" + rationale_text + "\n</think>\n\n" + reply.substr(0, reply.size() - 1));
  }
  // Without --tokenizer the export counts with cl100k and says it is a fallback (where its ranks are).
  if (auto ranks = cl100k_ranks()) {
    process_spec spec;
    spec.argv = {m_bin.string(), "sft", "export", (m_dir / "s0" / "reasoning").string(), "--format", "kernelgen",
                 "--out", (m_dir / "sft-cl100k").string()};
    spec.env_overrides = {{"PTXBENCH_ROOT", ptxbench::testing::repo_root().string()},
                          {"PTXBENCH_TIKTOKEN_RANKS", ranks->string()}};
    spec.timeout_s = 120;
    auto fb = run_process(spec);
    ASSERT_TRUE(fb.succeeded()) << fb.err;
    json fm = read_json(m_dir / "sft-cl100k" / "manifest.json");
    EXPECT_NE(fm["token_count"].dump().find("cl100k"), std::string::npos) << fm["token_count"];
    EXPECT_EQ(fm["token_count"]["exact"], false) << fm["token_count"];
  }
  // A second identical command finds everything done and asks nobody again.
  std::string before = read(m_dir / "s0" / "sft" / "sft.jsonl");
  auto again = cli(args("s0", {runs().teacher}));
  ASSERT_TRUE(again.succeeded()) << again.err;
  EXPECT_EQ(m_reasoner.requests(), 2);
  EXPECT_EQ(read(m_dir / "s0" / "sft" / "sft.jsonl"), before);
}

TEST_F(Recipes, S1TheFourD128TasksTurnsZeroToFour) {
  json report = run_recipe("s1", {runs().a, runs().b, runs().c}, 158);
  EXPECT_EQ(report["counts"]["mined"], 6);  // A's turns 0-4 and C; B's task is not one of s1's
  EXPECT_EQ(report["counts"]["pairs"], 6);
  EXPECT_EQ(report["counts"]["rows"], 6);
  EXPECT_NE(report["why_different"].dump().find("the runs cover 1 of the recipe's 4 tasks"), std::string::npos);
  EXPECT_NE(report["why_different"].dump().find("repair teacher scripted-teacher instead of the recipe's "
                                                 "gemini-3.1-pro-preview"), std::string::npos);
  check_fixit_rows("s1", 6);
  // Qwen3's template drops the reasoning of the earlier (wrong) assistant turn: C's <think> block is
  // gone from the row, as upstream's normalisation made it; --no-normalize-with-chat-template keeps it.
  bool saw_c = false;
  for (const auto& row : read_jsonl(m_dir / "s1" / "sft" / "sft.jsonl")) {
    std::string wrong = row["messages"][2]["content"];
    if (wrong.find("tag-c0-") == std::string::npos) continue;
    saw_c = true;
    EXPECT_EQ(wrong, kernel("c0", "FAKE_COMPILE_ERROR"));
  }
  EXPECT_TRUE(saw_c);
  auto raw = cli({"sft", "export", (m_dir / "s1" / "reasoning").string(), "--format", "fixit", "--tokenizer",
                  tiny_tokenizer().string(), "--chat-template", "qwen3", "--max-tokens", "4000000",
                  "--no-normalize-with-chat-template", "--out", (m_dir / "s1-raw").string()});
  ASSERT_TRUE(raw.succeeded()) << raw.err;
  bool kept = false;
  for (const auto& row : read_jsonl(m_dir / "s1-raw" / "sft.jsonl"))
    kept |= row["messages"][2]["content"] == k_think_reply + kernel("c0", "FAKE_COMPILE_ERROR");
  EXPECT_TRUE(kept);
}

TEST_F(Recipes, S2EverySourceTurn) {
  json report = run_recipe("s2", {runs().a, runs().b, runs().c}, 259);
  EXPECT_EQ(report["counts"]["mined"], 7);  // A's six turns (turn 5 too) and C
  EXPECT_EQ(report["counts"]["pairs"], 7);
  EXPECT_EQ(report["counts"]["rows"], 7);
  check_fixit_rows("s2", 7);
}

TEST_F(Recipes, S3TheEightMhaTasks) {
  json report = run_recipe("s3", {runs().a, runs().b, runs().c}, 406);
  EXPECT_EQ(report["counts"]["mined"], 9);  // A, B and C, every turn
  EXPECT_EQ(report["counts"]["rows"], 9);
  EXPECT_NE(report["why_different"].dump().find("the runs cover 2 of the recipe's 8 tasks"), std::string::npos);
  check_fixit_rows("s3", 9);
}

TEST_F(Recipes, S4TheFa3VariantsPostBalanced) {
  json report = run_recipe("s4", {runs().a, runs().b, runs().c}, 170);
  EXPECT_EQ(report["counts"]["mined"], 7);  // A's turns 0-4 and B; C's variant is not an fa3 one
  EXPECT_EQ(report["counts"]["pairs"], 7);  // under the post-balancing cap of 22
  json pm = read_json(m_dir / "s4" / "pairs" / "manifest.json");
  EXPECT_EQ(pm["options"]["cap_per_definition"], 22);
  check_fixit_rows("s4", 7);
}

TEST_F(Recipes, S5StopsBelowTheCapUnlessUnderfilledTasksAreAllowed) {
  auto a = args("s5", {runs().a, runs().b, runs().c});
  auto refused = cli(a);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("mha_with_lse_d128 has only 5 rows, need 33; lower --cap-per-definition or pass "
                             "--allow-underfilled-definitions"), std::string::npos)
      << refused.err;
  EXPECT_EQ(m_teacher.requests(), 0);
  fs::remove_all(m_dir / "s5");  // a new --out for the run with the flag (the record names the options)
  json report = run_recipe("s5", {runs().a, runs().b, runs().c}, 258, {"--allow-underfilled-definitions"});
  EXPECT_EQ(report["counts"]["mined"], 7);
  EXPECT_EQ(report["counts"]["pairs"], 7);
  EXPECT_EQ(report["counts"]["rows"], 7);
  EXPECT_EQ(report["paper"]["mined"], 264);
  EXPECT_EQ(report["paper"]["pairs"], 258);
  EXPECT_NE(report["why_different"].dump().find("--allow-underfilled-definitions: mha_with_lse_d128, mha_with_lse_d64 "
                                                 "had fewer mined rows than the cap 33"), std::string::npos)
      << report["why_different"];
  json mm = read_json(m_dir / "s5" / "mined" / "manifest.json");
  EXPECT_EQ(mm["options"]["cap_per_definition"], 33);
  EXPECT_EQ(mm["options"]["cap_rule"], "upstream");
  check_fixit_rows("s5", 7);
}

TEST_F(Recipes, S6IsS5WithTheStudentAsItsOwnReasoningTeacher) {
  json report = run_recipe("s6", {runs().a, runs().b, runs().c}, 258, {"--allow-underfilled-definitions"});
  EXPECT_EQ(report["counts"]["mined"], 7);
  EXPECT_EQ(report["counts"]["rows"], 7);
  EXPECT_NE(report["why_different"].dump().find("reasoning teacher scripted-reasoner instead of the recipe's "
                                                 "Qwen3.6-27B"), std::string::npos);
  json rm = read_json(m_dir / "s6" / "reasoning" / "manifest.json");
  EXPECT_EQ(rm["rules"]["max_attempts"], 20);
  check_fixit_rows("s6", 7);
}

}  // namespace
}  // namespace ptxbench::adapt
