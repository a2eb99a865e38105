// The Fixit pipeline end to end as a black box (issue 14's CI acceptance): a student run with known
// failures (scripted server, fake evaluator) -> fixit mine (strata counts, seeded and reproducible,
// manifest hashes) -> fixit repair (a scripted teacher; kill -9 mid-run, then the same command
// resumes) -> fixit pairs (--require-target, de-duplication) -> fixit reason (a reply with a forbidden
// marker and one too short, both retried; kill -9 mid-run and resume) -> sft export (every row
// validated, token counts with a small tokenizer.json, rows over the limit dropped whole) -> train/'s
// reader takes the export as it is. Then bad input: one-line errors, non-zero exits, nothing half
// written.
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/fake_llm_server.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "core/process.h"
#include "core/sha256.h"
#include "test_support.h"

namespace ptxbench::adapt {
namespace {

using ptxbench::testing::fake_llm_server;
using json = nlohmann::json;
namespace fs = std::filesystem;

const char* k_task = "gemm_n7168_k5120";

// A kernel the fake evaluator judges by its markers; `tag` makes each one distinct (and lets the
// teachers' rules recognise the row in their prompts).
std::string kernel(const std::string& tag, const std::string& marker, bool wgmma = false) {
  return "```cuda\n#include <ptxbench/abi.h>\n// tag-" + tag + "- " + marker + "\n" +
         (wgmma ? "// issues wgmma.mma_async through the pack\n" : "") +
         "__global__ void k() {}\nvoid run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, "
         "cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n```\n";
}

std::string rationale(std::size_t sentences) {
  std::string text = "<my_reasoning>\n";
  for (std::size_t i = 0; i < sentences; ++i)
    text += "I look at what the evaluator told me and reason about which assumption in my kernel was wrong, "
            "then I change only that part and keep the rest of the design. ";
  return text + "\n</my_reasoning>\n";
}

std::string read(const fs::path& p) {
  auto t = read_text_file(p, 1u << 28);
  EXPECT_TRUE(t) << p;
  return t ? *t : std::string();
}

json read_json(const fs::path& p) { return json::parse(read(p), nullptr, false); }

std::vector<json> read_jsonl(const fs::path& p) {
  std::vector<json> rows;
  std::istringstream in(read(p));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(json::parse(line, nullptr, false));
  return rows;
}

// The cl100k ranks scripts/setup.sh fetches (the export's labelled fallback), when present.
std::optional<fs::path> cl100k_ranks() {
  for (const auto& p : {ptxbench::testing::repo_root() / "build" / "third_party" / "tiktoken" / "cl100k_base.json",
                        ptxbench::testing::bin_dir().parent_path() / "third_party" / "tiktoken" / "cl100k_base.json"})
    if (fs::is_regular_file(p)) return p;
  return std::nullopt;
}

fs::path tiny_tokenizer() { return ptxbench::testing::repo_root() / "tests/fixtures/tokenizer/tiny_tokenizer.json"; }

int nonempty_lines(const std::string& s) {
  int n = 0;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) ++n;
  return n;
}

class FixitPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    m_bin = ptxbench::testing::bin_dir() / "ptxbench";
    if (!fs::exists(m_bin)) GTEST_SKIP() << "build the `ptxbench` target first (" << m_bin << " is missing)";
    m_dir = ptxbench::testing::make_temp_dir("fixit");
  }
  void TearDown() override {
    if (!m_dir.empty() && !::testing::Test::HasFailure()) fs::remove_all(m_dir);
  }

  process_result cli(std::vector<std::string> args, double timeout_s = 300) {
    process_spec spec;
    spec.argv = {m_bin.string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout_s = timeout_s;
    spec.env_overrides.emplace_back("PTXBENCH_ROOT", ptxbench::testing::repo_root().string());
    spec.env_unset = {"OPENAI_API_KEY", "OPENAI_BASE_URL"};
    return run_process(spec);
  }

  // 4 trajectories x 3 turns, every turn a failure except a no-code reply; one duplicate kernel.
  void student_run(fake_llm_server& s, const fs::path& out, int trajectories = 4, int turns = 3) {
    s.add_rule("", {kernel("c0", "FAKE_COMPILE_ERROR"), kernel("c1", "FAKE_COMPILE_ERROR"),
                    kernel("c2", "FAKE_COMPILE_ERROR"), kernel("c3", "FAKE_COMPILE_ERROR")}, 0);
    s.add_rule("", {kernel("n0", "FAKE_WRONG"), kernel("n1", "FAKE_WRONG"), kernel("n2", "FAKE_WRONG"),
                    kernel("n0", "FAKE_WRONG")}, 1);
    s.add_rule("", {kernel("r0", "FAKE_RUNTIME_ERROR"), kernel("r1", "FAKE_RUNTIME_ERROR"), kernel("t0", "FAKE_TIMEOUT"),
                    "I am not sure how to write this kernel."}, 2);
    auto r = cli({"run", "--model", "openai:student", "--base-url", s.base_url(), "--tasks", k_task, "--trajectories",
                  std::to_string(trajectories), "--turns", std::to_string(turns), "--variants", "base", "--out",
                  out.string(), "--evaluator", "fake", "--parallel", "1", "-q"});
    ASSERT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
  }

  // The repair teacher: compile rows fixed at once (target-correct), numerical rows on the second try,
  // runtime rows fixed twice with the same kernel that never uses the target instructions, the timeout
  // row never.
  void teach_repairs(fake_llm_server& t) {
    for (const char* c : {"c0", "c1", "c2", "c3"})
      t.add_rule(std::string("tag-") + c + "-", {kernel(std::string("fixed-") + c, "FAKE_SPEEDUP=0.5", true)});
    for (const char* n : {"n0", "n1", "n2"}) {
      t.add_rule(std::string("tag-") + n + "-", {kernel(std::string("still-") + n, "FAKE_WRONG")}, 0);
      t.add_rule(std::string("tag-") + n + "-", {kernel(std::string("fixed-") + n, "FAKE_SPEEDUP=0.4", true)}, 1);
    }
    for (const char* r : {"r0", "r1"}) t.add_rule(std::string("tag-") + r + "-", {kernel(std::string("plain-") + r, "")});
    t.set_default_reply(kernel("never", "FAKE_TIMEOUT"));
  }

  std::vector<std::string> repair_args(const fake_llm_server& t, const fs::path& mined, const fs::path& out) {
    return {"fixit", "repair", mined.string(), "--model", "openai:teacher", "--base-url", t.base_url(), "--out",
            out.string(), "--turns", "2", "--evaluator", "fake", "--parallel", "1", "-q"};
  }

  std::vector<std::string> reason_args(const fake_llm_server& t, const fs::path& pairs, const fs::path& out) {
    return {"fixit", "reason", pairs.string(), "--model", "openai:reasoner", "--base-url", t.base_url(), "--out",
            out.string(), "--min-chars", "300", "--parallel", "1", "-q"};
  }

  fs::path m_bin, m_dir;
};

TEST_F(FixitPipeline, MineRepairPairsReasonExportWithKillNineResumes) {
  fake_llm_server student;
  const fs::path run = m_dir / "run";
  student_run(student, run);

  // ---- mine: known strata, a cap, the seed decides, the manifest hashes every file
  const fs::path mined = m_dir / "mined";
  auto m = cli({"fixit", "mine", run.string(), "--out", mined.string(), "--cap-per-definition", "6", "--seed", "7"});
  ASSERT_TRUE(m.succeeded()) << describe_exit(m) << "\n" << m.err;
  json manifest = read_json(mined / "manifest.json");
  ASSERT_TRUE(manifest.is_object());
  const auto& counts = manifest["counts"];
  EXPECT_EQ(counts["turns_read"], 12);
  EXPECT_EQ(counts["candidates"], 10);
  EXPECT_EQ(counts["selected"], 6);
  EXPECT_EQ(counts["excluded"]["label:no_code"], 1);
  EXPECT_EQ(counts["excluded"]["duplicate_kernel"], 1);
  // One per stratum first, the remaining 2 of the cap by (size - 1) with the largest remainder.
  const auto& strata = counts["per_stratum"][k_task];
  EXPECT_EQ(strata["compile/turn0"], (json{{"candidates", 4}, {"selected", 2}}));
  EXPECT_EQ(strata["numerical/turn1"], (json{{"candidates", 3}, {"selected", 2}}));
  EXPECT_EQ(strata["runtime/turn2"], (json{{"candidates", 2}, {"selected", 1}}));
  EXPECT_EQ(strata["timeout/turn2"], (json{{"candidates", 1}, {"selected", 1}}));
  ASSERT_TRUE(manifest["files"].is_object());
  EXPECT_TRUE(manifest["files"].contains("mined.jsonl"));
  for (const auto& [rel, hash] : manifest["files"].items()) EXPECT_EQ(sha256_hex(read(mined / rel)), hash) << rel;
  auto rows = read_jsonl(mined / "mined.jsonl");
  ASSERT_EQ(rows.size(), 6u);
  std::map<std::string, int> per_type;
  for (const auto& r : rows) {
    per_type[r["error_type"].get<std::string>()] += 1;
    EXPECT_EQ(r["task"], k_task);
    EXPECT_EQ(r["variant"], "base");
  }
  EXPECT_EQ(per_type, (std::map<std::string, int>{{"compile", 2}, {"numerical", 2}, {"runtime", 1}, {"timeout", 1}}));
  // Same seed: the same rows, byte for byte; other seeds pick other rows of the capped strata.
  auto same = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined-again").string(), "--cap-per-definition", "6",
                   "--seed", "7"});
  ASSERT_TRUE(same.succeeded()) << same.err;
  EXPECT_EQ(read(mined / "mined.jsonl"), read(m_dir / "mined-again" / "mined.jsonl"));
  bool some_seed_differs = false;
  for (int seed : {1, 2, 3, 4, 5}) {
    fs::path d = m_dir / ("mined-seed" + std::to_string(seed));
    auto r = cli({"fixit", "mine", run.string(), "--out", d.string(), "--cap-per-definition", "6", "--seed",
                  std::to_string(seed)});
    ASSERT_TRUE(r.succeeded()) << r.err;
    some_seed_differs |= read(d / "mined.jsonl") != read(mined / "mined.jsonl");
    EXPECT_EQ(read_json(d / "manifest.json")["counts"]["per_stratum"], counts["per_stratum"]);
  }
  EXPECT_TRUE(some_seed_differs);
  // Filters: turn 0 only leaves the compile stratum.
  auto t0 = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined-turn0").string(), "--turns", "0"});
  ASSERT_TRUE(t0.succeeded()) << t0.err;
  EXPECT_EQ(read_json(m_dir / "mined-turn0" / "manifest.json")["counts"]["selected"], 4);
  auto other = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined-other").string(), "--variants", "multicast"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("no failed turn to mine"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("variant_filter"), std::string::npos) << other.err;
  EXPECT_FALSE(fs::exists(m_dir / "mined-other"));

  // ---- repair: killed mid-run, then the same command finishes every repair exactly once
  fake_llm_server teacher;
  teach_repairs(teacher);
  const fs::path repairs = m_dir / "repairs";
  auto args = repair_args(teacher, mined, repairs);
  auto slow = args;
  slow.insert(slow.end(), {"--fake-eval-delay-ms", "800"});
  auto killed = cli(slow, 3.5);  // 10 evaluations x 800 ms: the SIGKILL lands mid-run
  ASSERT_TRUE(killed.timed_out) << "finished before the kill; " << killed.err;
  int before = teacher.requests();
  EXPECT_GT(before, 0);
  EXPECT_LT(before, 10);
  auto resumed = cli(args);
  ASSERT_TRUE(resumed.succeeded()) << describe_exit(resumed) << "\n" << resumed.err;
  // compile 2 x 1 turn, numerical 2 x 2, runtime 1 x 2 (never target-correct), timeout 1 x 2 = 10
  EXPECT_GE(teacher.requests(), 10);
  EXPECT_LE(teacher.requests(), 10 + 1);  // at most the call in flight at the kill is made again
  json summary = read_json(repairs / "summary.json");
  EXPECT_EQ(summary["totals"]["finished"], 6);
  EXPECT_EQ(summary["totals"]["turns_completed"], 10);
  EXPECT_EQ(summary["complete"], true);
  int files = 0;
  for (const auto& e : fs::directory_iterator(repairs / "trajectories")) {
    if (e.path().extension() != ".json") continue;
    ++files;
    json t = read_json(e.path());
    ASSERT_TRUE(t.is_object()) << e.path();
    std::set<int> turns;
    for (const auto& msg : t["messages"])
      if (msg.value("role", "") == "assistant") {
        EXPECT_TRUE(turns.insert(msg["extra"]["turn"].get<int>()).second);
      }
    // The repair prompt: the wrong kernel in a fence and its error.
    std::string prompt = t["messages"][1]["content"];
    EXPECT_NE(prompt.find("```"), std::string::npos);
    EXPECT_NE(prompt.find("tag-"), std::string::npos);
  }
  EXPECT_EQ(files, 6);

  // ---- pairs: all correct turns (de-duplicated), then only target-correct ones
  auto all = cli({"fixit", "pairs", repairs.string(), "--out", (m_dir / "pairs-all").string()});
  ASSERT_TRUE(all.succeeded()) << all.err;
  json all_manifest = read_json(m_dir / "pairs-all" / "manifest.json");
  EXPECT_EQ(all_manifest["counts"]["pairs"], 5);  // 2 compile + 2 numerical + 1 runtime (its 2nd turn a duplicate)
  EXPECT_EQ(all_manifest["counts"]["dropped"]["duplicate"], 1);
  const fs::path pairs = m_dir / "pairs";
  auto tp = cli({"fixit", "pairs", repairs.string(), "--out", pairs.string(), "--require-target"});
  ASSERT_TRUE(tp.succeeded()) << tp.err;
  json pairs_manifest = read_json(pairs / "manifest.json");
  EXPECT_EQ(pairs_manifest["counts"]["pairs"], 4);
  EXPECT_EQ(pairs_manifest["counts"]["dropped"]["not_target_correct"], 2);
  auto pair_rows = read_jsonl(pairs / "pairs.jsonl");
  ASSERT_EQ(pair_rows.size(), 4u);
  for (const auto& p : pair_rows) {
    EXPECT_EQ(p["correct"]["target_correct"], true);
    EXPECT_EQ(p["correct"]["target_verdict"], "executed");
    EXPECT_NE(read(pairs / p["correct"]["kernel_file"].get<std::string>()).find("fixed-"), std::string::npos);
    EXPECT_EQ(sha256_hex(read(pairs / p["wrong"]["kernel_file"].get<std::string>())), p["wrong"]["kernel_sha256"]);
  }

  // ---- reason: one reply with a forbidden marker, one too short, both asked again
  fake_llm_server reasoner;
  std::string marked = rationale(3);
  marked.insert(marked.find('\n') + 1, "Let me <think> about it.\n");  // one forbidden marker inside the block
  reasoner.add_rule("tag-c", {marked, rationale(4)});
  reasoner.add_rule("tag-n", {rationale(1).substr(0, 120) + "\n</my_reasoning>", rationale(5)});
  reasoner.set_default_reply(rationale(4));
  const fs::path reasoning = m_dir / "reasoning";
  auto streamed = reason_args(reasoner, pairs, reasoning);
  streamed.push_back("--stream");  // long teacher calls: every reply arrives as server-sent events
  auto rs = cli(streamed);
  ASSERT_TRUE(rs.succeeded()) << describe_exit(rs) << "\n" << rs.err;
  EXPECT_EQ(reasoner.requests(), 6);
  EXPECT_EQ(reasoner.streamed_requests(), 6);
  json rm = read_json(reasoning / "manifest.json");
  EXPECT_EQ(rm["counts"]["done"], 4);
  EXPECT_EQ(rm["counts"]["failed"], 0);
  EXPECT_EQ(rm["counts"]["attempts"], 6);
  EXPECT_EQ(rm["counts"]["problems"]["forbidden_marker"], 1);
  EXPECT_EQ(rm["counts"]["problems"]["too_short"], 1);

  // ---- reason again, killed mid-run: the same command finishes with nothing lost or repeated
  fake_llm_server slow_reasoner;
  slow_reasoner.set_default_reply(rationale(4));
  slow_reasoner.set_delay_ms(1500);
  const fs::path reasoning2 = m_dir / "reasoning-killed";
  auto rk = cli(reason_args(slow_reasoner, pairs, reasoning2), 4.0);  // 4 rows x 1.5 s
  ASSERT_TRUE(rk.timed_out) << "finished before the kill; " << rk.err;
  int asked = slow_reasoner.requests();
  EXPECT_GE(asked, 1);
  EXPECT_LT(asked, 4);
  int done_before = 0;
  for (const auto& e : fs::directory_iterator(reasoning2 / "rows"))
    if (read_json(e.path()).value("status", "") == "done") ++done_before;
  EXPECT_GE(done_before, 1);
  EXPECT_FALSE(fs::exists(reasoning2 / "manifest.json"));
  slow_reasoner.set_delay_ms(0);
  auto rr = cli(reason_args(slow_reasoner, pairs, reasoning2));
  ASSERT_TRUE(rr.succeeded()) << describe_exit(rr) << "\n" << rr.err;
  EXPECT_GE(slow_reasoner.requests(), 4);
  EXPECT_LE(slow_reasoner.requests(), 4 + 1);  // finished rows are never asked again
  EXPECT_EQ(read_json(reasoning2 / "manifest.json")["counts"]["done"], 4);
  EXPECT_EQ(read_json(reasoning2 / "manifest.json")["counts"]["attempts"], 4);

  // ---- export with the small test tokenizer; every row validated
  const fs::path tokenizer = ptxbench::testing::repo_root() / "tests/fixtures/tokenizer/tiny_tokenizer.json";
  const fs::path sft = m_dir / "sft";
  auto ex = cli({"sft", "export", reasoning.string(), "--format", "fixit", "--tokenizer", tokenizer.string(),
                 "--chat-template", "chatml", "--max-tokens", "1000000", "--out", sft.string()});
  ASSERT_TRUE(ex.succeeded()) << describe_exit(ex) << "\n" << ex.err;
  json em = read_json(sft / "manifest.json");
  EXPECT_EQ(em["counts"]["in"], 4);
  EXPECT_EQ(em["counts"]["out"], 4);
  std::map<std::string, json> pair_by_id;
  for (const auto& p : pair_rows) pair_by_id[p["id"].get<std::string>()] = p;
  auto sft_rows = read_jsonl(sft / "sft.jsonl");
  ASSERT_EQ(sft_rows.size(), 4u);
  std::vector<int64_t> tokens;
  for (const auto& row : sft_rows) {
    ASSERT_TRUE(row.is_object());
    EXPECT_EQ(row.size(), 3u);
    const auto& msgs = row["messages"];
    ASSERT_EQ(msgs.size(), 5u) << row["id"];
    const std::vector<std::string> roles = {"system", "user", "assistant", "user", "assistant"};
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(msgs[i]["role"], roles[i]);
      EXPECT_EQ(msgs[i]["step_loss_mask"], i == 4 ? 1 : 0);
    }
    std::string answer = msgs[4]["content"];
    EXPECT_EQ(answer.rfind("<think>\n", 0), 0u) << answer.substr(0, 40);
    auto close = answer.find("</think>");
    ASSERT_NE(close, std::string::npos);
    std::string after = answer.substr(close);
    auto fence = after.find("```cuda\n");
    ASSERT_NE(fence, std::string::npos);
    EXPECT_NE(after.find("\n```", fence + 8), std::string::npos);  // closed
    EXPECT_NE(after.find("fixed-"), std::string::npos);
    // The wrong turn and its feedback verbatim, as the pairs directory holds them.
    auto it = pair_by_id.find(row["id"].get<std::string>());
    ASSERT_NE(it, pair_by_id.end()) << row["id"];
    EXPECT_EQ(msgs[2]["content"], read(pairs / it->second["wrong"]["reply_file"].get<std::string>()));
    EXPECT_EQ(msgs[3]["content"], read(pairs / it->second["wrong"]["feedback_file"].get<std::string>()));
    ASSERT_TRUE(row["metadata"]["tokens"].is_number_integer());
    tokens.push_back(row["metadata"]["tokens"].get<int64_t>());
    EXPECT_LE(tokens.back(), 1000000);
  }
  // A limit just under the longest row drops that row whole (never truncated); the rest are as before.
  int64_t longest = *std::max_element(tokens.begin(), tokens.end());
  int over = static_cast<int>(std::count(tokens.begin(), tokens.end(), longest));
  auto ex2 = cli({"sft", "export", reasoning.string(), "--format", "fixit", "--tokenizer", tokenizer.string(),
                  "--chat-template", "chatml", "--max-tokens", std::to_string(longest - 1), "--out",
                  (m_dir / "sft-limited").string()});
  ASSERT_TRUE(ex2.succeeded()) << ex2.err;
  json lm = read_json(m_dir / "sft-limited" / "manifest.json");
  EXPECT_EQ(lm["counts"]["dropped"]["over_max_tokens"], over);
  EXPECT_EQ(lm["counts"]["out"], 4 - over);
  for (const auto& row : read_jsonl(m_dir / "sft-limited" / "sft.jsonl")) {
    EXPECT_LT(row["metadata"]["tokens"].get<int64_t>(), longest);
    bool same = false;
    for (const auto& full : sft_rows) same |= full["id"] == row["id"] && full["messages"] == row["messages"];
    EXPECT_TRUE(same) << row["id"];
  }

  // ---- train/'s reader takes the export as it is (roles, mask, fences; only the last message labelled)
#ifdef PTXBENCH_TEST_PYTHON
  process_spec py;
  py.argv = {PTXBENCH_TEST_PYTHON, "-B", "-m", "unittest", "-v", "train.tests.test_export_format"};
  py.cwd = ptxbench::testing::repo_root();
  py.env_overrides = {{"PTXBENCH_SFT_EXPORT", (sft / "sft.jsonl").string()}, {"PTXBENCH_SFT_EXPORT_ROWS", "4"}};
  py.timeout_s = 120;
  auto pr = run_process(py);
  EXPECT_TRUE(pr.succeeded()) << describe_exit(pr) << "\n" << pr.out << pr.err;
  EXPECT_EQ(pr.err.find("skipped"), std::string::npos) << pr.err;
#else
  GTEST_SKIP() << "python3 not found: train/'s reader was not run on the export";
#endif
}

// KernelGen through the recipe s0 (collect, reason, export; the labelled cl100k fallback where its ranks are), three
// messages per row; a second identical command finds everything done and asks nobody again.
TEST_F(FixitPipeline, RecipeS0BuildsKernelGenRowsAndComparesWithThePaper) {
  fake_llm_server teacher, reasoner;
  teacher.add_rule("", {kernel("kg-a", "FAKE_SPEEDUP=0.5", true), kernel("kg-b", "FAKE_SPEEDUP=0.7", true),
                        kernel("kg-plain", "")});
  reasoner.set_default_reply(rationale(4));
  const fs::path run = m_dir / "teacher-run";
  // ablation_params: a short system prompt, so rows fit the recipe's 65,536 tokens of the test tokenizer
  auto r = cli({"run", "--model", "openai:teacher", "--base-url", teacher.base_url(), "--tasks", "mha_with_lse_d64",
                "--trajectories", "3", "--turns", "1", "--variants", "ablation_params", "--out", run.string(),
                "--evaluator", "fake", "--parallel", "1", "-q"});
  ASSERT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
  json models = {{"format", "ptxbench.models/1"},
                 {"models", {{"scripted-reasoner", {{"api", "openai"}, {"model_id", "reasoner"},
                                                    {"base_url", reasoner.base_url()}, {"api_key_required", false}}}}}};
  ASSERT_TRUE(write_file_atomic(m_dir / "models.json", models.dump()));
  const fs::path out = m_dir / "s0";
  std::vector<std::string> args = {"sft", "recipe", "s0", "--runs", run.string(), "--out", out.string(),
                                   "--reason-model", "scripted-reasoner", "--models-file", (m_dir / "models.json").string(),
                                   "--tokenizer", tiny_tokenizer().string(), "--chat-template", "chatml",
                                   "--parallel", "1", "-q"};
  auto rec = cli(args);
  ASSERT_TRUE(rec.succeeded()) << describe_exit(rec) << "\n" << rec.err;
  EXPECT_NE(rec.out.find("recipe s0 (sft-v4"), std::string::npos) << rec.out;
  EXPECT_NE(rec.out.find("494"), std::string::npos) << rec.out;  // the paper's row count beside ours
  json report = read_json(out / "recipe_report.json");
  EXPECT_EQ(report["counts"]["kernels"], 2);  // --require-target (the recipe's) leaves the plain kernel out
  EXPECT_EQ(report["counts"]["rows"], 2);
  EXPECT_EQ(reasoner.requests(), 2);
  auto rows = read_jsonl(out / "sft" / "sft.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    const auto& msgs = row["messages"];
    ASSERT_EQ(msgs.size(), 3u);
    EXPECT_EQ(msgs[0]["role"], "system");
    EXPECT_EQ(msgs[1]["role"], "user");
    EXPECT_EQ(msgs[2]["role"], "assistant");
    EXPECT_EQ(msgs[2]["step_loss_mask"], 1);
    EXPECT_EQ(msgs[1]["step_loss_mask"], 0);
    std::string answer = msgs[2]["content"];
    EXPECT_EQ(answer.rfind("<think>\n", 0), 0u);
    EXPECT_NE(answer.find("FAKE_SPEEDUP"), std::string::npos);
  }
  json em = read_json(out / "sft" / "manifest.json");
  EXPECT_EQ(em["token_count"]["chat_template"], "chatml");
  EXPECT_NE(em["token_count"]["tokenizer"].get<std::string>().find("tiny_tokenizer.json"), std::string::npos) << em["token_count"];
  if (auto ranks = cl100k_ranks()) {  // without --tokenizer: cl100k, and the manifest says it is a fallback
    process_spec spec;
    spec.argv = {m_bin.string(), "sft", "export", (out / "reasoning").string(), "--format", "kernelgen", "--out",
                 (m_dir / "sft-cl100k").string()};
    spec.env_overrides = {{"PTXBENCH_ROOT", ptxbench::testing::repo_root().string()},
                          {"PTXBENCH_TIKTOKEN_RANKS", ranks->string()}};
    spec.timeout_s = 120;
    auto fb = run_process(spec);
    ASSERT_TRUE(fb.succeeded()) << fb.err;
    json fm = read_json(m_dir / "sft-cl100k" / "manifest.json");
    EXPECT_NE(fm["token_count"].dump().find("cl100k"), std::string::npos) << fm["token_count"];
    EXPECT_EQ(fm["token_count"]["exact"], false) << fm["token_count"];
  }
  std::string before = read(out / "sft" / "sft.jsonl");
  auto again = cli(args);
  ASSERT_TRUE(again.succeeded()) << again.err;
  EXPECT_EQ(reasoner.requests(), 2);
  EXPECT_EQ(read(out / "sft" / "sft.jsonl"), before);
#ifdef PTXBENCH_TEST_PYTHON
  process_spec py;
  py.argv = {PTXBENCH_TEST_PYTHON, "-B", "-m", "unittest", "train.tests.test_export_format"};
  py.cwd = ptxbench::testing::repo_root();
  py.env_overrides = {{"PTXBENCH_SFT_EXPORT", (out / "sft" / "sft.jsonl").string()}, {"PTXBENCH_SFT_EXPORT_ROWS", "2"}};
  py.timeout_s = 120;
  auto pr = run_process(py);
  EXPECT_TRUE(pr.succeeded()) << describe_exit(pr) << "\n" << pr.out << pr.err;
  EXPECT_EQ(pr.err.find("skipped"), std::string::npos) << pr.err;
#endif
}

// A Fixit recipe (s1: the four d128 problems) from a student run: mine, repair, pairs
// (--require-target, the recipe's), reason, export; killed during the repairs, then the same command
// finishes, and its counts are printed beside the paper's.
TEST_F(FixitPipeline, RecipeS1BuildsFixitRowsAndResumesAfterAKill) {
  fake_llm_server student, teacher, reasoner;
  student.add_rule("", {kernel("s-a", "FAKE_COMPILE_ERROR"), kernel("s-b", "FAKE_WRONG"), kernel("s-c", "FAKE_RUNTIME_ERROR")});
  teacher.add_rule("tag-s-a-", {kernel("fixed-a", "FAKE_SPEEDUP=0.3", true)});
  teacher.add_rule("tag-s-b-", {kernel("fixed-b", "FAKE_SPEEDUP=0.3", true)});
  teacher.add_rule("tag-s-c-", {kernel("plain-c", "")});  // correct but never target-correct: no pair
  reasoner.set_default_reply(rationale(16));              // s1 asks for at least 2000 characters
  const fs::path run = m_dir / "student-run";
  auto r = cli({"run", "--model", "openai:student", "--base-url", student.base_url(), "--tasks", "mha_with_lse_d128",
                "--trajectories", "3", "--turns", "1", "--variants", "ablation_params", "--out", run.string(),
                "--evaluator", "fake", "--parallel", "1", "-q"});
  ASSERT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
  json models = {{"format", "ptxbench.models/1"},
                 {"models", {{"scripted-teacher", {{"api", "openai"}, {"model_id", "teacher"},
                                                   {"base_url", teacher.base_url()}, {"api_key_required", false}}},
                             {"scripted-reasoner", {{"api", "openai"}, {"model_id", "reasoner"},
                                                    {"base_url", reasoner.base_url()}, {"api_key_required", false}}}}}};
  ASSERT_TRUE(write_file_atomic(m_dir / "models.json", models.dump()));
  const fs::path out = m_dir / "s1";
  std::vector<std::string> args = {"sft", "recipe", "s1", "--runs", run.string(), "--out", out.string(),
                                   "--repair-model", "scripted-teacher", "--reason-model", "scripted-reasoner",
                                   "--models-file", (m_dir / "models.json").string(), "--tokenizer",
                                   tiny_tokenizer().string(), "--chat-template", "chatml", "--parallel", "1",
                                   "--evaluator", "fake", "-q"};
  auto slow = args;
  slow.insert(slow.end(), {"--fake-eval-delay-ms", "1500"});
  auto killed = cli(slow, 3.5);  // the third repair runs 5 turns of 1.5 s: the SIGKILL lands among them
  ASSERT_TRUE(killed.timed_out) << "finished before the kill; " << killed.err;
  EXPECT_FALSE(fs::exists(out / "sft"));
  auto rec = cli(args);
  ASSERT_TRUE(rec.succeeded()) << describe_exit(rec) << "\n" << rec.err;
  EXPECT_NE(rec.out.find("recipe s1 (fixit-v2-glm"), std::string::npos) << rec.out;
  EXPECT_NE(rec.out.find("158"), std::string::npos) << rec.out;  // the paper's row count
  json report = read_json(out / "recipe_report.json");
  EXPECT_EQ(report["counts"]["pairs"], 2);
  EXPECT_EQ(report["counts"]["rows"], 2);
  EXPECT_EQ(reasoner.requests(), 2);
  // 3 repairs: two fixed at once, the third 5 turns, each turn asked once (plus at most one in flight).
  EXPECT_GE(teacher.requests(), 7);
  EXPECT_LE(teacher.requests(), 8);
  auto rows = read_jsonl(out / "sft" / "sft.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    ASSERT_EQ(row["messages"].size(), 5u);
    EXPECT_EQ(row["messages"][4]["step_loss_mask"], 1);
    EXPECT_NE(row["messages"][4]["content"].get<std::string>().find("fixed-"), std::string::npos);
  }
}

TEST_F(FixitPipeline, BadInputGivesOneLineErrorsAndWritesNothing) {
  fake_llm_server student;
  const fs::path run = m_dir / "run";
  student_run(student, run, 2, 1);
  auto refused = [&](const std::vector<std::string>& args, const fs::path& out, const std::string& needle) {
    auto r = cli(args, 120);
    EXPECT_TRUE(r.started);
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_EQ(nonempty_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << out << " was written";
    for (const auto& e : fs::directory_iterator(out.parent_path()))  // no staging leftovers either
      EXPECT_EQ(e.path().filename().string().find(out.filename().string() + "."), std::string::npos) << e.path();
  };

  // A directory another tool wrote (a metrics output), and one that is not there.
  fs::create_directories(m_dir / "other");
  ASSERT_TRUE(write_file_atomic(m_dir / "other" / "plan.json", R"({"format": "someone-else/1", "rows": []})"));
  refused({"fixit", "mine", (m_dir / "other").string(), "--out", (m_dir / "m1").string()}, m_dir / "m1", "other");
  refused({"fixit", "mine", (m_dir / "missing").string(), "--out", (m_dir / "m2").string()}, m_dir / "m2", "missing");

  // A truncated trajectory.
  const fs::path cut = m_dir / "cut";
  fs::copy(run, cut, fs::copy_options::recursive);
  for (const auto& e : fs::directory_iterator(cut / "trajectories")) {
    if (e.path().extension() != ".json") continue;
    std::string text = read(e.path());
    ASSERT_TRUE(write_file_atomic(e.path(), text.substr(0, text.size() / 2)));
    break;
  }
  refused({"fixit", "mine", cut.string(), "--out", (m_dir / "m3").string()}, m_dir / "m3", "trajector");

  // A pairs directory whose kernel file is gone.
  const fs::path mined = m_dir / "mined";
  ASSERT_TRUE(cli({"fixit", "mine", run.string(), "--out", mined.string()}).succeeded());
  fake_llm_server teacher;
  teacher.set_default_reply(kernel("fixed", "FAKE_SPEEDUP=0.5", true));
  ASSERT_TRUE(cli(repair_args(teacher, mined, m_dir / "repairs")).succeeded());
  const fs::path pairs = m_dir / "pairs";
  ASSERT_TRUE(cli({"fixit", "pairs", (m_dir / "repairs").string(), "--out", pairs.string()}).succeeded());
  auto pr = read_jsonl(pairs / "pairs.jsonl");
  ASSERT_FALSE(pr.empty());
  fs::remove(pairs / pr[0]["correct"]["kernel_file"].get<std::string>());
  fake_llm_server reasoner;
  reasoner.set_default_reply(rationale(4));
  refused(reason_args(reasoner, pairs, m_dir / "r1"), m_dir / "r1", "correct.cu");
  EXPECT_EQ(reasoner.requests(), 0);

  // A tokenizer file that is not one.
  fs::path good_pairs = m_dir / "pairs2";
  ASSERT_TRUE(cli({"fixit", "pairs", (m_dir / "repairs").string(), "--out", good_pairs.string()}).succeeded());
  ASSERT_TRUE(cli(reason_args(reasoner, good_pairs, m_dir / "reasoning")).succeeded());
  ASSERT_TRUE(write_file_atomic(m_dir / "tokenizer.json", R"({"version": "1.0", "model": {"type": "Unigram"}})"));
  refused({"sft", "export", (m_dir / "reasoning").string(), "--format", "fixit", "--tokenizer",
           (m_dir / "tokenizer.json").string(), "--out", (m_dir / "sft").string()},
          m_dir / "sft", "tokenizer");
  ASSERT_TRUE(write_file_atomic(m_dir / "notjson.json", "vocab = {}"));
  refused({"sft", "export", (m_dir / "reasoning").string(), "--format", "fixit", "--tokenizer",
           (m_dir / "notjson.json").string(), "--out", (m_dir / "sft2").string()},
          m_dir / "sft2", "notjson.json");
}

// Issue 27, new-user probe 9: rows of a task this suite does not have (a run of another suite) are
// refused by `fixit mine` and by `fixit repair`, exit 2 with one line, nothing written.
TEST_F(FixitPipeline, ATaskThisSuiteDoesNotHaveIsRefusedByMineAndRepair) {
  fake_llm_server student;
  const fs::path run = m_dir / "run";
  student_run(student, run, 2, 1);
  // The same run, as if made with a suite whose task is called gemm_retired.
  const fs::path foreign = m_dir / "foreign";
  fs::create_directories(foreign / "trajectories");
  auto retire = [](std::string text) {
    for (std::size_t at; (at = text.find(k_task)) != std::string::npos;) text.replace(at, std::string(k_task).size(), "gemm_retired");
    return text;
  };
  for (const auto& e : fs::recursive_directory_iterator(run)) {
    if (!e.is_regular_file() || e.path().filename() == ".run.lock") continue;
    fs::path to = foreign / retire(fs::relative(e.path(), run).string());
    fs::create_directories(to.parent_path());
    ASSERT_TRUE(write_file_atomic(to, retire(read(e.path()))));
  }
  auto mined = cli({"fixit", "mine", foreign.string(), "--out", (m_dir / "m").string()}, 120);
  EXPECT_EQ(mined.exit_code, 2) << mined.err;
  EXPECT_EQ(nonempty_lines(mined.err), 1) << mined.err;
  const std::string line = mined.err.substr(0, mined.err.find('\n'));
  EXPECT_EQ(line.rfind("ptxbench: ", 0), 0u) << line;
  EXPECT_NE(line.find(": task 'gemm_retired' is not in this suite (a run of another suite?); --tasks keeps only the tasks "
                      "to mine"),
            std::string::npos)
      << line;
  EXPECT_FALSE(fs::exists(m_dir / "m"));

  // A mined directory with such a row (its manifest hash kept right, as a writer of another suite would).
  const fs::path m2 = m_dir / "m2";
  ASSERT_TRUE(cli({"fixit", "mine", run.string(), "--out", m2.string()}).succeeded());
  std::string rows;
  for (auto row : read_jsonl(m2 / "mined.jsonl")) {  // only the task changes; ids and files stay as written
    row["task"] = "gemm_retired";
    rows += row.dump() + "\n";
  }
  ASSERT_TRUE(write_file_atomic(m2 / "mined.jsonl", rows));
  json manifest = read_json(m2 / "manifest.json");
  manifest["files"]["mined.jsonl"] = sha256_hex(rows);
  ASSERT_TRUE(write_file_atomic(m2 / "manifest.json", manifest.dump(2)));
  fake_llm_server teacher;
  teacher.set_default_reply(kernel("fixed", "FAKE_SPEEDUP=0.5", true));
  auto repaired = cli(repair_args(teacher, m2, m_dir / "repairs"), 120);
  EXPECT_EQ(repaired.exit_code, 2) << repaired.err;
  EXPECT_EQ(nonempty_lines(repaired.err), 1) << repaired.err;
  const std::string rline = repaired.err.substr(0, repaired.err.find('\n'));
  EXPECT_EQ(rline.rfind("ptxbench: mined row ", 0), 0u) << rline;
  EXPECT_NE(rline.find(": task 'gemm_retired' is not in the suite"), std::string::npos) << rline;
  EXPECT_EQ(teacher.requests(), 0) << "nothing was asked of the teacher";
  EXPECT_FALSE(fs::exists(m_dir / "repairs" / "plan.json"));
}

}  // namespace
}  // namespace ptxbench::adapt
