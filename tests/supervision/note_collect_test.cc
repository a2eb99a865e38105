// Note collection with a scripted teacher: valid replies, replies corrected after the schema's
// complaints, replies rejected after the attempts run out, an API failure, resume, and kill -9.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "note_fixtures.h"
#include "core/jsonl_file.h"
#include "supervision/note_collect.h"
#include "test_support.h"

namespace ptxbench::supervision {
namespace {

namespace fs = std::filesystem;

repair_pair make_pair(const std::string& key) {
  repair_pair p;
  p.key = key;
  p.source = {"runs/a", "gemm_n7168_k5120", "base", "gemm_n7168_k5120__h200__base__t0", 1, "compile_error"};
  p.wrong_kernel = "// PAIR " + key + "\n__global__ void wrong() {}\n";
  p.feedback = "kernel.cu(2): error: identifier \"undefined_symbol\" is undefined";
  p.fixed_kernel = "__global__ void fixed_" + key + "() {}\n";
  p.wrong_sha256 = sha256_hex(p.wrong_kernel);
  p.feedback_sha256 = sha256_hex(p.feedback);
  p.fixed_sha256 = sha256_hex(p.fixed_kernel);
  return p;
}

std::string key_of(const agent::completion_request& r) {
  const std::string& user = r.messages.at(1).content;
  auto pos = user.find("// PAIR ");
  return pos == std::string::npos ? "" : user.substr(pos + 8, user.find('\n', pos) - pos - 8);
}

std::string valid_reply() {
  return "Here is the note.\n```json\n" + ptxbench::testing::note_object({"wgmma.fence"}).dump(2) + "\n```\n";
}

// Replies by pair key and attempt: "ok" pairs answer well at once, "fix" pairs after one complaint,
// "bad" pairs never, "api" pairs fail at the API.
class scripted_teacher final : public agent::provider {
 public:
  explicit scripted_teacher(int delay_ms = 0) : m_delay_ms(delay_ms) {}
  agent::call_result complete(const agent::completion_request& r) override {
    if (m_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(m_delay_ms));
    std::string key = key_of(r);
    {
      std::lock_guard lock(m_mutex);
      requests.push_back(r);
    }
    agent::call_result out;
    if (key.rfind("api", 0) == 0) {
      out.failure = {agent::failure_kind::retries_exhausted, 503, "HTTP 503 after 5 attempts", {}};
      return out;
    }
    agent::completion c;
    if (key.rfind("bad", 0) == 0) c.content = "I think the fence is missing.";
    else if (key.rfind("fix", 0) == 0 && r.turn == 0) {
      auto obj = ptxbench::testing::note_object({"wgmma.fence"});
      obj.erase("tags");
      c.content = obj.dump();
    } else {
      c.content = valid_reply();
    }
    out.reply = c;
    return out;
  }
  std::vector<agent::completion_request> requests;

 private:
  int m_delay_ms;
  std::mutex m_mutex;
};

class SupervisionCollect : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = ptxbench::testing::make_temp_dir("collect"); }
  void TearDown() override { fs::remove_all(m_dir); }
  collect_options options(int parallel = 2) {
    collect_options o;
    o.out = m_dir / "notes.jsonl";
    o.teacher = "scripted";
    o.parallel = parallel;
    return o;
  }
  fs::path m_dir;
};

TEST_F(SupervisionCollect, TeacherPromptHoldsTheTaskThePairAndTheSchema) {
  auto msgs = teacher_messages(make_pair("ok0"), "Write a GEMM.\n");
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_NE(msgs[0].content.find("\"instruction_notes\""), std::string::npos);
  EXPECT_NE(msgs[1].content.find("Write a GEMM."), std::string::npos);
  EXPECT_NE(msgs[1].content.find("// PAIR ok0"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("undefined_symbol"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("fixed_ok0"), std::string::npos);
  EXPECT_TRUE(reply_object(valid_reply()));
  EXPECT_TRUE(reply_object("{\"a\": 1}"));
  EXPECT_EQ(reply_object("no json here").err().message, "the reply holds no JSON object");
  EXPECT_FALSE(reply_object("```json\n[1, 2]\n```"));
}

TEST_F(SupervisionCollect, ValidatesRetriesRejectsAndResumes) {
  std::vector<repair_pair> pairs = {make_pair("ok0"), make_pair("fix1"), make_pair("bad2"), make_pair("ok3")};
  scripted_teacher teacher;
  collect_services s{&teacher, nullptr, nullptr};
  auto out = collect_notes(pairs, {}, options(), s);
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_EQ(out->status, exit_status::ok);
  EXPECT_EQ(out->written, 3);
  EXPECT_EQ(out->rejected, 1);
  EXPECT_EQ(out->teacher_calls, 1 + 2 + 3 + 1);
  // The correction request carries the schema's complaint.
  bool told = false;
  for (const auto& r : teacher.requests)
    if (key_of(r) == "fix1" && r.turn == 1) {
      ASSERT_EQ(r.messages.size(), 4u);
      EXPECT_NE(r.messages[3].content.find("- tags: missing required field"), std::string::npos) << r.messages[3].content;
      told = true;
    }
  EXPECT_TRUE(told);
  auto set = read_note_set(m_dir / "notes.jsonl");
  ASSERT_TRUE(set) << set.err().message;
  std::set<std::string> keys;
  for (const auto& n : set->notes) {
    keys.insert(n.pair.key);
    if (n.pair.key == "fix1") {
      EXPECT_EQ(n.teacher["attempts"], 2);
    }
    EXPECT_EQ(n.teacher["model"], "scripted");
    EXPECT_EQ(n.pair.fixed_sha256, sha256_hex(n.pair.fixed_kernel));
  }
  EXPECT_EQ(keys, (std::set<std::string>{"ok0", "fix1", "ok3"}));
  auto rejected = read_jsonl(rejections_path(m_dir / "notes.jsonl"), 1 << 20);
  ASSERT_TRUE(rejected);
  ASSERT_EQ(rejected->records.size(), 1u);
  EXPECT_EQ(rejected->records[0].value["key"], "bad2");
  EXPECT_EQ(rejected->records[0].value["attempts"].size(), 3u);
  EXPECT_EQ(rejected->records[0].value["attempts"][0]["problems"][0], "the reply holds no JSON object");

  // The same command again: nothing to do.
  scripted_teacher again;
  collect_services s2{&again, nullptr, nullptr};
  out = collect_notes(pairs, {}, options(), s2);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->already_done, 3);
  EXPECT_EQ(out->already_rejected, 1);
  EXPECT_EQ(again.requests.size(), 0u);
  // --retry-rejected asks again for bad2 only.
  auto o = options();
  o.retry_rejected = true;
  out = collect_notes(pairs, {}, o, s2);
  ASSERT_TRUE(out);
  EXPECT_EQ(again.requests.size(), 3u);
  for (const auto& r : again.requests) EXPECT_EQ(key_of(r), "bad2");
  // Pairs that changed under the same key are refused, not mixed in.
  auto changed = pairs;
  changed[0].fixed_kernel = "__global__ void other() {}\n";
  changed[0].fixed_sha256 = sha256_hex(changed[0].fixed_kernel);
  auto refused = collect_notes(changed, {}, options(), s2);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.err().message.find("the note for pair 'ok0' was written for other kernels"), std::string::npos);
  // An output that is not a notes file is refused.
  ASSERT_TRUE(write_file_atomic(m_dir / "other.jsonl", "{\"format\": \"ptxbench.fixit-pairs/1\"}\n"));
  auto o2 = options();
  o2.out = m_dir / "other.jsonl";
  auto foreign = collect_notes(pairs, {}, o2, s2);
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.err().message.find("--out holds something other than notes"), std::string::npos);
}

TEST_F(SupervisionCollect, TeacherSeedsDependOnThePairAndAreRecorded) {
  // A seed per pair, independent of collection order and of the other pairs; attempt k sends seed + k.
  EXPECT_EQ(teacher_seed(0, "fix1"), teacher_seed(0, "fix1"));
  EXPECT_NE(teacher_seed(0, "fix1"), teacher_seed(0, "ok0"));
  EXPECT_NE(teacher_seed(0, "fix1"), teacher_seed(1, "fix1"));
  EXPECT_LT(teacher_seed(7, "fix1"), uint64_t{1} << 52);
  std::vector<repair_pair> pairs = {make_pair("ok0"), make_pair("fix1"), make_pair("bad2")};
  scripted_teacher teacher;
  collect_services s{&teacher, nullptr, nullptr};
  auto o = options();
  o.seed = 7;
  auto out = collect_notes(pairs, {}, o, s);
  ASSERT_TRUE(out) << out.err().message;
  ASSERT_EQ(teacher.requests.size(), 1u + 2u + 3u);
  for (const auto& r : teacher.requests) {
    ASSERT_TRUE(r.seed.has_value());
    EXPECT_EQ(*r.seed, teacher_seed(7, key_of(r)) + static_cast<uint64_t>(r.turn)) << key_of(r) << " attempt " << r.turn;
  }
  auto set = read_note_set(m_dir / "notes.jsonl");
  ASSERT_TRUE(set) << set.err().message;
  for (const auto& n : set->notes) EXPECT_EQ(n.teacher["seed"], teacher_seed(7, n.pair.key)) << n.pair.key;
  auto rejected = read_jsonl(rejections_path(m_dir / "notes.jsonl"), 1 << 20);
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->records.at(0).value["seed"], teacher_seed(7, "bad2"));
  // Finishing the file under another --seed would mix two settings: refused, naming the pair.
  o.seed = 8;
  auto refused = collect_notes(pairs, {}, o, s);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.err().message.find("was written with another --seed"), std::string::npos) << refused.err().message;
  o.seed = 7;
  EXPECT_TRUE(collect_notes(pairs, {}, o, s));
}

TEST_F(SupervisionCollect, AnApiFailureStopsTheRunResumably) {
  std::vector<repair_pair> pairs = {make_pair("ok0"), make_pair("api1"), make_pair("ok2")};
  scripted_teacher teacher;
  collect_services s{&teacher, nullptr, nullptr};
  auto out = collect_notes(pairs, {}, options(1), s);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, exit_status::infra);
  EXPECT_NE(out->message.find("teacher failed on pair api1: HTTP 503"), std::string::npos) << out->message;
  EXPECT_NE(out->message.find("run the same command again to resume"), std::string::npos);
  EXPECT_EQ(out->written, 1);
  EXPECT_FALSE(fs::exists(rejections_path(m_dir / "notes.jsonl")) &&
               fs::file_size(rejections_path(m_dir / "notes.jsonl")) > 0);  // an API failure is not a rejection
}

TEST_F(SupervisionCollect, KillNineAtAnyMomentThenResumeLosesAndRepeatsNothing) {
  std::vector<repair_pair> pairs;
  for (int i = 0; i < 60; ++i) pairs.push_back(make_pair("ok" + std::to_string(i)));
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    scripted_teacher slow(40);
    collect_services s{&slow, nullptr, nullptr};
    auto o = options(3);
    (void)collect_notes(pairs, {}, o, s);
    ::_exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "finished before the kill";
  auto partial = read_jsonl(m_dir / "notes.jsonl", 1 << 24);
  ASSERT_TRUE(partial) << partial.err().message;
  std::size_t before = partial->records.size();
  EXPECT_GT(before, 0u);
  EXPECT_LT(before, pairs.size());
  // Simulate the worst kill: half a record at the end.
  {
    auto text = *read_file(m_dir / "notes.jsonl", 1 << 24);
    ASSERT_TRUE(write_file_atomic(m_dir / "notes.jsonl", text + "{\"format\": \"ptxbench.repair-note/1\", \"key\": \"ok2"));
  }
  scripted_teacher counting;
  collect_services s{&counting, nullptr, nullptr};
  auto out = collect_notes(pairs, {}, options(3), s);
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_EQ(out->already_done, static_cast<int>(before));
  EXPECT_EQ(counting.requests.size(), pairs.size() - before);  // nothing finished is asked again
  auto set = read_note_set(m_dir / "notes.jsonl");
  ASSERT_TRUE(set) << set.err().message;  // the torn tail is gone, every key exactly once
  std::set<std::string> keys;
  for (const auto& n : set->notes) keys.insert(n.pair.key);
  EXPECT_EQ(keys.size(), pairs.size());
  EXPECT_EQ(set->notes.size(), pairs.size());
}

}  // namespace
}  // namespace ptxbench::supervision
