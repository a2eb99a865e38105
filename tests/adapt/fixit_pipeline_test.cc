// The Fixit pipeline end to end as a black box (issues 14 and 28): a student run with known
// failures (scripted server, fake evaluator) -> fixit mine (upstream's cap rule and stable order, the
// seed option, de-duplication on request, manifest hashes) -> fixit repair (upstream's repair prompt,
// a scripted teacher; kill -9 mid-run, then the same command resumes) -> fixit pairs (target-correct
// by default, every correct turn, de-duplication on request) -> fixit reason (the teacher sees the
// pack, the repair prompt and the fixed kernel, at temperature 1.0 / top_p 0.95; a reply with a
// forbidden marker and one too short, both asked again unchanged; kill -9 mid-run and resume) -> sft
// export (upstream's answer layout with a cpp fence, every row validated, token counts with a small
// tokenizer.json, rows over the limit dropped whole with --no-editor, and sent once to the editor model
// by default: kept when the edit passes, dropped when it still fails or its call fails; each reply
// checkpointed beside the output and reused by the same command run again, a torn last line tolerated,
// a changed rationale asked again; tagged rationales kept by
// `fixit reason` for the editor, or asked again with --no-editor; rows shuffled as Python's
// random.Random(42), reproducibly, --shuffle-seed and --no-shuffle) -> train/'s reader takes the export.
// Then bad input: one-line errors, non-zero exits, nothing half written.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <gtest/gtest.h>

#include "adapt_cli.h"
#include "agent/fake_llm_server.h"
#include "core/file_io.h"
#include "adapt/sft_export.h"
#include "core/sha256.h"
#include "test_support.h"

namespace ptxbench::adapt {
namespace {

using namespace ptxbench::adapt::testing;
using ptxbench::testing::fake_llm_server;
using ptxbench::testing::scripted_fault;
namespace fs = std::filesystem;

const char* k_task = "gemm_n7168_k5120";

class FixitPipeline : public AdaptCli {
 protected:
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
};

TEST_F(FixitPipeline, MineRepairPairsReasonExportWithKillNineResumes) {
  fake_llm_server student;
  const fs::path run = m_dir / "run";
  student_run(student, run);

  // ---- mine: known strata, upstream's cap rule, the manifest hashes every file
  const fs::path mined = m_dir / "mined";
  auto m = cli({"fixit", "mine", run.string(), "--out", mined.string(), "--cap-per-definition", "6"});
  ASSERT_TRUE(m.succeeded()) << describe_exit(m) << "\n" << m.err;
  json manifest = read_json(mined / "manifest.json");
  ASSERT_TRUE(manifest.is_object());
  const auto& counts = manifest["counts"];
  EXPECT_EQ(counts["turns_read"], 12);
  EXPECT_EQ(counts["candidates"], 11);  // the repeated n0 kernel too: upstream mined every failed turn
  EXPECT_EQ(counts["selected"], 6);
  EXPECT_EQ(counts["excluded"]["label:no_code"], 1);
  EXPECT_FALSE(counts["excluded"].contains("duplicate_kernel"));
  // 4, 4, 2, 1 of 11 with cap 6: 2.18, 2.18, 1.09, 0.55 -> floors 2, 2, 1, 0; the last slot to timeout's 0.55.
  const auto& strata = counts["per_stratum"][k_task];
  EXPECT_EQ(strata["compile/turn0"], (json{{"candidates", 4}, {"selected", 2}}));
  EXPECT_EQ(strata["numerical/turn1"], (json{{"candidates", 4}, {"selected", 2}}));
  EXPECT_EQ(strata["runtime/turn2"], (json{{"candidates", 2}, {"selected", 1}}));
  EXPECT_EQ(strata["timeout/turn2"], (json{{"candidates", 1}, {"selected", 1}}));
  EXPECT_EQ(manifest["options"]["cap_rule"], "upstream");
  EXPECT_TRUE(manifest["options"]["seed"].is_null());
  ASSERT_TRUE(manifest["files"].is_object());
  EXPECT_TRUE(manifest["files"].contains("mined.jsonl"));
  for (const auto& [rel, hash] : manifest["files"].items()) EXPECT_EQ(sha256_hex(read(mined / rel)), hash) << rel;
  auto rows = read_jsonl(mined / "mined.jsonl");
  ASSERT_EQ(rows.size(), 6u);
  std::set<std::string> kept_tags;
  for (const auto& r : rows) {
    EXPECT_EQ(r["task"], k_task);
    EXPECT_EQ(r["variant"], "base");
    std::string wrong = read(mined / r["kernel_file"].get<std::string>());
    kept_tags.insert(wrong.substr(wrong.find("tag-") + 4, 2));
  }
  // Inside a stratum the first rows of upstream's stable order (turn, trajectory, run): trajectories
  // t0 and t1 for compile and numerical, t0 for runtime, t2's timeout.
  EXPECT_EQ(kept_tags, (std::set<std::string>{"c0", "c1", "n0", "n1", "r0", "t0"}));
  // The same command again: the same rows, byte for byte; a seed picks other rows with the same counts.
  auto same = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined-again").string(), "--cap-per-definition", "6"});
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
  // --dedupe-kernels mines the repeated n0 kernel once.
  auto dd = cli({"fixit", "mine", run.string(), "--out", (m_dir / "mined-dedupe").string(), "--dedupe-kernels"});
  ASSERT_TRUE(dd.succeeded()) << dd.err;
  EXPECT_EQ(read_json(m_dir / "mined-dedupe" / "manifest.json")["counts"]["candidates"], 10);
  EXPECT_EQ(read_json(m_dir / "mined-dedupe" / "manifest.json")["counts"]["excluded"]["duplicate_kernel"], 1);
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
    // Upstream's repair prompt: "Task:", a plain "Kernel" heading and the wrong kernel in a cpp fence,
    // a plain "Error Message" heading and the log, the request; the student's system prompt.
    std::string prompt = t["messages"][1]["content"];
    EXPECT_EQ(prompt.rfind("Task:\n{", 0), 0u) << prompt.substr(0, 40);
    auto k = prompt.find("\n\nKernel\n\n```cpp\n#include <ptxbench/abi.h>\n// tag-");
    ASSERT_NE(k, std::string::npos) << prompt;
    auto e = prompt.find("PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n```\nError Message\n\n", k);
    EXPECT_NE(e, std::string::npos) << prompt.substr(k);
    EXPECT_NE(prompt.find("\nFix the CUDA kernel with the smallest change"), std::string::npos);
    EXPECT_EQ(prompt.substr(prompt.size() - 2), "\n\n");
    EXPECT_EQ(prompt.find("## Kernel"), std::string::npos);
    std::string student_system = read_json(run / "trajectories" / "gemm_n7168_k5120__h200__base__t0.json")["messages"][0]["content"];
    EXPECT_EQ(t["messages"][0]["content"], student_system);
  }
  EXPECT_EQ(files, 6);

  // ---- pairs: only target-correct repairs by default (upstream's); every correct turn on request,
  // de-duplicated on request
  auto all = cli({"fixit", "pairs", repairs.string(), "--out", (m_dir / "pairs-all").string(), "--no-require-target"});
  ASSERT_TRUE(all.succeeded()) << all.err;
  json all_manifest = read_json(m_dir / "pairs-all" / "manifest.json");
  EXPECT_EQ(all_manifest["counts"]["pairs"], 6);  // 2 compile + 2 numerical + runtime's 2 correct turns
  EXPECT_EQ(all_manifest["options"]["require_target"], false);
  auto dedupe = cli({"fixit", "pairs", repairs.string(), "--out", (m_dir / "pairs-dedupe").string(),
                     "--no-require-target", "--dedupe"});
  ASSERT_TRUE(dedupe.succeeded()) << dedupe.err;
  EXPECT_EQ(read_json(m_dir / "pairs-dedupe" / "manifest.json")["counts"]["pairs"], 5);  // runtime's 2nd turn repeats
  EXPECT_EQ(read_json(m_dir / "pairs-dedupe" / "manifest.json")["counts"]["dropped"]["duplicate"], 1);
  const fs::path pairs = m_dir / "pairs";
  auto tp = cli({"fixit", "pairs", repairs.string(), "--out", pairs.string()});
  ASSERT_TRUE(tp.succeeded()) << tp.err;
  json pairs_manifest = read_json(pairs / "manifest.json");
  EXPECT_EQ(pairs_manifest["counts"]["pairs"], 4);
  EXPECT_EQ(pairs_manifest["counts"]["dropped"]["not_target_correct"], 2);
  EXPECT_EQ(pairs_manifest["options"]["require_target"], true);
  EXPECT_EQ(pairs_manifest["options"]["min_speedup"], 0.0);
  auto pair_rows = read_jsonl(pairs / "pairs.jsonl");
  ASSERT_EQ(pair_rows.size(), 4u);
  for (const auto& p : pair_rows) {
    EXPECT_EQ(p["correct"]["target_correct"], true);
    EXPECT_EQ(p["correct"]["target_verdict"], "executed");
    EXPECT_NE(read(pairs / p["correct"]["kernel_file"].get<std::string>()).find("fixed-"), std::string::npos);
    EXPECT_EQ(sha256_hex(read(pairs / p["wrong"]["kernel_file"].get<std::string>())), p["wrong"]["kernel_sha256"]);
    // The repair trajectory's first two messages, kept for the reasoning teacher.
    std::string repair_prompt = read(pairs / p["repair_prompt_file"].get<std::string>());
    EXPECT_EQ(repair_prompt, read_json(p["correct"]["trajectory"].get<std::string>())["messages"][1]["content"]);
    EXPECT_EQ(read(pairs / p["repair_system_prompt_file"].get<std::string>()),
              read(pairs / p["system_prompt_file"].get<std::string>()));
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
  EXPECT_EQ(rm["sampling"], (json{{"temperature", 1.0}, {"top_p", 0.95}}));
  // What the teacher saw, as upstream's: the knowledge pack, the repair prompt, the fixed kernel in a
  // cpp fence, a long target; sampled at temperature 1.0, top_p 0.95; a retry asks the same again.
  std::map<std::string, std::vector<json>> asked_by_tag;  // pair tag -> requests
  for (const auto& body : reasoner.request_bodies()) {
    EXPECT_EQ(body["temperature"], 1.0);
    EXPECT_EQ(body["top_p"], 0.95);
    std::string user = body["messages"][1]["content"];
    asked_by_tag[user.substr(user.find("// tag-") + 7, 2)].push_back(body);
  }
  const json& first = pair_rows[0];
  std::string tag = read(pairs / first["wrong"]["kernel_file"].get<std::string>());
  tag = tag.substr(tag.find("tag-") + 4, 2);
  ASSERT_TRUE(asked_by_tag.count(tag)) << tag;
  std::string user = asked_by_tag[tag][0]["messages"][1]["content"];
  std::string system_prompt = read(pairs / first["repair_system_prompt_file"].get<std::string>());
  EXPECT_NE(user.find("## CUDA/PTX knowledge\n" + system_prompt), std::string::npos);
  EXPECT_NE(user.find("## Task, wrong kernel and error message\n" + read(pairs / first["repair_prompt_file"].get<std::string>())),
            std::string::npos);
  EXPECT_NE(user.find("## The expert's kernel\n```cpp\n" + read(pairs / first["correct"]["kernel_file"].get<std::string>()) + "```"),
            std::string::npos);
  EXPECT_NE(user.find("about 40000 characters"), std::string::npos);
  EXPECT_NE(asked_by_tag[tag][0]["messages"][0]["content"].get<std::string>().find("<my_reasoning>"), std::string::npos);
  for (const auto& [t, bodies] : asked_by_tag)
    for (const auto& b : bodies) EXPECT_EQ(b["messages"], bodies[0]["messages"]) << t;  // retries unchanged
  EXPECT_EQ(asked_by_tag["c0"].size(), 2u);
  EXPECT_EQ(asked_by_tag["n0"].size(), 2u);

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
  const fs::path tokenizer = tiny_tokenizer();
  const fs::path sft = m_dir / "sft";
  auto ex = cli({"sft", "export", reasoning.string(), "--format", "fixit", "--tokenizer", tokenizer.string(),
                 "--chat-template", "chatml", "--max-tokens", "1000000", "--out", sft.string()});
  ASSERT_TRUE(ex.succeeded()) << describe_exit(ex) << "\n" << ex.err;
  json em = read_json(sft / "manifest.json");
  EXPECT_EQ(em["counts"]["in"], 4);
  EXPECT_EQ(em["counts"]["out"], 4);
  EXPECT_EQ(em["kernel_fence"], "cpp");
  EXPECT_EQ(em["normalize_with_chat_template"], true);
  std::map<std::string, json> pair_by_id;
  for (const auto& p : pair_rows) pair_by_id[p["id"].get<std::string>()] = p;
  std::map<std::string, std::string> rationale_by_id;
  for (const auto& r : read_jsonl(reasoning / "reasoning.jsonl")) {
    rationale_by_id[r["id"].get<std::string>()] = r["rationale"].get<std::string>();
    EXPECT_EQ(r["chars"], r["rationale"].get<std::string>().size());  // ASCII: characters are bytes here
  }
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
    // Upstream's answer: the rationale in <think>, a blank line, the fixed kernel stripped in a cpp fence.
    auto it = pair_by_id.find(row["id"].get<std::string>());
    ASSERT_NE(it, pair_by_id.end()) << row["id"];
    std::string fixed = read(pairs / it->second["correct"]["kernel_file"].get<std::string>());
    ASSERT_TRUE(rationale_by_id.count(row["id"].get<std::string>()));
    EXPECT_EQ(msgs[4]["content"], "<think>\n" + rationale_by_id[row["id"].get<std::string>()] + "\n</think>\n\n```cpp\n" +
                                      fixed.substr(0, fixed.size() - 1) + "\n```");
    EXPECT_NE(fixed.find("fixed-"), std::string::npos);
    // The wrong turn and its feedback verbatim, as the pairs directory holds them.
    EXPECT_EQ(msgs[2]["content"], read(pairs / it->second["wrong"]["reply_file"].get<std::string>()));
    EXPECT_EQ(msgs[3]["content"], read(pairs / it->second["wrong"]["feedback_file"].get<std::string>()));
    ASSERT_TRUE(row["metadata"]["tokens"].is_number_integer());
    tokens.push_back(row["metadata"]["tokens"].get<int64_t>());
    EXPECT_LE(tokens.back(), 1000000);
  }
  // Upstream's order: the rows (by id here, as the finish order is not reproducible) shuffled as
  // Python's random.Random(42).shuffle; --no-shuffle keeps id order; another seed, another order.
  EXPECT_EQ(em["order"]["shuffle_seed"], 42);
  std::vector<std::string> by_id;
  for (const auto& row : sft_rows) by_id.push_back(row["id"]);
  std::sort(by_id.begin(), by_id.end());
  auto perm = python_shuffle_permutation(by_id.size(), 42);
  for (std::size_t i = 0; i < sft_rows.size(); ++i) EXPECT_EQ(sft_rows[i]["id"], by_id[perm[i]]) << i;
  EXPECT_EQ(em["editor"]["enabled"], true);
  EXPECT_EQ(em["editor"]["rows_needing_edit"], 0);  // nothing to edit: the editor model is never asked
  auto export_order = [&](const std::vector<std::string>& extra, const std::string& name) {
    std::vector<std::string> args = {"sft", "export", reasoning.string(), "--format", "fixit", "--tokenizer",
                                     tokenizer.string(), "--chat-template", "chatml", "--max-tokens", "1000000",
                                     "--out", (m_dir / name).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = cli(args);
    EXPECT_TRUE(r.succeeded()) << r.err;
    std::vector<std::string> ids;
    for (const auto& row : read_jsonl(m_dir / name / "sft.jsonl")) ids.push_back(row["id"]);
    return ids;
  };
  EXPECT_EQ(export_order({}, "sft-again"), export_order({"--shuffle-seed", "42"}, "sft-42"));  // reproducible
  EXPECT_EQ(export_order({"--no-shuffle"}, "sft-by-id"), by_id);
  EXPECT_EQ(read_json(m_dir / "sft-by-id" / "manifest.json")["order"], "by id");
  auto seven = export_order({"--shuffle-seed", "7"}, "sft-7");
  perm = python_shuffle_permutation(by_id.size(), 7);
  for (std::size_t i = 0; i < seven.size(); ++i) EXPECT_EQ(seven[i], by_id[perm[i]]) << i;

  // A limit just under the longest row: without the editor the row is dropped whole (never truncated);
  // the rest are as before.
  int64_t longest = *std::max_element(tokens.begin(), tokens.end());
  int over = static_cast<int>(std::count(tokens.begin(), tokens.end(), longest));
  auto ex2 = cli({"sft", "export", reasoning.string(), "--format", "fixit", "--tokenizer", tokenizer.string(),
                  "--chat-template", "chatml", "--max-tokens", std::to_string(longest - 1), "--no-editor", "--out",
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

  EXPECT_EQ(lm["editor"]["enabled"], false);

  // ---- the editor (upstream's stage 01). These rows are too small for it: the limit leaves less than
  // upstream's 1,024 tokens of headroom beside the prompt and kernel, so the over-budget row is
  // dropped without a request, as upstream's stage 01 failed such a row.
  fake_llm_server editor;
  const std::string short_text = "I check the failing index first, then the bounds of the tile, and write the fix.";
  editor.set_default_reply("<think>private</think>" + short_text);
  const fs::path models = m_dir / "editor-models.json";
  ASSERT_TRUE(write_file_atomic(models, models_file({{"editor", editor.base_url()}}).dump()));
  auto editor_args = [&](const fs::path& from, const std::string& limit, const std::string& name) {
    return std::vector<std::string>{"sft", "export", from.string(), "--format", "fixit", "--tokenizer",
                                    tokenizer.string(), "--chat-template", "chatml", "--max-tokens", limit,
                                    "--editor-model", "editor", "--models-file", models.string(), "--out",
                                    (m_dir / name).string()};
  };
  auto ex3 = cli(editor_args(reasoning, std::to_string(longest - 1), "sft-no-room"));
  ASSERT_TRUE(ex3.succeeded()) << ex3.err;
  EXPECT_EQ(editor.requests(), 0);
  json edm = read_json(m_dir / "sft-no-room" / "manifest.json");
  EXPECT_EQ(edm["counts"]["out"], 4 - over);
  EXPECT_EQ(edm["counts"]["dropped"]["editor_failed"], over);
  EXPECT_EQ(edm["editor"]["rows_needing_edit"], over);
  EXPECT_EQ(edm["editor"]["edited"], 0);
  EXPECT_EQ(edm["editor"]["dropped"], over);

  // Tagged rationales kept by `fixit reason` for the editor (Fixit's default) and two rationales long
  // enough to be over a limit that leaves room: each sent to the editor once; an edit that still
  // holds a tag drops its row, the others are kept, edited.
  fake_llm_server tagged_reasoner;
  auto tagged = [](const std::string& word) {
    std::string r = rationale(3);
    r.insert(r.find('\n') + 1, word + " <my_reasoning> left inside.\n");
    return r;
  };
  std::string long_text = "<my_reasoning>\nI tabulate the offsets I checked:";
  for (int i = 0; i < 3000; ++i) long_text += " r" + std::to_string(i * 7919 % 100003);  // hardly compressible
  long_text += "\n</my_reasoning>";
  // The first row of each kind tagged, the second long.
  tagged_reasoner.add_rule("tag-c", {tagged("WORD-C"), long_text});
  tagged_reasoner.add_rule("tag-n", {tagged("WORD-N"), long_text});
  tagged_reasoner.set_default_reply(long_text);
  const fs::path reasoning_tagged = m_dir / "reasoning-tagged";
  auto rt = cli(reason_args(tagged_reasoner, pairs, reasoning_tagged));
  ASSERT_TRUE(rt.succeeded()) << rt.err;
  EXPECT_EQ(tagged_reasoner.requests(), 4);  // nothing asked again
  EXPECT_EQ(read_json(reasoning_tagged / "manifest.json")["rules"]["tags_left_to_editor"], true);
  fake_llm_server editor2;
  editor2.add_rule("WORD-C", {short_text});
  editor2.add_rule("WORD-N", {"WORD-N2 still <my_reasoning> here"});
  editor2.set_default_reply(short_text);
  ASSERT_TRUE(write_file_atomic(models, models_file({{"editor", editor2.base_url()}}).dump()));
  const std::string roomy = std::to_string(longest + 1500);
  auto ex4 = cli(editor_args(reasoning_tagged, roomy, "sft-tagged"));
  ASSERT_TRUE(ex4.succeeded()) << ex4.err;
  EXPECT_EQ(editor2.requests(), 4);  // once each
  int asked_tags = 0, asked_shorter = 0;
  for (const auto& body : editor2.request_bodies()) {
    EXPECT_EQ(body["temperature"], 1.0);  // the teacher's sampling
    EXPECT_EQ(body["top_p"], 0.95);
    std::string u = body["messages"][1]["content"];
    asked_tags += u.find("Take out every <my_reasoning>") != std::string::npos;
    asked_shorter += u.find("Make it shorter") != std::string::npos;
  }
  EXPECT_EQ(asked_tags, 2);
  EXPECT_EQ(asked_shorter, 2);
  json tm = read_json(m_dir / "sft-tagged" / "manifest.json");
  EXPECT_EQ(tm["counts"]["out"], 3);
  EXPECT_EQ(tm["counts"]["dropped"]["editor_failed"], 1);
  EXPECT_EQ(tm["editor"]["enabled"], true);
  EXPECT_EQ(tm["editor"]["model"], "editor");
  EXPECT_EQ(tm["editor"]["rows_needing_edit"], 4);
  EXPECT_EQ(tm["editor"]["edited"], 3);
  EXPECT_EQ(tm["editor"]["dropped"], 1);
  EXPECT_EQ(tm["editor"]["issues"]["reasoning_tags"], 2);
  EXPECT_EQ(tm["editor"]["issues"]["over_max_tokens"], 2);
  std::map<std::string, int> edited_for;
  for (const auto& row : read_jsonl(m_dir / "sft-tagged" / "sft.jsonl")) {
    EXPECT_EQ(row["messages"][4]["content"].get<std::string>().find("my_reasoning>"), std::string::npos);
    EXPECT_LE(row["metadata"]["tokens"].get<int64_t>(), longest + 1500);
    ASSERT_TRUE(row["metadata"].contains("editor")) << row["id"];
    edited_for[row["metadata"]["editor"]["issues"].dump()] += 1;
    EXPECT_EQ(row["messages"][4]["content"].get<std::string>().rfind("<think>\n" + short_text + "\n</think>\n", 0), 0u);
  }
  EXPECT_EQ(edited_for["[\"reasoning_tags\"]"], 1);
  EXPECT_EQ(edited_for["[\"over_max_tokens\"]"], 2);
  auto ex5 = cli({"sft", "export", reasoning_tagged.string(), "--format", "fixit", "--tokenizer", tokenizer.string(),
                  "--chat-template", "chatml", "--max-tokens", "1000000", "--no-editor", "--out",
                  (m_dir / "sft-tagged-no-editor").string()});
  ASSERT_TRUE(ex5.succeeded()) << ex5.err;
  EXPECT_EQ(editor2.requests(), 4);
  json nm = read_json(m_dir / "sft-tagged-no-editor" / "manifest.json");
  EXPECT_EQ(nm["counts"]["dropped"]["reasoning_tags_in_rationale"], 2);
  EXPECT_EQ(nm["counts"]["out"], 2);
  EXPECT_EQ(nm["editor"]["enabled"], false);

  // ---- the editor's checkpoint: each reply appended (fsynced) to OUT.editor.jsonl right after its
  // call, keyed by row id, the rationale's sha256, the model and the prompt's sha256.
  const std::string first_rows = read(m_dir / "sft-tagged" / "sft.jsonl");
  const fs::path tagged_checkpoint = m_dir / "sft-tagged.editor.jsonl";
  const std::vector<json> checkpointed = read_jsonl(tagged_checkpoint);
  ASSERT_EQ(checkpointed.size(), 4u);  // the reply that still held a tag too: it was a reply
  for (const auto& c : checkpointed) {
    EXPECT_EQ(c["format"], k_editor_checkpoint_format);
    EXPECT_EQ(c["model"], "editor");
  }
  EXPECT_EQ(tm["editor"]["asked"], 4);
  EXPECT_EQ(tm["editor"]["reused"], 0);
  EXPECT_EQ(tm["editor"]["call_failed"], 0);
  EXPECT_EQ(tm["editor"]["checkpoint"], tagged_checkpoint.string());
  auto use_editor = [&](fake_llm_server& s) {
    ASSERT_TRUE(write_file_atomic(models, models_file({{"editor", s.base_url()}}).dump()));
  };
  const scripted_fault refused{scripted_fault::kind::status, 400, "", R"({"error":{"message":"refused by the test"}})"};

  // (b) The same command again (its folder gone, as after a kill before the rename) with an editor
  // that fails every call: nothing asked, every edit reused, the same rows.
  fake_llm_server dead;
  dead.always(refused);
  use_editor(dead);
  fs::rename(m_dir / "sft-tagged", m_dir / "sft-tagged-first");
  auto again = cli(editor_args(reasoning_tagged, roomy, "sft-tagged"));
  ASSERT_TRUE(again.succeeded()) << again.err;
  EXPECT_EQ(dead.requests(), 0);
  EXPECT_EQ(again.err.find("warning"), std::string::npos) << again.err;
  EXPECT_EQ(read(m_dir / "sft-tagged" / "sft.jsonl"), first_rows);
  json am = read_json(m_dir / "sft-tagged" / "manifest.json");
  EXPECT_EQ(am["editor"]["reused"], 4);
  EXPECT_EQ(am["editor"]["asked"], 0);
  EXPECT_EQ(am["editor"]["edited"], 3);
  EXPECT_EQ(am["editor"]["dropped"], 1);
  EXPECT_EQ(read_jsonl(tagged_checkpoint).size(), 4u);

  // (a) A failed call (the API refuses it) drops that row as editor_failed; the export goes on, the
  // manifest records the call's error, stderr has one warning; nothing of it is checkpointed, so the
  // same command asks that one row again and reuses the rest.
  fake_llm_server flaky;
  flaky.set_default_reply(short_text);
  flaky.inject(refused);
  use_editor(flaky);
  auto failed = cli(editor_args(reasoning_tagged, roomy, "sft-call-failed"));
  ASSERT_TRUE(failed.succeeded()) << describe_exit(failed) << "\n" << failed.err;
  EXPECT_EQ(flaky.requests(), 4);
  EXPECT_EQ(std::count(failed.err.begin(), failed.err.end(), '\n'), 1) << failed.err;
  EXPECT_NE(failed.err.find("warning: the editor call for row "), std::string::npos) << failed.err;
  json fm = read_json(m_dir / "sft-call-failed" / "manifest.json");
  EXPECT_EQ(fm["counts"]["out"], 3);
  EXPECT_EQ(fm["counts"]["dropped"]["editor_failed"], 1);
  EXPECT_EQ(fm["editor"]["call_failed"], 1);
  EXPECT_EQ(fm["editor"]["dropped"], 1);
  EXPECT_EQ(fm["editor"]["edited"], 3);
  ASSERT_EQ(fm["editor"]["call_errors"].size(), 1u);
  std::string call_error = fm["editor"]["call_errors"][0]["error"];
  EXPECT_FALSE(call_error.empty());
  EXPECT_EQ(call_error.find('\n'), std::string::npos);
  EXPECT_NE(failed.err.find(fm["editor"]["call_errors"][0]["id"].get<std::string>()), std::string::npos);
  EXPECT_EQ(read_jsonl(m_dir / "sft-call-failed.editor.jsonl").size(), 3u);
  fs::remove_all(m_dir / "sft-call-failed");
  auto retried = cli(editor_args(reasoning_tagged, roomy, "sft-call-failed"));
  ASSERT_TRUE(retried.succeeded()) << retried.err;
  EXPECT_EQ(flaky.requests(), 5);  // only the failed one asked again
  json retried_m = read_json(m_dir / "sft-call-failed" / "manifest.json");
  EXPECT_EQ(retried_m["counts"]["out"], 4);
  EXPECT_EQ(retried_m["editor"]["reused"], 3);
  EXPECT_EQ(retried_m["editor"]["asked"], 1);
  EXPECT_EQ(retried_m["editor"]["call_failed"], 0);
  EXPECT_EQ(read_jsonl(m_dir / "sft-call-failed.editor.jsonl").size(), 4u);

  // (c) A kill -9 mid-append leaves a torn last line: ignored (that edit asked again, the line cut
  // before the new one is appended). Damage anywhere else is refused in one line, nothing written.
  use_editor(editor2);
  const std::string whole = read(tagged_checkpoint);
  std::size_t third_end = 0;
  for (int i = 0; i < 3; ++i) third_end = whole.find('\n', third_end) + 1;
  const std::string torn = whole.substr(0, third_end) + whole.substr(third_end, (whole.size() - third_end) / 2);
  ASSERT_TRUE(write_file_atomic(m_dir / "sft-torn.editor.jsonl", torn));
  auto torn_run = cli(editor_args(reasoning_tagged, roomy, "sft-torn"));
  ASSERT_TRUE(torn_run.succeeded()) << torn_run.err;
  EXPECT_EQ(editor2.requests(), 5);
  json om = read_json(m_dir / "sft-torn" / "manifest.json");
  EXPECT_EQ(om["editor"]["reused"], 3);
  EXPECT_EQ(om["editor"]["asked"], 1);
  EXPECT_EQ(om["editor"]["checkpoint_torn_tail_ignored"], true);
  EXPECT_EQ(read(m_dir / "sft-torn" / "sft.jsonl"), first_rows);
  EXPECT_EQ(read(m_dir / "sft-torn.editor.jsonl"), whole);  // the torn line replaced by the whole one
  ASSERT_TRUE(write_file_atomic(m_dir / "sft-damaged.editor.jsonl",
                                whole.substr(0, whole.find('\n') + 1) + "{\"format\": \n" + whole.substr(whole.find('\n') + 1)));
  auto damaged = cli(editor_args(reasoning_tagged, roomy, "sft-damaged"));
  EXPECT_NE(damaged.exit_code, 0);
  EXPECT_EQ(nonempty_lines(damaged.err), 1) << damaged.err;
  EXPECT_NE(damaged.err.find("sft-damaged.editor.jsonl:2"), std::string::npos) << damaged.err;
  EXPECT_FALSE(fs::exists(m_dir / "sft-damaged"));
  EXPECT_EQ(editor2.requests(), 5);

  // (d) Changed rationales (the same row ids) never reuse the old edits, though the checkpoint holds them.
  fake_llm_server changed_reasoner;
  std::string long_text2 = long_text;
  long_text2.replace(long_text2.find("tabulate"), 8, "enumerate");
  changed_reasoner.add_rule("tag-c", {tagged("WORD-D"), long_text2});
  changed_reasoner.add_rule("tag-n", {tagged("WORD-E"), long_text2});
  changed_reasoner.set_default_reply(long_text2);
  const fs::path reasoning_changed = m_dir / "reasoning-changed";
  auto rc = cli(reason_args(changed_reasoner, pairs, reasoning_changed));
  ASSERT_TRUE(rc.succeeded()) << rc.err;
  ASSERT_TRUE(write_file_atomic(m_dir / "sft-changed.editor.jsonl", whole));
  auto changed = cli(editor_args(reasoning_changed, roomy, "sft-changed"));
  ASSERT_TRUE(changed.succeeded()) << changed.err;
  EXPECT_EQ(editor2.requests(), 9);
  json cm = read_json(m_dir / "sft-changed" / "manifest.json");
  EXPECT_EQ(cm["editor"]["reused"], 0);
  EXPECT_EQ(cm["editor"]["asked"], 4);
  EXPECT_EQ(read_jsonl(m_dir / "sft-changed.editor.jsonl").size(), 8u);
  fake_llm_server strict_reasoner;
  strict_reasoner.add_rule("tag-c", {tagged("WORD-C"), rationale(4)});
  strict_reasoner.set_default_reply(rationale(4));
  auto strict = reason_args(strict_reasoner, pairs, m_dir / "reasoning-no-editor");
  strict.push_back("--no-editor");
  auto rn = cli(strict);
  ASSERT_TRUE(rn.succeeded()) << rn.err;
  EXPECT_EQ(strict_reasoner.requests(), 5);  // the tagged reply asked for again
  EXPECT_EQ(read_json(m_dir / "reasoning-no-editor" / "manifest.json")["counts"]["problems"]["forbidden_marker"], 1);

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

  // A task with fewer failed turns than the cap: upstream's builder stopped, so does mining.
  refused({"fixit", "mine", run.string(), "--out", (m_dir / "m4").string(), "--cap-per-definition", "5"}, m_dir / "m4",
          "gemm_n7168_k5120 has only 2 rows, need 5; lower --cap-per-definition or pass --allow-underfilled-definitions");

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
