// Background children and the parent-death signal: it must mean "this process died", whichever thread
// started the child. (PR_SET_PDEATHSIG alone fires when the forking *thread* ends; an agent sweep's
// worker thread that finished its trajectories used to take the shared GPU harness down with it.)
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/spawn.h"

namespace ptxbench {
namespace {

// Running or stopped, not a zombie and not gone (a reparented child's zombie may linger when PID 1
// does not reap).
bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() && line[close_paren + 2] != 'Z';
}

bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !process_alive(pid);
}

TEST(SpawnBackground, AChildOutlivesTheThreadThatStartedIt) {
  pid_t pid = -1;
  std::thread starter([&] {
    auto started = spawn_background({.argv = {"/bin/sleep", "30"}});
    ASSERT_TRUE(started.ok()) << started.err().message;
    pid = *started;
    // Long enough for the child to arm its parent-death signal before this thread ends (a thread
    // that ends at once may beat it, and then nothing is sent).
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  starter.join();
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(reap_if_exited(pid).has_value()) << "the child died with the thread that started it";
  int st = stop_child(pid, SIGTERM, 2000);
  EXPECT_EQ(describe_wait_status(st).rfind("killed by signal SIGTERM", 0), 0u) << describe_wait_status(st);
}

TEST(SpawnBackground, AChildStartsWithNoBlockedSignal) {
  // Whatever the starting thread blocked, the child can be stopped politely (the mask survives exec).
  pid_t pid = -1;
  std::thread([&] {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    auto started = spawn_background({.argv = {"/bin/sleep", "30"}});
    if (started) pid = *started;
  }).join();
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past exec
  int st = stop_child(pid, SIGTERM, 3000);
  EXPECT_EQ(describe_wait_status(st).rfind("killed by signal SIGTERM", 0), 0u) << describe_wait_status(st);
}

TEST(SpawnBackground, AChildDiesWithItsProcess) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    // The middle process starts a child from a short-lived thread, reports its pid, and exits.
    ::close(pipe_fds[0]);
    pid_t child = -1;
    std::thread([&] {
      auto started = spawn_background({.argv = {"/bin/sleep", "30"}});
      if (started) child = *started;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }).join();
    if (::write(pipe_fds[1], &child, sizeof child) != sizeof child) ::_exit(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the child must survive the thread
    ::_exit(process_alive(child) ? 0 : 3);
  }
  ::close(pipe_fds[1]);
  pid_t child = -1;
  ASSERT_EQ(::read(pipe_fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(pipe_fds[0]);
  int st = 0;
  ASSERT_EQ(::waitpid(middle, &st, 0), middle);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "middle process: " << describe_wait_status(st);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(gone_within(child, std::chrono::seconds(5))) << "the child outlived its process";
  if (process_alive(child)) ::kill(child, SIGKILL);
}

}  // namespace
}  // namespace ptxbench
