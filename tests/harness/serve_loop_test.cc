// The long-lived harness's protocol (ptxbench-harness --serve-fds): setup once, then one result line
// per candidate line, in order, until the input ends; a failed setup or a malformed request is
// reported on the result channel and ends the harness with its own exit code.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "core/line_channel.h"
#include "gpu/harness/serve_loop.h"

namespace ptxbench::gpu {
namespace {

struct pipes {
  int to_harness[2];
  int from_harness[2];
  pipes() {
    EXPECT_EQ(::pipe(to_harness), 0);
    EXPECT_EQ(::pipe(from_harness), 0);
  }
  ~pipes() {
    for (int fd : {to_harness[0], to_harness[1], from_harness[0], from_harness[1]})
      if (fd >= 0) ::close(fd);
  }
};

serve_hooks counting_hooks(int* setups) {
  serve_hooks h;
  h.setup = [setups]() -> result<ordered_json> {
    ++*setups;
    return ordered_json{{"environment", {{"gpu", "FAKE"}}}, {"baseline", "fake baseline"}};
  };
  h.evaluate = [](const job_candidate& c) -> result<gpu_stage_result> {
    if (c.symbol == "infra") return make_error("the harness failed: CUDA out of memory (fake)");
    gpu_stage_result r;
    r.id = c.id;
    r.decided = {c.symbol == "bad" ? eval_outcome::runtime_error : eval_outcome::passed, std::nullopt, "fake " + c.id, ""};
    return r;
  };
  return h;
}

ordered_json read_json(line_reader& r) {
  auto line = r.read_line(5);
  EXPECT_TRUE(line && line->kind == line_reader::read_kind::line);
  return line && line->kind == line_reader::read_kind::line ? ordered_json::parse(line->line) : ordered_json();
}

TEST(HarnessServeLoop, SetsUpOnceAndAnswersEveryCandidateInOrderUntilTheInputEnds) {
  pipes p;
  int setups = 0;
  auto done = std::async(std::launch::async, [&] {
    return serve_candidates(p.to_harness[0], p.from_harness[1], counting_hooks(&setups));
  });
  line_reader from(p.from_harness[0]);
  auto ready = read_json(from);
  EXPECT_EQ(ready["ready"]["environment"]["gpu"], "FAKE");
  for (int i = 0; i < 3; ++i) {
    job_candidate c;
    c.id = std::to_string(i);
    c.shared_object = "/x/candidate.so";
    c.symbol = i == 1 ? "bad" : "run";
    ASSERT_TRUE(write_line(p.to_harness[1], ordered_json{{"candidate", to_json(c)}}.dump()));
    auto answer = read_json(from);
    auto r = gpu_stage_result_from_json(answer["result"]);
    ASSERT_TRUE(r) << answer.dump();
    EXPECT_EQ(r->id, std::to_string(i));
    EXPECT_EQ(r->decided.outcome, i == 1 ? eval_outcome::runtime_error : eval_outcome::passed);
  }
  ::close(p.to_harness[1]);
  p.to_harness[1] = -1;
  EXPECT_EQ(done.get(), 0);
  EXPECT_EQ(setups, 1) << "the task is set up once for every candidate";
}

TEST(HarnessServeLoop, AFailedSetupIsReportedAndEndsTheHarness) {
  pipes p;
  serve_hooks h;
  h.setup = []() -> result<ordered_json> { return make_error("no CUDA device"); };
  h.evaluate = [](const job_candidate&) -> result<gpu_stage_result> { return gpu_stage_result{}; };
  EXPECT_EQ(serve_candidates(p.to_harness[0], p.from_harness[1], h), 1);
  line_reader from(p.from_harness[0]);
  EXPECT_EQ(read_json(from)["error"], "no CUDA device");
}

TEST(HarnessServeLoop, AnInfrastructureFailureIsAnErrorNotAResultAndEndsTheHarness) {
  pipes p;
  int setups = 0;
  auto done = std::async(std::launch::async, [&] {
    return serve_candidates(p.to_harness[0], p.from_harness[1], counting_hooks(&setups));
  });
  line_reader from(p.from_harness[0]);
  (void)read_json(from);
  job_candidate c;
  c.id = "1";
  c.shared_object = "/x/candidate.so";
  c.symbol = "infra";
  ASSERT_TRUE(write_line(p.to_harness[1], ordered_json{{"candidate", to_json(c)}}.dump()));
  auto answer = read_json(from);
  EXPECT_FALSE(answer.contains("result")) << answer.dump();
  EXPECT_EQ(answer.value("error", ""), "the harness failed: CUDA out of memory (fake)");
  EXPECT_EQ(done.get(), 1);
}

TEST(HarnessServeLoop, AMalformedRequestIsReportedAndEndsTheHarness) {
  pipes p;
  int setups = 0;
  auto done = std::async(std::launch::async, [&] {
    return serve_candidates(p.to_harness[0], p.from_harness[1], counting_hooks(&setups));
  });
  line_reader from(p.from_harness[0]);
  (void)read_json(from);
  ASSERT_TRUE(write_line(p.to_harness[1], R"({"candidate": {"symbol": "run"}})"));
  EXPECT_NE(read_json(from)["error"].get<std::string>().find("malformed"), std::string::npos);
  EXPECT_EQ(done.get(), 2);
}

TEST(HarnessServeLoop, TheProtocolDescriptorsDoNotLeakIntoChildren) {
  pipes p;
  int setups = 0;
  auto done = std::async(std::launch::async, [&] {
    return serve_candidates(p.to_harness[0], p.from_harness[1], counting_hooks(&setups));
  });
  line_reader from(p.from_harness[0]);
  (void)read_json(from);
  EXPECT_EQ(::fcntl(p.from_harness[1], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(::fcntl(p.to_harness[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ::close(p.to_harness[1]);
  p.to_harness[1] = -1;
  EXPECT_EQ(done.get(), 0);
}

}  // namespace
}  // namespace ptxbench::gpu
