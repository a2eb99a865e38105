// The per-GPU lease (gpu/harness/device_lease.h) between processes, as harnesses of `eval`, `run`
// and the service's workers take it: exclusive holders never overlap each other or a shared holder,
// shared holders overlap, a holder killed with kill -9 releases it, a waiting measurer is not
// starved by a stream of shared holders, and each stage's hold is recorded.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include "gpu/harness/device_lease.h"
#include "verdict/verdict_json.h"
#include "test_support.h"

namespace ptxbench::gpu {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// A child process that takes the lease, holds it for hold_ms, and appends "<kind> <start_us> <end_us>"
/// to `log`. Returns its pid.
pid_t holder(const fs::path& dir, lock_mode mode, int hold_ms, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  auto lease = device_lease::acquire(dir, "GPU-test", mode, 30);
  if (!lease) ::_exit(3);
  int64_t start = now_us();
  std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  int64_t end = now_us();
  {
    std::ofstream out(log, std::ios::app);
    out << (mode == lock_mode::exclusive ? "x" : "s") << ' ' << start << ' ' << end << '\n';
  }
  ::_exit(0);
}

struct interval {
  char kind;
  int64_t start, end;
};

std::vector<interval> read_log(const fs::path& log) {
  std::vector<interval> out;
  std::ifstream in(log);
  interval i{};
  while (in >> i.kind >> i.start >> i.end) out.push_back(i);
  return out;
}

int wait_exit(pid_t pid) {
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool overlap(const interval& a, const interval& b) { return a.start < b.end && b.start < a.end; }

TEST(DeviceLease, TwoProcessesNeverMeasureAtOnceAndNeverBesideAnotherUseOfTheGpu) {
  auto dir = testing::make_temp_dir("lease-exclusive");
  auto log = dir / "log";
  std::vector<pid_t> kids;
  for (int i = 0; i < 4; ++i) kids.push_back(holder(dir / "locks", lock_mode::exclusive, 60, log));
  for (int i = 0; i < 4; ++i) kids.push_back(holder(dir / "locks", lock_mode::shared, 60, log));
  for (pid_t k : kids) EXPECT_EQ(wait_exit(k), 0);
  auto holds = read_log(log);
  ASSERT_EQ(holds.size(), 8u);
  for (std::size_t a = 0; a < holds.size(); ++a)
    for (std::size_t b = a + 1; b < holds.size(); ++b)
      if (holds[a].kind == 'x' || holds[b].kind == 'x') {
        EXPECT_FALSE(overlap(holds[a], holds[b])) << "an exclusive hold overlapped another hold";
      }
  fs::remove_all(dir);
}

TEST(DeviceLease, SharedHoldersOverlap) {
  auto dir = testing::make_temp_dir("lease-shared");
  auto log = dir / "log";
  std::vector<pid_t> kids;
  for (int i = 0; i < 3; ++i) kids.push_back(holder(dir / "locks", lock_mode::shared, 400, log));
  for (pid_t k : kids) EXPECT_EQ(wait_exit(k), 0);
  auto holds = read_log(log);
  ASSERT_EQ(holds.size(), 3u);
  int64_t first_end = std::min({holds[0].end, holds[1].end, holds[2].end});
  int64_t last_start = std::max({holds[0].start, holds[1].start, holds[2].start});
  EXPECT_LT(last_start, first_end) << "three shared holders were never on the GPU together";
  fs::remove_all(dir);
}

TEST(DeviceLease, AHolderKilledWithKill9ReleasesIt) {
  auto dir = testing::make_temp_dir("lease-kill");
  pid_t pid = ::fork();
  if (pid == 0) {
    auto lease = device_lease::acquire(dir, "GPU-test", lock_mode::exclusive, 5);
    if (!lease) ::_exit(3);
    for (;;) ::pause();
  }
  // Wait until the child holds it.
  auto deadline = clock_type::now() + std::chrono::seconds(10);
  while (!file_lock::held(dir / "GPU-test.lease") && clock_type::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(file_lock::held(dir / "GPU-test.lease"));
  auto blocked = device_lease::acquire(dir, "GPU-test", lock_mode::shared, 0.2);
  ASSERT_FALSE(blocked) << "the lease was had while another process held it exclusively";
  EXPECT_NE(blocked.err().message.find("stayed busy"), std::string::npos) << blocked.err().message;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  auto t0 = clock_type::now();
  auto after = device_lease::acquire(dir, "GPU-test", lock_mode::exclusive, 5);
  ASSERT_TRUE(after) << after.err().message;
  EXPECT_LT(std::chrono::duration<double>(clock_type::now() - t0).count(), 1.0);
  fs::remove_all(dir);
}

TEST(DeviceLease, AWaitingMeasurerIsNotStarvedByAStreamOfSharedHolders) {
  auto dir = testing::make_temp_dir("lease-starve");
  auto log = dir / "log";
  // Shared holders that overlap each other continuously for about 3 s.
  std::vector<pid_t> kids;
  for (int i = 0; i < 2; ++i) kids.push_back(holder(dir / "locks", lock_mode::shared, 300, log));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  pid_t measurer = holder(dir / "locks", lock_mode::exclusive, 10, log);
  for (int i = 0; i < 20; ++i) {
    kids.push_back(holder(dir / "locks", lock_mode::shared, 300, log));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  EXPECT_EQ(wait_exit(measurer), 0);
  for (pid_t k : kids) EXPECT_EQ(wait_exit(k), 0);
  auto holds = read_log(log);
  auto x = std::find_if(holds.begin(), holds.end(), [](const interval& i) { return i.kind == 'x'; });
  ASSERT_NE(x, holds.end());
  int later_shared = 0;
  for (const auto& h : holds)
    if (h.kind == 's' && h.start > x->end) ++later_shared;
  EXPECT_GE(later_shared, 10) << "the measurer waited for the stream of shared holders to end";
  fs::remove_all(dir);
}

TEST(DeviceLease, AProcessHoldingTheSharedLeaseTakesAnotherSharedHoldWhileAMeasurerWaits) {
  // A harness's memory check holds the shared lease; a measurer of another harness now waits (it
  // holds the turnstile); then the harness's correctness asks for a shared hold. Through the
  // turnstile that would wait for the measurer, which waits for the memory check's hold, which only
  // this harness ends: a cycle until the lease timeout. It joins the hold this process has instead.
  auto dir = testing::make_temp_dir("lease-nested");
  auto log = dir / "log";
  // The measurer is forked before this process holds anything (a child would inherit the held lock),
  // and asks for the lease once told to.
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  pid_t measurer = ::fork();
  if (measurer == 0) {
    char byte = 0;
    ::close(go[1]);
    if (::read(go[0], &byte, 1) != 1) ::_exit(4);
    auto lease = device_lease::acquire(dir / "locks", "GPU-test", lock_mode::exclusive, 30);
    if (!lease) ::_exit(3);
    std::ofstream(log, std::ios::app) << "x " << now_us() << ' ' << now_us() << '\n';
    ::_exit(0);
  }
  ::close(go[0]);
  measurement_lease record;
  auto sanitize = stage_lease::take(dir / "locks", "GPU-test", "sanitize", false, 5, record);
  ASSERT_TRUE(sanitize) << sanitize.err().message;
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the measurer is waiting now
  auto t0 = clock_type::now();
  auto correctness = stage_lease::take(dir / "locks", "GPU-test", "correctness", false, 2, record);
  ASSERT_TRUE(correctness) << correctness.err().message;
  EXPECT_LT(std::chrono::duration<double>(clock_type::now() - t0).count(), 0.5);
  // The measurer gets the GPU only once every shared stage of this process has ended.
  int64_t released_us = 0;
  sanitize->release();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(read_log(log).empty()) << "the measurer ran while correctness still held the GPU";
  released_us = now_us();
  correctness->release();
  EXPECT_EQ(wait_exit(measurer), 0);
  auto holds = read_log(log);
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_GE(holds[0].start, released_us);
  // A later shared hold is a new one, through the turnstile as before.
  auto later = stage_lease::take(dir / "locks", "GPU-test", "dynamic_check_start", false, 5, record);
  EXPECT_TRUE(later);
  ASSERT_EQ(record.holds.size(), 2u);
  EXPECT_EQ(record.holds[0].stage, "sanitize");
  EXPECT_EQ(record.holds[1].stage, "correctness");
  fs::remove_all(dir);
}

TEST(DeviceLease, EachStageHoldIsRecordedAndMeasurementIsExclusiveOnlyWhenEveryMeasuringStageWas) {
  auto dir = testing::make_temp_dir("lease-record");
  measurement_lease record;
  {
    auto shared = stage_lease::take(dir, "GPU-test", "correctness", false, 5, record);
    ASSERT_TRUE(shared) << shared.err().message;
  }
  {
    auto timing = stage_lease::take(dir, "GPU-test", "timing", true, 5, record);
    ASSERT_TRUE(timing) << timing.err().message;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    timing->release();
    timing->release();  // once only
  }
  ASSERT_EQ(record.holds.size(), 2u);
  EXPECT_EQ(record.holds[0].stage, "correctness");
  EXPECT_FALSE(record.holds[0].exclusive);
  EXPECT_EQ(record.holds[1].stage, "timing");
  EXPECT_TRUE(record.holds[1].exclusive);
  EXPECT_GE(record.holds[1].held_ms, 25);
  // The grant times are the host's wall clock, in order, the second after the first's end.
  const double now_ms =
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_GT(record.holds[0].granted_unix_ms, now_ms - 60'000);
  EXPECT_LE(record.holds[1].granted_unix_ms, now_ms);
  EXPECT_GE(record.holds[1].granted_unix_ms, record.holds[0].granted_unix_ms + record.holds[0].held_ms - 1);
  auto round_trip = measurement_from_json(to_json(record));
  ASSERT_EQ(round_trip.holds.size(), 2u);
  EXPECT_DOUBLE_EQ(round_trip.holds[1].granted_unix_ms, record.holds[1].granted_unix_ms);
  EXPECT_TRUE(record.exclusive());
  EXPECT_GE(record.exclusive_held_ms(), 25);
  record.holds.push_back({"dynamic_check", false, 0, 5});
  EXPECT_FALSE(record.exclusive()) << "a measuring stage without the exclusive lease";
  fs::remove_all(dir);
}

TEST(DeviceLease, AnUnusableFolderIsAClearError) {
  auto r = device_lease::acquire("/proc/ptxbench-no-such-folder", "GPU-test", lock_mode::exclusive, 0.1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("cannot be created"), std::string::npos) << r.err().message;
}

}  // namespace
}  // namespace ptxbench::gpu
