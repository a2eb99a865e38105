// Each rule issue 28 brought to upstream's behaviour, with exact expectations: the repair prompt's
// layout, the reasoning teacher's prompt and sampling, how a rationale is read and accepted (and the
// stricter rules as options), lengths in characters, and the mining rules (shape and dtype failures
// skipped, replies that do not end with their fence skipped) through the CLI.
#include <set>

#include <gtest/gtest.h>

#include "adapt/rationale.h"
#include "adapt/reason.h"
#include "adapt/repair.h"
#include "adapt/sft_export.h"
#include "agent/model_config.h"
#include "adapt_cli.h"
#include "agent/fake_llm_server.h"
#include "core/json_check.h"
#include "suite/task.h"
#include "suite/task_view.h"
#include "test_support.h"

namespace ptxbench::adapt {
namespace {

using namespace ptxbench::adapt::testing;
using ptxbench::testing::fake_llm_server;
namespace fs = std::filesystem;

reason_item fixit_item() {
  reason_item item;
  item.id = "p0";
  item.kind = "fixit";
  item.task = "gemm_n7168_k5120";
  item.knowledge = "PACK: wgmma and TMA on sm_90a.";
  item.task_prompt = "Task:\n{...}\n\nKernel\n\n```cpp\n__global__ void wrong() {}\n```\nError Message\n\nerror: boom\n";
  item.wrong_kernel = "__global__ void wrong() {}\n";
  item.answer_kernel = "__global__ void fixed_kernel_with_a_long_line(int argument_number_one) {}\n";
  return item;
}

std::string words(std::size_t chars) { return std::string(chars, 'x'); }

TEST(RepairPrompt, IsLaidOutAsUpstreamsWithACppFence) {
  auto tasks = load_suite(ptxbench::testing::repo_root() / "suite");
  ASSERT_TRUE(tasks) << tasks.err().message;
  const task* t = tasks->find_task("gemm_n7168_k5120");
  ASSERT_NE(t, nullptr);
  // Trailing whitespace of the kernel and the log is dropped; nothing separates the fence from the
  // next heading or the log from the request.
  std::string prompt = repair_prompt(*t, "__global__ void k() {}\n\n", "error: identifier \"x\" is undefined\n\n");
  EXPECT_EQ(prompt, "Task:\n" + dump_pretty(task_view_json(*t)) +
                        "\n\nKernel\n\n```cpp\n__global__ void k() {}\n```\nError Message\n\nerror: identifier \"x\" is "
                        "undefined\nFix the CUDA kernel with the smallest change that makes it correct. The kernel "
                        "implements the PyTorch reference given in the task.\n\n");
}

TEST(RationalePrompt, TheTeacherSeesThePackTheRepairPromptAndTheFixedKernel) {
  auto item = fixit_item();
  rationale_rules rules;
  auto p = make_rationale_prompt(item, rules, {});
  EXPECT_NE(p.system.find("<my_reasoning>...</my_reasoning>"), std::string::npos);
  EXPECT_EQ(p.user.rfind("# What the expert was shown\n", 0), 0u);
  EXPECT_NE(p.user.find("## CUDA/PTX knowledge\nPACK: wgmma and TMA on sm_90a.\n\n## Task, wrong kernel and error message\n" +
                        item.task_prompt + "\n\n\n## The expert's kernel\n```cpp\n" + item.answer_kernel + "```\n\n\n## Your task\n"),
            std::string::npos)
      << p.user;
  EXPECT_NE(p.user.find("aim at about 40000 characters"), std::string::npos);
  EXPECT_NE(p.user.find("Small code patterns may be written inline"), std::string::npos);  // code is welcome
  // A retry asks the same question again unless the problems are to be named.
  EXPECT_EQ(make_rationale_prompt(item, rules, {"too_short: 12 characters, at least 2000"}).user, p.user);
  rules.name_problems = true;
  EXPECT_NE(make_rationale_prompt(item, rules, {"too_short: 12 characters, at least 2000"}).user.find("- too_short"),
            std::string::npos);
  // --no-code asks for none.
  rules.no_code = true;
  EXPECT_NE(make_rationale_prompt(item, rules, {}).user.find("Write no code blocks"), std::string::npos);
  // KernelGen: the pack, the first task prompt, the kernel.
  reason_item kg = item;
  kg.kind = "kernelgen";
  kg.task_prompt = "Write the GEMM.";
  auto k = make_rationale_prompt(kg, rationale_rules{}, {});
  EXPECT_EQ(k.user.rfind("# Base knowledge\nPACK: wgmma and TMA on sm_90a.\n\n# Task\nWrite the GEMM.\n\n# The expert's "
                         "kernel\n```cpp\n" + kg.answer_kernel + "```\n\n## Your task\n", 0),
            0u)
      << k.user;
}

TEST(RationaleCheck, ReadsTheReplyAsUpstreamDid) {
  auto item = fixit_item();
  rationale_rules rules;
  rules.min_chars = 10;
  // The first block, think blocks dropped, trimmed.
  auto c = check_rationale("<think>private</think>\n<my_reasoning>\n  first block  \n</my_reasoning> then "
                           "<my_reasoning>second</my_reasoning>", item, rules);
  ASSERT_TRUE(c.rationale) << c.problems[0];
  EXPECT_EQ(*c.rationale, "first block");
  // No block: the whole reply (without think blocks) is the rationale, as upstream's fallback.
  c = check_rationale("<think>x</think>  I reason about the kernel at length.  ", item, rules);
  ASSERT_TRUE(c.rationale);
  EXPECT_EQ(*c.rationale, "I reason about the kernel at length.");
  rules.require_block = true;  // the option refuses it
  c = check_rationale("I reason about the kernel at length.", item, rules);
  ASSERT_FALSE(c.rationale);
  EXPECT_EQ(problem_kind(c.problems.at(0)), "missing_block");
  rules.require_block = false;
  // An opening tag without its close stays in the text: forbidden (upstream's builder refused it).
  c = check_rationale("<my_reasoning> I start but never close the block properly.", item, rules);
  ASSERT_FALSE(c.rationale);
  EXPECT_EQ(c.problems.at(0), "forbidden_marker: contains '<my_reasoning>'");
  // With the editor (Fixit's default), the tags are left for it; other markers are still refused.
  rules.tags_left_to_editor = true;
  c = check_rationale("<my_reasoning> I start but never close the block properly.", item, rules);
  ASSERT_TRUE(c.rationale);
  EXPECT_TRUE(has_reasoning_tags(*c.rationale));
  c = check_rationale("<my_reasoning>I <think> about the block.</my_reasoning>", item, rules);
  EXPECT_EQ(c.problems.at(0), "forbidden_marker: contains '<think>'");
  rules.tags_left_to_editor = false;
  // Code is welcome by default, even the answer's lines; the options refuse it.
  std::string with_code = "<my_reasoning>I write\n```cpp\n" + item.answer_kernel + "```\nand go on.</my_reasoning>";
  EXPECT_TRUE(check_rationale(with_code, item, rules).rationale);
  rules.no_code = true;
  EXPECT_EQ(problem_kind(check_rationale(with_code, item, rules).problems.at(0)), "code_fence");
  rules.no_code = false;
  rules.max_quoted_lines = 0;
  EXPECT_EQ(problem_kind(check_rationale(with_code, item, rules).problems.at(0)), "quotes_answer");
}

TEST(EditorPrompt, AsksForTheSameReasoningWithoutTagsAndShortenedOnlyWhenOverTheBudget) {
  std::string text = "I look at the error first. <my_reasoning> Then the indexing.";
  auto tags = make_editor_prompt(text, {true, false}, 57, 60);
  EXPECT_NE(tags.system.find("first-person"), std::string::npos);
  EXPECT_NE(tags.user.find("Take out every <my_reasoning> and </my_reasoning>"), std::string::npos);
  EXPECT_NE(tags.user.find("do not condense"), std::string::npos);
  EXPECT_EQ(tags.user.find("Make it shorter"), std::string::npos);
  EXPECT_NE(tags.user.find("about 57 to 60 characters"), std::string::npos);
  EXPECT_NE(tags.user.find("<my_reasoning>\n" + text + "\n</my_reasoning>"), std::string::npos);
  auto over = make_editor_prompt("I reason.", {false, true}, 95, 100);
  EXPECT_NE(over.user.find("Make it shorter"), std::string::npos);
  EXPECT_EQ(over.user.find("Take out every"), std::string::npos);
  // The reply is read as a teacher's: think blocks dropped, the first block or the whole reply.
  EXPECT_EQ(read_editor_reply("<think>x</think>\n  edited text  "), "edited text");
  EXPECT_EQ(read_editor_reply("<my_reasoning>edited</my_reasoning>"), "edited");
  EXPECT_EQ(read_editor_reply("still <my_reasoning> here"), "still <my_reasoning> here");
}

TEST(SftOrder, ShufflesAsPythonsRandomWithTheSameSeed) {
  // random.Random(seed).shuffle(list(range(n))) in CPython 3.
  EXPECT_EQ(python_shuffle_permutation(10, 42), (std::vector<std::size_t>{7, 3, 2, 8, 5, 6, 9, 4, 0, 1}));
  EXPECT_EQ(python_shuffle_permutation(5, 42), (std::vector<std::size_t>{3, 1, 2, 4, 0}));
  EXPECT_EQ(python_shuffle_permutation(10, 7), (std::vector<std::size_t>{8, 3, 1, 4, 7, 0, 9, 6, 2, 5}));
  EXPECT_EQ(python_shuffle_permutation(10, 0), (std::vector<std::size_t>{7, 8, 1, 5, 3, 4, 2, 0, 9, 6}));
  EXPECT_EQ(python_shuffle_permutation(10, (uint64_t{1} << 40) + 3),
            (std::vector<std::size_t>{8, 5, 6, 7, 9, 2, 4, 1, 0, 3}));
  auto big = python_shuffle_permutation(300, 42);
  EXPECT_EQ((std::vector<std::size_t>(big.begin(), big.begin() + 6)), (std::vector<std::size_t>{106, 239, 37, 89, 32, 250}));
  std::size_t weighted = 0;
  for (std::size_t i = 0; i < big.size(); ++i) weighted += i * big[i];
  EXPECT_EQ(weighted, 6449202u);
  EXPECT_EQ(python_shuffle_permutation(1, 42), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(python_shuffle_permutation(0, 42).empty());
}

TEST(RationaleCheck, LengthsAreCharactersNotBytes) {
  auto item = fixit_item();
  rationale_rules rules;  // 2,000 to 190,000 characters
  // 1,500 characters of two bytes each: 3,000 bytes, still too short.
  std::string accented;
  for (int i = 0; i < 1500; ++i) accented += "\xC3\xA9";
  auto c = check_rationale("<my_reasoning>" + accented + "</my_reasoning>", item, rules);
  ASSERT_FALSE(c.rationale);
  EXPECT_EQ(c.chars, 1500u);
  EXPECT_EQ(c.problems.at(0), "too_short: 1500 characters, at least 2000");
  EXPECT_TRUE(check_rationale("<my_reasoning>" + words(2000) + "</my_reasoning>", item, rules).rationale);
  EXPECT_FALSE(check_rationale("<my_reasoning>" + words(1999) + "</my_reasoning>", item, rules).rationale);
  EXPECT_TRUE(check_rationale("<my_reasoning>" + words(190000) + "</my_reasoning>", item, rules).rationale);
  auto long_one = check_rationale("<my_reasoning>" + words(190001) + "</my_reasoning>", item, rules);
  EXPECT_EQ(long_one.problems.at(0), "too_long: 190001 characters, at most 190000");
  // Upstream's other defaults.
  EXPECT_EQ(rules.max_attempts, 20);
  EXPECT_EQ(rules.target_chars, 40000u);
  EXPECT_EQ(rules.max_quoted_lines, -1);
  EXPECT_FALSE(rules.no_code);
}

TEST(TeacherSampling, SetsTemperatureAndTopPAsEachApiSpellsThem) {
  agent::model_spec openai;
  openai.api = agent::api_kind::openai;
  openai.request = {{"max_tokens", 131072}, {"temperature", 0.2}};
  apply_teacher_sampling(openai, teacher_sampling{});
  EXPECT_EQ(openai.request, (ordered_json{{"max_tokens", 131072}, {"temperature", 1.0}, {"top_p", 0.95}}));
  agent::model_spec gemini;
  gemini.api = agent::api_kind::gemini;
  gemini.request = {{"generationConfig", {{"maxOutputTokens", 65536}}}};
  apply_teacher_sampling(gemini, teacher_sampling{});
  EXPECT_EQ(gemini.request["generationConfig"], (ordered_json{{"maxOutputTokens", 65536}, {"temperature", 1.0}, {"topP", 0.95}}));
  agent::model_spec kept = openai;
  kept.request = {{"temperature", 0.2}};
  apply_teacher_sampling(kept, teacher_sampling{std::nullopt, std::nullopt});  // --sampling-from-models-file
  EXPECT_EQ(kept.request, (ordered_json{{"temperature", 0.2}}));
}

TEST(TeacherSampling, TheGlmEntriesOfTheModelsFileSampleAsUpstreamsSynthesis) {
  auto catalog = agent::load_model_catalog(ptxbench::testing::repo_root() / "configs" / "models.json");
  ASSERT_TRUE(catalog) << catalog.err().message;
  for (const char* name : {"GLM-5.2", "GLM-5.1"}) {
    const auto& m = catalog->models.at(name);
    EXPECT_EQ(m.request["temperature"], 1.0) << name;
    EXPECT_EQ(m.request["top_p"], 0.95) << name;
    EXPECT_EQ(m.max_output_tokens(), 131072) << name;
  }
  EXPECT_EQ(catalog->models.at("Qwen3.6-27B").max_output_tokens(), 81920);  // s6's synthesiser budget
}

class FixitMining : public AdaptCli {
 protected:
  // One trajectory per reply list: turn k answers replies[k].
  fs::path student(const std::vector<std::string>& replies, const std::string& name) {
    fake_llm_server s;
    for (std::size_t k = 0; k < replies.size(); ++k) s.set_reply(static_cast<int>(k), replies[k]);
    fs::path out = m_dir / name;
    auto r = cli({"run", "--model", "openai:student", "--base-url", s.base_url(), "--tasks", "gemm_n7168_k5120",
                  "--trajectories", "1", "--turns", std::to_string(replies.size()), "--variants", "base", "--out",
                  out.string(), "--evaluator", "fake", "-q"});
    EXPECT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
    return out;
  }
};

TEST_F(FixitMining, ShapeAndDtypeFailuresAreSkippedUnlessAskedFor) {
  auto run = student({kernel("s", "FAKE_WRONG_SHAPE"), kernel("d", "FAKE_WRONG_DTYPE"), kernel("n", "FAKE_WRONG")}, "run");
  auto m = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined").string()});
  ASSERT_TRUE(m.succeeded()) << m.err;
  json c = read_json(m_dir / "mined" / "manifest.json")["counts"];
  EXPECT_EQ(c["candidates"], 1);
  EXPECT_EQ(c["excluded"], (json{{"label:incorrect_dtype", 1}, {"label:incorrect_shape", 1}}));
  auto with = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined-all").string(), "--include-shape-dtype"});
  ASSERT_TRUE(with.succeeded()) << with.err;
  json w = read_json(m_dir / "mined-all" / "manifest.json");
  EXPECT_EQ(w["counts"]["candidates"], 3);
  EXPECT_EQ(w["counts"]["per_error_type"]["numerical"], (json{{"candidates", 3}, {"selected", 3}}));
  EXPECT_EQ(w["options"]["include_shape_dtype"], true);
}

TEST_F(FixitMining, RepliesMustEndWithTheirClosingFence) {
  auto run = student({kernel("a", "FAKE_COMPILE_ERROR") + "\n  \n",                        // trailing blanks: fine
                      kernel("b", "FAKE_COMPILE_ERROR") + "I hope this compiles now.\n",   // prose after the fence
                      "```cuda\n" + kernel_source("c", "FAKE_COMPILE_ERROR")},             // cut off
                     "run");
  auto m = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined").string()});
  ASSERT_TRUE(m.succeeded()) << m.err;
  json c = read_json(m_dir / "mined" / "manifest.json")["counts"];
  EXPECT_EQ(c["candidates"], 1);
  EXPECT_EQ(c["excluded"]["reply_not_ending_with_fence"], 2);
  auto rows = read_jsonl(m_dir / "mined" / "mined.jsonl");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["turn"], 0);
  auto all = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined-all").string(), "--allow-non-fenced-turns"});
  ASSERT_TRUE(all.succeeded()) << all.err;
  EXPECT_EQ(read_json(m_dir / "mined-all" / "manifest.json")["counts"]["candidates"], 3);
}

TEST_F(FixitMining, ATaskBelowTheCapStopsUnlessUnderfilledTasksAreAllowed) {
  auto run = student({kernel("a", "FAKE_COMPILE_ERROR"), kernel("b", "FAKE_WRONG")}, "run");
  auto m = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined").string(), "--cap-per-definition", "33"});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_EQ(nonempty_lines(m.err), 1) << m.err;
  EXPECT_NE(m.err.find("gemm_n7168_k5120 has only 2 rows, need 33"), std::string::npos) << m.err;
  EXPECT_FALSE(fs::exists(m_dir / "mined"));
  auto ok = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined").string(), "--cap-per-definition", "33",
                 "--allow-underfilled-definitions"});
  ASSERT_TRUE(ok.succeeded()) << ok.err;
  json man = read_json(m_dir / "mined" / "manifest.json");
  EXPECT_EQ(man["counts"]["selected"], 2);
  EXPECT_EQ(man["counts"]["underfilled_definitions"], (json{"gemm_n7168_k5120"}));
}

}  // namespace
}  // namespace ptxbench::adapt
