// The whole loop against the scripted server: real HTTP provider, fake (or, later, the real
// check-mode) evaluator, real trajectory files.
#include "agent/turn_loop.h"

#include <gtest/gtest.h>

#include "eval/fake_evaluator.h"
#include "agent/fake_llm_server.h"
#include "agent/trajectory.h"
#include "build/toolchain.h"
#include "eval/pipeline.h"
#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::agent {
namespace {

using ptxbench::testing::fake_llm_server;
using ptxbench::testing::scripted_fault;

std::string fixture(const std::string& name) {
  auto text = read_text_file(ptxbench::testing::fixtures_dir() / "agent" / name, 1 << 20);
  EXPECT_TRUE(text) << name;
  return text ? *text : "";
}

std::string valid_kernel_reply(const std::string& extra_marker) {
  return "```cuda\n#include <ptxbench/abi.h>\n// " + extra_marker +
         "\n__global__ void k() {}\nvoid run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, "
         "cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n```\n";
}

// Fails its first `failures` evaluations with an infrastructure error, then delegates.
class flaky_evaluator final : public evaluator {
 public:
  explicit flaky_evaluator(int failures) : m_failures(failures), m_inner(eval::make_fake_evaluator(0)) {}
  result<verdict> evaluate(const eval_request& r) override {
    ++calls;
    if (m_failures-- > 0) return make_error("GPU 0 fell off the bus");
    return m_inner->evaluate(r);
  }
  int calls = 0;

 private:
  int m_failures;
  std::unique_ptr<evaluator> m_inner;
};

class TurnLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = load_suite(ptxbench::testing::repo_root() / "suite");
    ASSERT_TRUE(s) << s.err().message;
    m_suite = std::move(*s);
    m_dir = ptxbench::testing::make_temp_dir("loop");
    m_model.name = "scripted";
    m_model.api = api_kind::openai;
    m_model.model_id = "scripted-model";
    m_model.base_url = m_server.base_url();
    m_model.request = {{"temperature", 1.0}, {"top_k", 20}};
    m_model.retry.max_attempts = 2;
    m_model.timeout_s = 20;
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }

  trajectory_spec spec(int turns, bool gpu) {
    trajectory_spec sp;
    sp.t = m_suite->find_task("gemm_n7168_k5120");
    sp.target = m_suite->find_target("h200");
    sp.variant = k_builtin_variant;
    sp.turn_limit = turns;
    sp.file = m_dir / "t.json";
    sp.model_name = m_model.name;
    sp.model_json = to_json(m_model);
    sp.environment_json = {{"evaluator", "fake"}};
    sp.run_on_gpu = gpu;
    sp.eval_retries = 0;
    return sp;
  }

  trajectory_result run(const trajectory_spec& sp, evaluator* custom = nullptr) {
    auto p = make_provider(m_model, "", {nullptr, nullptr, [](double) {}});
    EXPECT_TRUE(p);
    auto slots = eval_slots::create(1, [&](int) -> result<std::unique_ptr<evaluator>> {
      if (custom) return std::unique_ptr<evaluator>(new forwarding(custom));
      return eval::make_fake_evaluator(0);
    });
    EXPECT_TRUE(slots);
    loop_services svc{p->get(), slots->get(), builtin_prompt, nullptr,
                      [this](const turn_report& r) { m_reports.push_back(r); }, [](double) {}};
    return run_trajectory(sp, svc);
  }

  ordered_json saved() {
    auto t = trajectory::load(m_dir / "t.json");
    EXPECT_TRUE(t) << t.err().message;
    return t ? t->json() : ordered_json();
  }

  struct forwarding final : evaluator {
    explicit forwarding(evaluator* e) : inner(e) {}
    result<verdict> evaluate(const eval_request& r) override { return inner->evaluate(r); }
    evaluator* inner;
  };

  fake_llm_server m_server;
  std::optional<suite> m_suite;
  model_spec m_model;
  std::filesystem::path m_dir;
  std::vector<turn_report> m_reports;
};

// Acceptance: replies (no code block, cuBLAS call, compile error, valid kernel) give the four
// expected feedback messages, and `extra` carries the structured results.
TEST_F(TurnLoopTest, FourScriptedRepliesWithoutAGpu) {
  m_server.set_reply(0, fixture("reply_no_code.md"), "I should describe the plan first.");
  m_server.set_reply(1, fixture("reply_cublas.md"));
  m_server.set_reply(2, fixture("reply_compile_error.md"));
  m_server.set_reply(3, fixture("reply_valid.md"));
  auto r = run(spec(4, false));
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  EXPECT_EQ(r.turns_completed, 4);
  auto j = saved();
  const auto& msgs = j["messages"];
  ASSERT_EQ(msgs.size(), 11u);  // system, task, 4 pairs, exit
  EXPECT_EQ(msgs[10]["role"], "exit");
  EXPECT_EQ(j["info"]["exit_status"], "LimitsExceeded");
  EXPECT_EQ(j["info"]["model_stats"]["api_calls"], 4);
  EXPECT_NE(msgs[0]["content"].get<std::string>().find("PTXBENCH_EXPORT"), std::string::npos);
  EXPECT_NE(msgs[1]["content"].get<std::string>().find("\"gemm_n7168_k5120\""), std::string::npos);

  const auto& a0 = msgs[2];
  EXPECT_EQ(a0["reasoning_content"], "I should describe the plan first.");
  EXPECT_GT(a0["extra"]["usage"]["prompt_tokens"].get<int>(), 0);
  EXPECT_TRUE(a0["extra"]["response"].contains("choices"));
  EXPECT_EQ(a0["extra"]["attempts"].size(), 1u);

  auto fb = [&](int k) -> const ordered_json& { return msgs[3 + 2 * k]; };
  EXPECT_EQ(fb(0)["extra"]["event"], "no_code");
  EXPECT_EQ(fb(0)["extra"]["ptxbench"]["label"], "no_code");
  EXPECT_EQ(fb(0)["content"].get<std::string>().rfind(
                "<returncode>1</returncode>\n<output>\nCould not extract a kernel from your response: the reply contains "
                "no fenced code block.", 0), 0u) << fb(0)["content"];
  EXPECT_TRUE(fb(0)["extra"]["ptxbench"]["verdict"].is_null());

  EXPECT_EQ(fb(1)["extra"]["event"], "gate_rejected");
  EXPECT_EQ(fb(1)["extra"]["ptxbench"]["label"], "rejected");
  EXPECT_NE(fb(1)["content"].get<std::string>().find("ERROR: Your kernel was rejected"), std::string::npos);
  EXPECT_EQ(fb(1)["extra"]["ptxbench"]["verdict"]["deciding_stage"], "source_gate");

  EXPECT_EQ(fb(2)["extra"]["event"], "evaluation");
  EXPECT_EQ(fb(2)["extra"]["ptxbench"]["label"], "compile_error");
  EXPECT_EQ(fb(2)["extra"]["ptxbench"]["verdict"]["status"], "COMPILE_ERROR");
  EXPECT_NE(fb(2)["content"].get<std::string>().find("Failed to compile kernel"), std::string::npos);
  EXPECT_EQ(fb(2)["extra"]["ptxbench"]["code_block"]["fence_tag"], "cpp");

  EXPECT_EQ(fb(3)["extra"]["ptxbench"]["label"], "built");
  EXPECT_EQ(fb(3)["extra"]["returncode"], 0);
  EXPECT_NE(fb(3)["content"].get<std::string>().find("the GPU stages did not run"), std::string::npos);
  EXPECT_EQ(fb(3)["extra"]["ptxbench"]["verdict"]["mode"], "check");
  EXPECT_TRUE(fb(3)["extra"]["ptxbench"]["static_counts"].is_object());
  EXPECT_FALSE(fb(3)["extra"]["target_met"].get<bool>());
  EXPECT_EQ(fb(3)["extra"]["ptxbench"]["kernel_sha256"].get<std::string>().size(), 64u);

  // The model saw the whole history (the paper's `full` policy) and the configured sampling.
  auto bodies = m_server.request_bodies();
  ASSERT_EQ(bodies.size(), 4u);
  EXPECT_EQ(bodies[3]["messages"].size(), 8u);
  EXPECT_EQ(bodies[3]["top_k"], 20);
  EXPECT_EQ(bodies[3]["messages"][3]["content"], fb(0)["content"]);
  EXPECT_EQ(m_reports.size(), 4u);
}

TEST_F(TurnLoopTest, OnAGpuTheValidKernelIsCorrectButNotTargetCorrect) {
  m_server.set_reply(0, fixture("reply_valid.md"));
  auto r = run(spec(1, true));
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  auto fb = saved()["messages"][3];
  EXPECT_EQ(fb["extra"]["ptxbench"]["label"], "passed");
  EXPECT_FALSE(fb["extra"]["ptxbench"]["target_correct"].get<bool>());
  EXPECT_EQ(fb["extra"]["ptxbench"]["target_verdict"], "absent_in_sass");
  EXPECT_DOUBLE_EQ(fb["extra"]["min_speedup"].get<double>(), 0.85);
  EXPECT_TRUE(fb["extra"]["all_passed"].get<bool>());
  ASSERT_EQ(fb["extra"]["traces"].size(), 1u);
  EXPECT_EQ(fb["extra"]["traces"][0]["evaluation"]["status"], "PASSED");
  EXPECT_NE(fb["content"].get<std::string>().find("[M=8192] PASSED — speedup: 0.850x"), std::string::npos);
  EXPECT_EQ(fb["extra"]["ptxbench"]["seeds"].size(), 3u);
}

TEST_F(TurnLoopTest, ATargetCorrectFastKernelEndsTheTrajectoryEarly) {
  m_server.set_reply(0, fixture("reply_compile_error.md"));
  m_server.set_reply(1, valid_kernel_reply("wgmma FAKE_SPEEDUP=1.5"));
  auto r = run(spec(8, true));
  ASSERT_EQ(r.end, trajectory_end::submitted) << r.message;
  EXPECT_EQ(r.turns_completed, 2);
  auto j = saved();
  EXPECT_EQ(j["info"]["exit_status"], "Submitted");
  EXPECT_NE(j["info"]["submission"].get<std::string>().find("PTXBENCH_EXPORT"), std::string::npos);
  EXPECT_EQ(j["messages"].back()["role"], "exit");
  EXPECT_DOUBLE_EQ(j["messages"].back()["extra"]["min_speedup"].get<double>(), 1.5);
  EXPECT_TRUE(j["messages"][5]["extra"]["target_met"].get<bool>());
  EXPECT_EQ(j["messages"][5]["extra"]["ptxbench"]["dynamic_counts"]["GMMA"], 1 << 20);
}

TEST_F(TurnLoopTest, InfraFailureUsesNoTurnAndResumeReevaluatesTheSameReply) {
  m_server.set_default_reply(valid_kernel_reply("plain"));
  flaky_evaluator flaky(0);
  auto sp = spec(3, true);
  ASSERT_EQ(run(sp, &flaky).end, trajectory_end::limits_exceeded);  // warm-up run in another file
  std::filesystem::remove(sp.file);
  int before = m_server.requests();

  flaky_evaluator down(100);
  auto r = run(sp, &down);
  ASSERT_EQ(r.end, trajectory_end::infra_error) << r.message;
  EXPECT_EQ(r.turns_completed, 0);
  EXPECT_NE(r.message.find("GPU 0 fell off the bus"), std::string::npos);
  auto j = saved();
  EXPECT_EQ(j["info"]["exit_status"], "InfraError");
  EXPECT_EQ(j["messages"][3]["extra"]["event"], "infra_error");
  EXPECT_EQ(j["info"]["ptxbench"]["interruptions"][0]["kind"], "infra");
  EXPECT_EQ(m_server.requests(), before + 1);

  flaky_evaluator back(0);
  r = run(sp, &back);
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  EXPECT_EQ(r.turns_completed, 3);
  EXPECT_EQ(m_server.requests(), before + 3);  // turn 0's reply was evaluated again, not asked for again
  j = saved();
  EXPECT_EQ(j["messages"][3]["extra"]["event"], "evaluation");
  EXPECT_EQ(j["messages"].size(), 9u);
}

TEST_F(TurnLoopTest, ApiFailureStopsTheTrajectoryAndResumeFinishesIt) {
  m_server.set_default_reply(valid_kernel_reply("plain"));
  m_server.inject({scripted_fault::kind::status, 503, "", ""}, 1);
  m_server.inject({scripted_fault::kind::status, 503, "", ""}, 1);  // both attempts of turn 1 fail
  auto sp = spec(3, true);
  auto r = run(sp);
  ASSERT_EQ(r.end, trajectory_end::api_error) << r.message;
  EXPECT_EQ(r.turns_completed, 1);
  auto j = saved();
  EXPECT_EQ(j["info"]["exit_status"], "APIError");
  EXPECT_EQ(j["messages"].size(), 4u);
  auto interruption = j["info"]["ptxbench"]["interruptions"][0];
  EXPECT_EQ(interruption["failure"], "retries_exhausted");
  EXPECT_EQ(interruption["attempts"].size(), 2u);
  r = run(sp);
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  EXPECT_EQ(r.turns_completed, 3);
  EXPECT_EQ(r.turns_run_now, 2);
  EXPECT_EQ(saved()["info"]["ptxbench"]["interruptions"].size(), 1u);  // the history of the run is kept
}

TEST_F(TurnLoopTest, ContextOverflowDropsTheOldestPairAndSaysSo) {
  m_server.set_default_reply(valid_kernel_reply("plain"));
  m_server.inject({scripted_fault::kind::status, 400, "",
                   R"({"error":{"message":"This model's maximum context length is 4096 tokens."}})"}, 2);
  auto r = run(spec(3, true));
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  auto j = saved();
  auto dropped = j["info"]["ptxbench"]["dropped_pairs"];
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0]["turn"], 2);
  EXPECT_EQ(dropped[0]["reason"], "context_overflow");
  EXPECT_EQ(dropped[0]["dropped_turns"], ordered_json::array({0}));
  EXPECT_EQ(j["messages"][6]["extra"]["context"]["sent_turns"], ordered_json::array({1}));
  auto bodies = m_server.request_bodies();
  ASSERT_EQ(bodies.size(), 4u);
  EXPECT_EQ(bodies[3]["messages"].size(), 4u);
  EXPECT_NE(bodies[3]["messages"][1]["content"].get<std::string>().find("left out of this conversation"),
            std::string::npos);
}

TEST_F(TurnLoopTest, ARefusedKeyIsAnAuthError) {
  m_server.always({scripted_fault::kind::status, 401, "", R"({"error":{"message":"invalid x-api-key"}})"});
  auto r = run(spec(2, true));
  EXPECT_EQ(r.end, trajectory_end::auth_error);
  EXPECT_NE(r.message.find("invalid x-api-key"), std::string::npos);
  EXPECT_EQ(saved()["info"]["exit_status"], "AuthError");
  EXPECT_EQ(m_server.requests(), 1);
}

TEST_F(TurnLoopTest, AFinishedTrajectoryIsNotRunAgainAndAMismatchIsRefused) {
  m_server.set_default_reply("no code");
  ASSERT_EQ(run(spec(2, true)).end, trajectory_end::limits_exceeded);
  int before = m_server.requests();
  auto again = run(spec(2, true));
  EXPECT_TRUE(again.skipped);
  EXPECT_EQ(m_server.requests(), before);
  auto other = spec(2, true);
  other.variant = "hopper-05";
  auto refused = run(other);
  EXPECT_EQ(refused.end, trajectory_end::setup_error);
  EXPECT_NE(refused.message.find("variant is 'builtin-minimal' in the file but 'hopper-05' now"), std::string::npos)
      << refused.message;
  auto longer = run(spec(3, true));  // more turns than before: the trajectory is extended
  EXPECT_EQ(longer.end, trajectory_end::limits_exceeded);
  EXPECT_EQ(longer.turns_completed, 3);
  EXPECT_EQ(longer.turns_run_now, 1);
}

// The acceptance scenario through the real pipeline in check mode (source gate -> nvcc build -> link
// gate -> static SASS): on a machine without a GPU, evaluation stops there and the feedback says so.
TEST_F(TurnLoopTest, FourScriptedRepliesThroughTheRealCheckMode) {
  auto tc = build::find_toolchain(PTXBENCH_CUDA_ROOT_FOR_TESTS);
  if (!tc) GTEST_SKIP() << "needs nvcc: " << tc.err().message;
  auto cache = ptxbench::testing::make_temp_dir("agent-cache");
  eval::pipeline_config config;
  config.root = ptxbench::testing::repo_root();
  config.cache_dir = cache;
  config.cuda_root = PTXBENCH_CUDA_ROOT_FOR_TESTS;
  auto pipeline = eval::make_pipeline_evaluator(config);
  m_server.set_reply(0, fixture("reply_no_code.md"));
  m_server.set_reply(1, fixture("reply_cublas.md"));
  m_server.set_reply(2, fixture("reply_compile_error.md"));
  m_server.set_reply(3, fixture("reply_valid.md"));
  auto r = run(spec(4, false), pipeline.get());
  std::filesystem::remove_all(cache);
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  auto msgs = saved()["messages"];
  auto fb = [&](int k) { return msgs[3 + 2 * k]; };
  EXPECT_EQ(fb(0)["extra"]["ptxbench"]["label"], "no_code");
  EXPECT_EQ(fb(1)["extra"]["ptxbench"]["label"], "rejected") << fb(1)["content"];
  EXPECT_NE(fb(1)["content"].get<std::string>().find("cublas"), std::string::npos) << fb(1)["content"];
  EXPECT_EQ(fb(2)["extra"]["ptxbench"]["label"], "compile_error") << fb(2)["content"];
  EXPECT_NE(fb(2)["content"].get<std::string>().find("undeclared_bias"), std::string::npos) << fb(2)["content"];
  EXPECT_NE(fb(2)["content"].get<std::string>().find("Failed to compile kernel"), std::string::npos);
  EXPECT_EQ(fb(3)["extra"]["ptxbench"]["label"], "built") << fb(3)["content"];
  EXPECT_EQ(fb(3)["extra"]["ptxbench"]["verdict"]["mode"], "check");
  EXPECT_NE(fb(3)["content"].get<std::string>().find("the GPU stages did not run"), std::string::npos);
  EXPECT_NE(fb(3)["content"].get<std::string>().find("ptxas info"), std::string::npos) << fb(3)["content"];
}

// Defect 2 of issue 12, through the agent: under --cpu-only a kernel that can never run is not
// "built". A whitespace-only block, a kernel without PTXBENCH_EXPORT, and exports for the wrong
// tensors go through the real check-mode pipeline (the link gate reads the artifact's exports).
TEST_F(TurnLoopTest, CpuOnlyTurnsOfKernelsThatCanNeverRunAreNotBuilt) {
  auto tc = build::find_toolchain(PTXBENCH_CUDA_ROOT_FOR_TESTS);
  if (!tc) GTEST_SKIP() << "needs nvcc: " << tc.err().message;
  auto kernel_reply = [](const std::string& fixture_name) {
    auto code = read_text_file(ptxbench::testing::fixtures_dir() / "kernels" / fixture_name, 1 << 20);
    EXPECT_TRUE(code) << fixture_name;
    return "Here is my kernel.\n```cuda\n" + (code ? *code : std::string()) + "```\n";
  };
  auto cache = ptxbench::testing::make_temp_dir("agent-cache");
  eval::pipeline_config config;
  config.root = ptxbench::testing::repo_root();
  config.cache_dir = cache;
  config.cuda_root = PTXBENCH_CUDA_ROOT_FOR_TESTS;
  auto pipeline = eval::make_pipeline_evaluator(config);
  m_server.set_reply(0, "```cuda\n  \n\t\n   \n```\n");  // a whitespace-only kernel
  m_server.set_reply(1, kernel_reply("no_export.cu"));
  m_server.set_reply(2, kernel_reply("wrong_arity_export.cu"));
  m_server.set_reply(3, kernel_reply("wrong_dtype_export.cu"));
  auto r = run(spec(4, false), pipeline.get());
  std::filesystem::remove_all(cache);
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  auto msgs = saved()["messages"];
  auto label = [&](int k) { return msgs[3 + 2 * k]["extra"]["ptxbench"]["label"].get<std::string>(); };
  auto content = [&](int k) { return msgs[3 + 2 * k]["content"].get<std::string>(); };
  // Nothing to build in a block of blanks: the extractor finds no kernel, so the turn is no_code.
  EXPECT_EQ(label(0), "no_code") << content(0);
  EXPECT_NE(content(0).find("Could not extract a kernel from your response"), std::string::npos) << content(0);
  EXPECT_EQ(label(1), "compile_error") << content(1);
  EXPECT_NE(content(1).find("does not export ptxbench_entry_run"), std::string::npos) << content(1);
  EXPECT_EQ(label(2), "incorrect_shape") << content(2);
  EXPECT_NE(content(2).find("run is exported for 2 tensor(s) but the task passes 3"), std::string::npos) << content(2);
  EXPECT_EQ(label(3), "incorrect_dtype") << content(3);
  EXPECT_NE(content(3).find("exported as float32 but the task passes bfloat16"), std::string::npos) << content(3);
  for (int k = 0; k < 4; ++k) {
    EXPECT_NE(label(k), "built") << k;
    EXPECT_EQ(content(k).find("BUILT"), std::string::npos) << content(k);
  }
  for (const auto& report : m_reports) EXPECT_NE(report.label, eval_outcome::built);
}

}  // namespace
}  // namespace ptxbench::agent

namespace ptxbench::agent {
namespace {

// On a GPU machine (the H200): the same loop through the full pipeline. The plain SIMT kernel must
// come back correct but not target-correct (it has no wgmma/TMA), with a measured speedup.
TEST_F(TurnLoopTest, OnTheGpuTheRealPipelineJudgesTheScriptedKernels) {
  if (!std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "needs an NVIDIA GPU (/dev/nvidia0 is absent)";
  auto cache = ptxbench::testing::make_temp_dir("agent-cache");
  eval::pipeline_config config;
  config.root = ptxbench::testing::repo_root();
  config.cache_dir = cache;
  config.cuda_root = PTXBENCH_CUDA_ROOT_FOR_TESTS;
  auto pipeline = eval::make_pipeline_evaluator(config);
  m_server.set_reply(0, fixture("reply_compile_error.md"));
  m_server.set_reply(1, fixture("reply_valid.md"));
  auto r = run(spec(2, true), pipeline.get());
  std::filesystem::remove_all(cache);
  ASSERT_EQ(r.end, trajectory_end::limits_exceeded) << r.message;
  auto msgs = saved()["messages"];
  EXPECT_EQ(msgs[3]["extra"]["ptxbench"]["label"], "compile_error");
  const auto& last = msgs[5]["extra"];
  EXPECT_EQ(last["ptxbench"]["label"], "passed") << msgs[5]["content"];
  EXPECT_FALSE(last["ptxbench"]["target_correct"].get<bool>());
  EXPECT_GT(last["ptxbench"]["speedup"].get<double>(), 0.0);
  EXPECT_EQ(last["traces"].size(), 1u);
  EXPECT_NE(msgs[5]["content"].get<std::string>().find("[M=8192] PASSED — speedup: "), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::agent
