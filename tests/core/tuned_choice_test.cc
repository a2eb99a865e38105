#include "core/tuned_choice.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/file_lock.h"
#include "test_support.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A tuner that counts its calls and returns {"value": value}.
struct counting_tuner {
  int calls = 0;
  int value = 7;
  result<ordered_json> operator()() {
    ++calls;
    return ordered_json{{"value", value}};
  }
};

// A `use` that takes any entry with an integer "value" and records it.
struct recording_use {
  int seen = -1;
  int calls = 0;
  status operator()(const ordered_json& j) {
    ++calls;
    if (!j.contains("value") || !j["value"].is_number_integer()) return make_error("no value");
    seen = j["value"].get<int>();
    return ok();
  }
};

TEST(TunedChoice, TunesOnceThenLoadsFromTheFile) {
  auto dir = testing::make_temp_dir("tuned");
  counting_tuner tuner;
  recording_use use;
  auto first = remember_tuned_choice(dir, "gemm|M8 N8", std::ref(use), std::ref(tuner));
  ASSERT_TRUE(first) << first.err().message;
  EXPECT_FALSE(first->from_cache);
  EXPECT_EQ(first->why_tuned, "nothing remembered yet");
  EXPECT_FALSE(first->stale);
  EXPECT_EQ(first->path, dir / "baselines" / "gemm_M8_N8.json");
  EXPECT_EQ(first->choice, (ordered_json{{"key", "gemm|M8 N8"}, {"value", 7}}));
  EXPECT_EQ(tuner.calls, 1);
  EXPECT_EQ(use.calls, 0);
  EXPECT_EQ(slurp(first->path), "{\n  \"key\": \"gemm|M8 N8\",\n  \"value\": 7\n}\n");

  tuner.value = 8;  // a second tuning would say so
  auto second = remember_tuned_choice(dir, "gemm|M8 N8", std::ref(use), std::ref(tuner));
  ASSERT_TRUE(second) << second.err().message;
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->why_tuned, "");
  EXPECT_EQ(use.seen, 7);
  EXPECT_EQ(tuner.calls, 1);
  fs::remove_all(dir);
}

TEST(TunedChoice, WithoutACacheFolderItOnlyTunes) {
  counting_tuner tuner;
  recording_use use;
  auto r = remember_tuned_choice({}, "k", std::ref(use), std::ref(tuner));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->from_cache);
  EXPECT_EQ(r->why_tuned, "no cache folder");
  EXPECT_FALSE(r->stale);
  EXPECT_TRUE(r->path.empty());
  EXPECT_EQ(tuner.calls, 1);
}

TEST(TunedChoice, ACorruptFileIsTunedAgainAndOverwritten) {
  auto dir = testing::make_temp_dir("tuned");
  ASSERT_TRUE(write_file_atomic(tuned_choice_path(dir, "k"), "{\"key\": \"k\", \"val"));
  counting_tuner tuner;
  recording_use use;
  auto r = remember_tuned_choice(dir, "k", std::ref(use), std::ref(tuner));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->from_cache);
  EXPECT_NE(r->why_tuned.find("the remembered choice is unreadable"), std::string::npos) << r->why_tuned;
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(tuner.calls, 1);
  EXPECT_EQ(use.calls, 0);
  auto again = remember_tuned_choice(dir, "k", std::ref(use), std::ref(tuner));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(tuner.calls, 1);
  fs::remove_all(dir);
}

TEST(TunedChoice, AFileOfAnotherKeyIsNotTaken) {
  auto dir = testing::make_temp_dir("tuned");
  // "a|b" and "a b" share a file name; the key inside tells them apart.
  ASSERT_EQ(tuned_choice_path(dir, "a|b"), tuned_choice_path(dir, "a b"));
  ASSERT_TRUE(write_file_atomic(tuned_choice_path(dir, "a|b"), R"({"key": "a b", "value": 3})"));
  counting_tuner tuner;
  recording_use use;
  auto r = remember_tuned_choice(dir, "a|b", std::ref(use), std::ref(tuner));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->from_cache);
  EXPECT_NE(r->why_tuned.find("remembers another key (\"a b\"), not a|b"), std::string::npos) << r->why_tuned;
  EXPECT_EQ(use.calls, 0);
  EXPECT_EQ(tuner.calls, 1);
  EXPECT_EQ(parse_json(slurp(r->path), "memo")->value("key", ""), "a|b");
  fs::remove_all(dir);
}

TEST(TunedChoice, AnEntryTheCallerCannotUseIsTunedAgainAndOverwritten) {
  auto dir = testing::make_temp_dir("tuned");
  counting_tuner tuner;
  recording_use use;
  ASSERT_TRUE(remember_tuned_choice(dir, "k", std::ref(use), std::ref(tuner)));
  int stale_calls = 0;
  auto stale = [&](const ordered_json&) -> status {
    ++stale_calls;
    return make_error("engine 9 no longer finalizes");
  };
  tuner.value = 9;
  auto r = remember_tuned_choice(dir, "k", stale, std::ref(tuner));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->from_cache);
  EXPECT_EQ(r->why_tuned, "the remembered choice is unusable: engine 9 no longer finalizes");
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(stale_calls, 1);  // not asked again under the lock: the file had not changed
  EXPECT_EQ(tuner.calls, 2);
  EXPECT_EQ(r->choice.value("value", 0), 9);
  // An exception from `use` counts the same.
  auto throwing = [](const ordered_json&) -> status { throw std::runtime_error("bad algo hex"); };
  auto t = remember_tuned_choice(dir, "k", throwing, std::ref(tuner));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->why_tuned, "the remembered choice is unusable: bad algo hex");
  fs::remove_all(dir);
}

TEST(TunedChoice, ATuningErrorIsReturnedAndNothingIsStored) {
  auto dir = testing::make_temp_dir("tuned");
  recording_use use;
  auto failing = []() -> result<ordered_json> { return make_error("no plan ran"); };
  auto r = remember_tuned_choice(dir, "k", std::ref(use), failing);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().message, "no plan ran");
  EXPECT_FALSE(fs::exists(tuned_choice_path(dir, "k")));
  auto throwing = []() -> result<ordered_json> { throw std::runtime_error("cudnn_error"); };
  auto t = remember_tuned_choice(dir, "k", std::ref(use), throwing);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.err().message, "cudnn_error");
  fs::remove_all(dir);
}

bool wait_for_file(const fs::path& p, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!fs::exists(p)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Processes starting together on one key: one tunes, the others wait for the lock and take its
// choice, so they agree (each would tune a different value).
TEST(TunedChoice, ProcessesRacingOnOneKeyTuneOnceAndAgree) {
  auto dir = testing::make_temp_dir("tuned");
  const fs::path go = dir / "go", tunings = dir / "tunings";
  constexpr int k_processes = 4;
  std::vector<pid_t> children;
  for (int i = 0; i < k_processes; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (!wait_for_file(go, 20)) ::_exit(2);
      auto tune = [&]() -> result<ordered_json> {
        std::ofstream(tunings, std::ios::app) << ::getpid() << "\n";
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // long enough for the others to arrive
        return ordered_json{{"value", static_cast<int>(::getpid())}};
      };
      int seen = -1;
      auto use = [&](const ordered_json& j) -> status {
        seen = j.value("value", -1);
        return ok();
      };
      auto r = remember_tuned_choice(dir / "cache", "race", use, tune, 20);
      if (!r) ::_exit(3);
      const int value = r->from_cache ? seen : r->choice.value("value", -1);
      std::ofstream(dir / ("chose-" + std::to_string(i))) << value << " " << (r->from_cache ? "cache" : "tuned");
      ::_exit(0);
    }
    children.push_back(pid);
  }
  std::ofstream(go) << "go";
  for (pid_t pid : children) {
    int st = 0;
    ASSERT_EQ(::waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
  }
  std::string tuned_lines = slurp(tunings);
  EXPECT_EQ(std::count(tuned_lines.begin(), tuned_lines.end(), '\n'), 1) << tuned_lines;
  const std::string tuner_pid = tuned_lines.substr(0, tuned_lines.find('\n'));
  int tuned = 0;
  for (int i = 0; i < k_processes; ++i) {
    std::string chose = slurp(dir / ("chose-" + std::to_string(i)));
    EXPECT_EQ(chose.substr(0, chose.find(' ')), tuner_pid) << "process " << i << ": " << chose;
    if (chose.find("tuned") != std::string::npos) ++tuned;
  }
  EXPECT_EQ(tuned, 1);
  fs::remove_all(dir);
}

// A process killed while it tunes (kill -9) leaves no lock behind: the next one tunes at once.
TEST(TunedChoice, AHolderKilledWhileTuningDoesNotBlockTheNext) {
  auto dir = testing::make_temp_dir("tuned");
  const fs::path cache = dir / "cache", started = dir / "started";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto tune = [&]() -> result<ordered_json> {
      std::ofstream(started) << "tuning";
      for (;;) ::pause();
    };
    auto use = [](const ordered_json&) -> status { return ok(); };
    (void)remember_tuned_choice(cache, "k", use, tune, 20);
    ::_exit(4);
  }
  ASSERT_TRUE(wait_for_file(started, 20));
  EXPECT_TRUE(file_lock::held(tuned_choice_lock_path(cache, "k")));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(st));
  EXPECT_FALSE(file_lock::held(tuned_choice_lock_path(cache, "k")));
  EXPECT_FALSE(fs::exists(tuned_choice_path(cache, "k")));  // it never finished: nothing remembered

  counting_tuner tuner;
  recording_use use;
  auto t0 = std::chrono::steady_clock::now();
  auto r = remember_tuned_choice(cache, "k", std::ref(use), std::ref(tuner), 5);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_FALSE(r->from_cache);
  EXPECT_EQ(r->why_tuned, "nothing remembered yet");  // under the lock, not "tuned without the lock"
  EXPECT_EQ(tuner.calls, 1);
  EXPECT_LT(waited, 2.0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench
