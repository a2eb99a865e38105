// The supervision arms end to end through the `ptxbench` binary: a replay model (its kernels fail
// twice, then pass) and the fake evaluator run each arm; the trajectories record the guidance hash or
// the retrieved notes per turn; `ptxbench metrics` puts the arms side by side; bad inputs exit 2 with
// one line; `notes collect` turns a pairs directory into a notes file with a replay teacher.
#include <algorithm>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/process.h"
#include "core/sha256.h"
#include "note_fixtures.h"
#include "test_support.h"

namespace ptxbench::supervision {
namespace {

namespace fs = std::filesystem;

const std::string k_cli_host =
    "void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t s) {\n"
    "  gemm_kernel<<<1, 128, 0, s>>>();\n}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n";
const std::string k_turn0 =  // fails to compile (the fake evaluator's marker)
    "#include <ptxbench/abi.h>\n__global__ void gemm_kernel() {\n  FAKE_COMPILE_ERROR;\n"
    "  asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0}, %1, %2;\");\n}\n" + k_cli_host;
const std::string k_turn1 =  // wrong values
    "#include <ptxbench/abi.h>\n__global__ void gemm_kernel() {\n  // FAKE_WRONG\n"
    "  asm volatile(\"wgmma.fence.sync.aligned;\");\n}\n" + k_cli_host;
const std::string k_turn2 =  // correct and target-correct (mentions wgmma), 0.9x
    "#include <ptxbench/abi.h>\n__global__ void gemm_kernel() {\n  // FAKE_SPEEDUP=0.9\n"
    "  asm volatile(\"wgmma.fence.sync.aligned;\");\n  asm volatile(\"wgmma.commit_group.sync.aligned;\");\n}\n" + k_cli_host;

const std::string k_running_t0 = "gemm_n7168_k5120__h200__base__t0";

class SupervisionCli : public ::testing::Test {
 protected:
  void SetUp() override {
    m_bin = ptxbench::testing::bin_dir() / "ptxbench";
    if (!fs::exists(m_bin)) GTEST_SKIP() << "build the `ptxbench` target first (" << m_bin << " is missing)";
    m_dir = ptxbench::testing::make_temp_dir("supcli");
    ordered_json replay = {{"messages", ordered_json::array()}};
    for (const auto& k : {k_turn0, k_turn1, k_turn2})
      replay["messages"].push_back({{"role", "assistant"}, {"content", "Here it is.\n```cuda\n" + k + "```\n"}});
    ASSERT_TRUE(write_file_atomic(m_dir / "replay.json", replay.dump()));
    m_guidance = "---\nformat: ptxbench.guidance/1\ntitle: wgmma pitfalls\ntasks: gemm_n7168_k5120\n---\n"
                 "# GUIDANCE-BODY\nAlways fence before wgmma.\n";
    ASSERT_TRUE(write_file_atomic(m_dir / "guidance.md", m_guidance));
    // Notes: "leak" was written from turn 0 of the trajectory t0 itself (its wrong kernel is exactly
    // turn 0's), "near" from another trajectory with the same wrong kernel, "far" unrelated.
    using ptxbench::testing::make_test_note;
    m_notes = {make_test_note({"leak", "gemm_n7168_k5120", k_running_t0, k_turn0, "// FIXED-LEAK\n", {"wgmma.leak"}, 0.9}),
               make_test_note({"near", "gemm_n7168_k5120", "elsewhere__t9", k_turn0, "// FIXED-NEAR\n", {"wgmma.fence"}, 0.5}),
               make_test_note({"far", "mha_fwd_d128", "elsewhere__t3",
                               "__global__ void softmax_rows(float* x) { __shared__ float row_max[128]; }\n",
                               "// FIXED-FAR\n", {"online softmax"}, 0.2})};
    ptxbench::testing::write_notes_file(m_dir / "notes.jsonl", m_notes);
  }
  void TearDown() override {
    if (!m_dir.empty()) fs::remove_all(m_dir);
  }

  process_result ptx(std::vector<std::string> args) {
    process_spec spec;
    spec.argv = {m_bin.string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout_s = 120;
    spec.env_overrides.emplace_back("PTXBENCH_ROOT", ptxbench::testing::repo_root().string());
    return run_process(spec);
  }

  process_result run_arm(const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> a = {"run", "--model", "replay:" + (m_dir / "replay.json").string(), "--tasks",
                                  "gemm_n7168_k5120", "--variants", "base", "--trajectories", "2", "--turns", "3",
                                  "--out", (m_dir / name).string(), "--evaluator", "fake", "-q"};
    a.insert(a.end(), extra.begin(), extra.end());
    return ptx(a);
  }

  ordered_json trajectory(const std::string& run, const std::string& stem) {
    auto text = read_text_file(m_dir / run / "trajectories" / (stem + ".json"), 64u << 20);
    EXPECT_TRUE(text) << text.err().message;
    return text ? *parse_json(*text, stem) : ordered_json();
  }

  static const ordered_json& feedback(const ordered_json& t, int turn) { return t["messages"][3 + 2 * turn]; }
  static const ordered_json& sup(const ordered_json& t, int turn) {
    return feedback(t, turn)["extra"]["ptxbench"]["supervision"];
  }

  // One line on stderr, exit 2.
  static void expect_usage_error(const process_result& r, const std::string& fragment) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  }

  fs::path m_bin, m_dir;
  std::string m_guidance;
  std::vector<repair_note> m_notes;
};

TEST_F(SupervisionCli, EachArmRecordsItsSupervisionAndMetricsPutsThemSideBySide) {
  auto base = run_arm("base", {});
  ASSERT_TRUE(base.succeeded()) << base.err;
  auto t = trajectory("base", k_running_t0);
  EXPECT_FALSE(t["info"]["ptxbench"].contains("supervision"));
  EXPECT_FALSE(feedback(t, 0)["extra"]["ptxbench"].contains("supervision"));

  // Guidance: the hash in info.ptxbench and in every turn, the document in the system prompt.
  auto guided = run_arm("guidance", {"--guidance", (m_dir / "guidance.md").string()});
  ASSERT_TRUE(guided.succeeded()) << guided.err;
  const std::string sha = sha256_hex(m_guidance);
  for (const auto& stem : {k_running_t0, std::string("gemm_n7168_k5120__h200__base__t1")}) {
    t = trajectory("guidance", stem);
    const auto& s = t["info"]["ptxbench"]["supervision"];
    EXPECT_EQ(s["arm"], "guidance:" + sha.substr(0, 8));
    EXPECT_EQ(s["guidance"]["sha256"], sha);
    EXPECT_EQ(s["guidance"]["applies"], true);
    EXPECT_NE(t["messages"][0]["content"].get<std::string>().find("# GUIDANCE-BODY"), std::string::npos);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(sup(t, k)["guidance_sha256"], sha) << k;
      EXPECT_FALSE(sup(t, k).contains("retrieval"));
    }
  }
  auto plan = parse_json(*read_text_file(m_dir / "guidance" / "plan.json", 1 << 20), "plan");
  EXPECT_EQ((*plan)["supervision"]["guidance"]["sha256"], sha);
  EXPECT_NE((*plan)["argv"].dump().find("--guidance"), std::string::npos);

  // Notes: retrieval after each failed turn, recorded with scores; leak control on t0.
  auto notes = run_arm("notes", {"--repair-notes", (m_dir / "notes.jsonl").string(), "--retrieval", "notes"});
  ASSERT_TRUE(notes.succeeded()) << notes.err;
  t = trajectory("notes", k_running_t0);
  const auto& s0 = t["info"]["ptxbench"]["supervision"];
  EXPECT_EQ(s0["arm"], "notes");
  EXPECT_EQ(s0["notes"]["excluded_keys"], (ordered_json{"leak"}));
  EXPECT_EQ(s0["notes"]["k1"], 1.5);
  for (int k = 0; k < 2; ++k) {
    const auto& r = sup(t, k)["retrieval"];
    ASSERT_TRUE(r.is_object()) << k;
    EXPECT_EQ(r["mode"], "notes");
    EXPECT_EQ(r["groups"][0]["notes"], (ordered_json{"near"})) << r.dump();
    EXPECT_GT(r["groups"][0]["score"].get<double>(), 0);
    for (const auto& g : r["groups"])
      for (const auto& key : g["notes"]) EXPECT_NE(key, "leak");
    std::string content = feedback(t, k)["content"];
    EXPECT_NE(content.find("Repair notes from earlier fixes"), std::string::npos);
    EXPECT_NE(content.find("wgmma.fence"), std::string::npos);
    EXPECT_EQ(content.find("FIXED-NEAR"), std::string::npos);  // notes only: no kernel
    EXPECT_EQ(content.find("wgmma.leak"), std::string::npos);
  }
  EXPECT_FALSE(sup(t, 2).contains("retrieval"));  // turn 2 passed: nothing retrieved
  EXPECT_EQ(sup(t, 2)["arm"], "notes");
  // t1 is another trajectory: the note from t0 is allowed there, and it matches turn 0 best.
  auto t1 = trajectory("notes", "gemm_n7168_k5120__h200__base__t1");
  EXPECT_EQ(t1["info"]["ptxbench"]["supervision"]["notes"]["excluded_keys"], ordered_json::array());
  EXPECT_EQ(sup(t1, 0)["retrieval"]["groups"][0]["notes"], (ordered_json{"leak", "near"}));

  // Notes and the best fixed kernel: the solution-bearing arm.
  auto nk = run_arm("notes_kernel", {"--repair-notes", (m_dir / "notes.jsonl").string(), "--retrieval", "notes+kernel"});
  ASSERT_TRUE(nk.succeeded()) << nk.err;
  t = trajectory("notes_kernel", k_running_t0);
  EXPECT_EQ(t["info"]["ptxbench"]["supervision"]["arm"], "notes+kernel");
  EXPECT_EQ(sup(t, 0)["retrieval"]["fixed_kernel"]["note"], "near");
  EXPECT_NE(feedback(t, 0)["content"].get<std::string>().find("FIXED-NEAR"), std::string::npos);
  EXPECT_EQ(feedback(t, 0)["content"].get<std::string>().find("FIXED-LEAK"), std::string::npos);

  // Resume refuses another guidance document or notes file.
  ASSERT_TRUE(write_file_atomic(m_dir / "guidance2.md", m_guidance + "One more line.\n"));
  expect_usage_error(run_arm("guidance", {"--guidance", (m_dir / "guidance2.md").string()}),
                     "was written for a different run: supervision.guidance.sha256 is");
  expect_usage_error(run_arm("guidance", {}), "was written for a different run");
  expect_usage_error(run_arm("notes", {"--repair-notes", (m_dir / "notes.jsonl").string(), "--retrieval", "notes+kernel"}),
                     "supervision.notes.mode is \"notes\" in the file but \"notes+kernel\" now");
  // Without plan.json the trajectory files themselves refuse the other document.
  fs::rename(m_dir / "guidance" / "plan.json", m_dir / "guidance-plan.json.bak");  // outside: the folder stays a run's
  expect_usage_error(run_arm("guidance", {"--guidance", (m_dir / "guidance2.md").string()}),
                     "supervision.guidance.sha256 is \"" + sha.substr(0, 20));
  fs::rename(m_dir / "guidance-plan.json.bak", m_dir / "guidance" / "plan.json");
  // The same command resumes (nothing left to do).
  auto again = run_arm("guidance", {"--guidance", (m_dir / "guidance.md").string()});
  EXPECT_TRUE(again.succeeded()) << again.err;

  // Metrics: the Table-4 view with the four arms, the solution-bearing one flagged.
  auto m = ptx({"metrics", (m_dir / "base").string(), (m_dir / "guidance").string(), (m_dir / "notes").string(),
                (m_dir / "notes_kernel").string(), "--turn-limits", "1,2,3", "--out", (m_dir / "metrics").string()});
  ASSERT_TRUE(m.succeeded()) << m.err;
  EXPECT_NE(m.out.find("Supervision arms (Table 4 layout)"), std::string::npos) << m.out;
  // Every arm sees the same replayed kernels: 1/3 correct (and target-correct) by turn 3.
  for (const std::string& arm : std::vector<std::string>{"base", "guidance:" + sha.substr(0, 8), "notes", "notes+kernel †"})
    EXPECT_NE(m.out.find("| replay:" + (m_dir / "replay.json").string() + " | " + arm + " | 0.0 / 0.0 / 33.3 |"),
              std::string::npos)
        << arm << "\n" << m.out;
  EXPECT_NE(m.out.find("† solution-bearing arm"), std::string::npos);
  auto arms_csv = read_text_file(m_dir / "metrics" / "arms.csv", 1 << 20);
  ASSERT_TRUE(arms_csv);
  EXPECT_NE(arms_csv->find(",notes+kernel,1,3,6,2,2,"), std::string::npos) << *arms_csv;
  EXPECT_TRUE(fs::exists(m_dir / "metrics" / "arms_fast_p.csv"));
  EXPECT_TRUE(fs::exists(m_dir / "metrics" / "table4.md"));
  auto turns_csv = read_text_file(m_dir / "metrics" / "turns.csv", 1 << 20);
  EXPECT_NE(turns_csv->find(",notes+kernel\n"), std::string::npos);
  auto report = ptx({"report", (m_dir / "base").string(), (m_dir / "notes_kernel").string(), "--out",
                     (m_dir / "report.html").string()});
  ASSERT_TRUE(report.succeeded()) << report.err;
  auto html = read_text_file(m_dir / "report.html", 16u << 20);
  EXPECT_NE(html->find("Supervision arms (Table 4 view)"), std::string::npos);
  EXPECT_NE(html->find(" by arm (gemm_n7168_k5120, sm_90a)"), std::string::npos);
  EXPECT_NE(html->find("notes+kernel †"), std::string::npos);
}

TEST_F(SupervisionCli, ArmsAreReproducibleFromWhatTheTrajectoryRecords) {
  // Two runs of the notes arm with the same --seed retrieve the same notes with the same scores, and
  // the records say why: the seed, the note set, the corpus after exclusions and the parameters.
  for (const char* run : {"notes_a", "notes_b"}) {
    auto r = run_arm(run, {"--repair-notes", (m_dir / "notes.jsonl").string(), "--retrieval", "notes", "--seed", "42"});
    ASSERT_TRUE(r.succeeded()) << r.err;
  }
  auto g = run_arm("guided", {"--guidance", (m_dir / "guidance.md").string(), "--seed", "42"});
  ASSERT_TRUE(g.succeeded()) << g.err;
  // The corpus sha256 as docs/supervision.md defines it, computed here from the notes.
  auto corpus_sha = [&](const std::vector<std::string>& keys) {
    std::string text = "ptxbench.retrieval-corpus/1\nterms identifiers+string-words/1\n";
    std::string last_group;
    for (const auto& n : m_notes) {
      if (std::find(keys.begin(), keys.end(), n.pair.key) == keys.end()) continue;
      if (n.pair.wrong_sha256 != last_group) text += "group " + n.pair.wrong_sha256 + "\n";
      last_group = n.pair.wrong_sha256;
      text += "note " + n.pair.key + " " + sha256_hex(to_json(n).dump()) + "\n";
    }
    return sha256_hex(text);
  };
  for (const std::string& stem : {k_running_t0, std::string("gemm_n7168_k5120__h200__base__t1")}) {
    auto a = trajectory("notes_a", stem), b = trajectory("notes_b", stem), c = trajectory("guided", stem);
    // The trajectory's seed is the same in every arm run with the same --seed (so are the task and variant).
    EXPECT_EQ(a["info"]["ptxbench"]["seed"], b["info"]["ptxbench"]["seed"]);
    EXPECT_EQ(a["info"]["ptxbench"]["seed"], c["info"]["ptxbench"]["seed"]);
    const auto& sa = a["info"]["ptxbench"]["supervision"];
    EXPECT_EQ(sa, b["info"]["ptxbench"]["supervision"]) << stem;
    EXPECT_EQ(sa["notes"]["sha256"], sha256_hex(*read_file(m_dir / "notes.jsonl", 1 << 20)));
    const auto& corpus = sa["notes"]["corpus"];
    EXPECT_EQ(corpus["terms"], "identifiers+string-words/1");
    if (stem == k_running_t0) {  // "leak" came from this trajectory: not in its corpus
      EXPECT_EQ(corpus["notes"], 2);
      EXPECT_EQ(corpus["groups"], 2);
      EXPECT_EQ(corpus["sha256"], corpus_sha({"near", "far"}));
    } else {
      EXPECT_EQ(corpus["notes"], 3);
      EXPECT_EQ(corpus["sha256"], corpus_sha({"leak", "near", "far"}));
    }
    for (int k = 0; k < 3; ++k) EXPECT_EQ(sup(a, k), sup(b, k)) << stem << " turn " << k;
    EXPECT_EQ(feedback(a, 0)["content"], feedback(b, 0)["content"]);
  }
}

TEST_F(SupervisionCli, BadInputIsOneLineAndExitTwo) {
  // A notes file of another format (a Fixit pairs line, a trajectory, CSV).
  ASSERT_TRUE(write_file_atomic(m_dir / "pairs.jsonl", R"({"id": "p0", "task": "gemm_n7168_k5120", "wrong": {}})" "\n"));
  expect_usage_error(run_arm("x1", {"--repair-notes", (m_dir / "pairs.jsonl").string()}), "not a repair note");
  expect_usage_error(run_arm("x2", {"--repair-notes", (m_dir / "replay.json").string()}), "not a repair note");
  ASSERT_TRUE(write_file_atomic(m_dir / "notes.csv", "model,arch\nx,y\n"));
  expect_usage_error(run_arm("x3", {"--repair-notes", (m_dir / "notes.csv").string()}), "invalid JSON");
  // A guidance file that is binary, huge, or without its front matter.
  static const char k_binary[] = "---\nformat: ptxbench.guidance/1\ntasks: *\n---\n\x7f" "ELF\0\0\1";
  ASSERT_TRUE(write_file_atomic(m_dir / "bin.md", std::string(k_binary, sizeof(k_binary) - 1)));
  expect_usage_error(run_arm("x4", {"--guidance", (m_dir / "bin.md").string()}), "binary file");
  ASSERT_TRUE(write_file_atomic(m_dir / "huge.md", "---\nformat: ptxbench.guidance/1\ntasks: *\n---\n" + std::string(1 << 20, 'x')));
  expect_usage_error(run_arm("x5", {"--guidance", (m_dir / "huge.md").string()}), "over the limit");
  ASSERT_TRUE(write_file_atomic(m_dir / "plain.md", "# Just markdown\n"));
  expect_usage_error(run_arm("x6", {"--guidance", (m_dir / "plain.md").string()}), "expected a front matter first");
  ASSERT_TRUE(write_file_atomic(m_dir / "mha.md", "---\nformat: ptxbench.guidance/1\nproblems: mha_bwd\n---\nText\n"));
  expect_usage_error(run_arm("x10", {"--guidance", (m_dir / "mha.md").string()}), "names none of this run's tasks");
  // Retrieval settings without notes, or out of range.
  expect_usage_error(run_arm("x7", {"--retrieval", "notes"}), "--retrieval needs --repair-notes");
  expect_usage_error(run_arm("x8", {"--repair-notes", (m_dir / "notes.jsonl").string(), "--retrieval", "kernel"}),
                     "--retrieval kernel: expected notes or notes+kernel");
  expect_usage_error(run_arm("x9", {"--repair-notes", (m_dir / "notes.jsonl").string(), "--retrieval-b", "2"}),
                     "BM25 b must be in [0, 1]");
  for (const char* run : {"x1", "x4", "x7", "x9"}) EXPECT_FALSE(fs::exists(m_dir / run / "plan.json")) << run;
  // A Fixit pairs directory where the notes belong.
  ptxbench::testing::write_pairs_dir(m_dir / "pairs_dir", {{"p0"}});
  expect_usage_error(run_arm("x11", {"--repair-notes", (m_dir / "pairs_dir").string()}),
                     "a Fixit pairs directory, not a notes file; turn it into notes with `ptxbench notes collect");
  // notes: check and collect on the wrong things.
  expect_usage_error(ptx({"notes", "check", (m_dir / "pairs.jsonl").string()}), "not a repair note");
  expect_usage_error(ptx({"notes", "collect", m_dir.string(), "--model", "replay:" + (m_dir / "replay.json").string(),
                          "--out", (m_dir / "n.jsonl").string()}),
                     "not a `ptxbench fixit pairs` directory");
}

TEST_F(SupervisionCli, NotesCollectTurnsAPairsDirectoryIntoNotes) {
  ptxbench::testing::write_pairs_dir(m_dir / "pairs", {{"p0"}, {"p1"}});
  ordered_json teacher = {{"messages", {{{"role", "assistant"},
                                         {"content", "```json\n" + ptxbench::testing::note_object({"wgmma.fence"}).dump() + "\n```"}}}}};
  ASSERT_TRUE(write_file_atomic(m_dir / "teacher.json", teacher.dump()));
  std::vector<std::string> args = {"notes", "collect", (m_dir / "pairs").string(), "--model",
                                   "replay:" + (m_dir / "teacher.json").string(), "--out", (m_dir / "out" / "notes.jsonl").string()};
  auto r = ptx(args);
  ASSERT_TRUE(r.succeeded()) << r.err;
  EXPECT_NE(r.err.find("2 pairs: 2 notes written now, 0 already there"), std::string::npos) << r.err;
  auto set = read_note_set(m_dir / "out" / "notes.jsonl");
  ASSERT_TRUE(set) << set.err().message;
  ASSERT_EQ(set->notes.size(), 2u);
  EXPECT_EQ(set->notes[0].pair.source.trajectory, "gemm_n7168_k5120__h200__base__t0");
  EXPECT_EQ(set->notes[0].pair.origin["pairs_manifest_sha256"].get<std::string>().size(), 64u);
  r = ptx(args);  // resume: nothing to do
  ASSERT_TRUE(r.succeeded()) << r.err;
  EXPECT_NE(r.err.find("0 notes written now, 2 already there"), std::string::npos) << r.err;
  auto check = ptx({"notes", "check", (m_dir / "out" / "notes.jsonl").string()});
  ASSERT_TRUE(check.succeeded()) << check.err;
  EXPECT_NE(check.out.find("2 notes (2 instruction notes) over 1 wrong kernels"), std::string::npos) << check.out;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Issue 27, new-user probes 1, 8 and 9: each refusal is exit 2 with its exact first line, and the
// files involved are left exactly as they were.
TEST_F(SupervisionCli, NotesCollectNeverCutsAFileItDidNotWrite) {
  ptxbench::testing::write_pairs_dir(m_dir / "pairs", {{"p0"}});
  ordered_json teacher = {{"messages", {{{"role", "assistant"},
                                         {"content", "```json\n" + ptxbench::testing::note_object({"x"}).dump() + "\n```"}}}}};
  ASSERT_TRUE(write_file_atomic(m_dir / "teacher.json", teacher.dump()));
  std::string trajectory = R"({"format": "ptxbench.trajectory/1", "messages": [)" + std::string(74000, ' ') + "]}";
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"important.txt", "remember: fence before wgmma"}, {"t.json", trajectory}}) {
    const fs::path file = m_dir / name;
    ASSERT_TRUE(write_file_atomic(file, text));
    auto r = ptx({"notes", "collect", (m_dir / "pairs").string(), "--model", "replay:" + (m_dir / "teacher.json").string(),
                  "--out", file.string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(first_line(r.err),
              fmt::format("ptxbench: {}: its last line ({} bytes) has no newline and is not a half-written "
                          "ptxbench.repair-note/1 record; not touching a file this command did not write (choose "
                          "another file)",
                          file.string(), text.size()));
    EXPECT_EQ(*read_file(file, 1 << 20), text) << name << " was changed";
  }
}

TEST_F(SupervisionCli, ReasonTakesOnlyItsOwnKindOfSource) {
  ptxbench::testing::write_pairs_dir(m_dir / "pairs", {{"p0"}});
  fs::create_directories(m_dir / "kernels");
  ASSERT_TRUE(write_file_atomic(m_dir / "kernels" / "manifest.json", R"({"format": "ptxbench.kernelgen/1"})"));
  const std::string model = "replay:" + (m_dir / "replay.json").string();
  auto k = ptx({"kernelgen", "reason", (m_dir / "pairs").string(), "--model", model, "--out", (m_dir / "r1").string()});
  EXPECT_EQ(k.exit_code, 2) << k.err;
  EXPECT_EQ(k.err, fmt::format("ptxbench: {}: a pairs directory (`ptxbench fixit pairs`); `ptxbench kernelgen reason` "
                               "takes a kernels directory (`ptxbench kernelgen collect`)\n",
                               (m_dir / "pairs").string()));
  auto f = ptx({"fixit", "reason", (m_dir / "kernels").string(), "--model", model, "--out", (m_dir / "r2").string()});
  EXPECT_EQ(f.exit_code, 2) << f.err;
  EXPECT_EQ(f.err, fmt::format("ptxbench: {}: a kernels directory (`ptxbench kernelgen collect`); `ptxbench fixit reason` "
                               "takes a pairs directory (`ptxbench fixit pairs`)\n",
                               (m_dir / "kernels").string()));
  EXPECT_FALSE(fs::exists(m_dir / "r1"));
  EXPECT_FALSE(fs::exists(m_dir / "r2"));
}

TEST_F(SupervisionCli, AResumeWithoutTheGuidanceNamesItsArmAndARunNeverWritesIntoAnotherCommandsFolder) {
  ASSERT_TRUE(run_arm("g", {"--guidance", (m_dir / "guidance.md").string()}).succeeded());
  auto r = run_arm("g", {});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::string line = first_line(r.err);
  EXPECT_EQ(line.find("arm '?'"), std::string::npos) << line;
  const std::string sha8 = sha256_hex(m_guidance).substr(0, 8);
  EXPECT_EQ(line, fmt::format("ptxbench: {} was written for a different run: the file was written under supervision arm "
                              "'guidance:{}' but this run uses none; re-run the same command to resume, or choose a new --out",
                              (m_dir / "g" / "plan.json").string(), sha8));
  // A folder another command filled (here: a notes file) is not a run's.
  fs::create_directories(m_dir / "other");
  ASSERT_TRUE(write_file_atomic(m_dir / "other" / "notes.jsonl", "{}\n"));
  auto o = run_arm("other", {});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err, fmt::format("ptxbench: --out {} holds files a run did not write (notes.jsonl); a run writes into a new "
                               "folder or resumes its own (plan.json): choose a new --out\n",
                               (m_dir / "other").string()));
  EXPECT_FALSE(fs::exists(m_dir / "other" / "plan.json"));
  EXPECT_FALSE(fs::exists(m_dir / "other" / ".run.lock"));
}

}  // namespace
}  // namespace ptxbench::supervision
