// Reading submissions (serve/submission.h): upstream's normalized names, upstream's fields and
// PTXBench's, and one clear 400 line for every way a request can be wrong; the artifact bundle.
#include <gtest/gtest.h>

#include "service/artifact_bundle.h"
#include "service/submission.h"
#include "test_support.h"

namespace ptxbench::service {
namespace {

const suite& the_suite() {
  static suite s = *load_suite(testing::repo_root() / "suite");
  return s;
}

ordered_json solution_json(const std::string& content = "// k\n") {
  return {{"name", "k"},
          {"definition", "gemm_n7168_k5120"},
          {"author", "me"},
          {"spec", {{"language", "cuda"}, {"target_hardware", {"H100"}}, {"entry_point", "kernel.cu::run"}, {"binding", nullptr}}},
          {"sources", {{{"path", "kernel.cu"}, {"content", content}}}}};
}

result<submission> parse(const ordered_json& body, queue::job_kind kind = queue::job_kind::evaluate) {
  return parse_submission(body.dump(), kind, the_suite(), "h200");
}

std::string error_of(const ordered_json& body, queue::job_kind kind = queue::job_kind::evaluate) {
  auto r = parse(body, kind);
  EXPECT_FALSE(r) << body.dump();
  return r ? std::string() : r.err().message;
}

TEST(UpstreamName, IsTheNamePlusTheFirstEightHexDigitsOfUpstreamsSha1) {
  // Expected values from upstream's recipe in Python: sha1 over definition, language, entry point,
  // binding ("" for none), dependencies, then each source's path and content, no separators.
  auto s = parse({{"solution", solution_json()}});
  ASSERT_TRUE(s) << s.err().message;
  EXPECT_EQ(s->normalized_solution_name, "k_fd597eef");
  solution multi = s->candidate;
  multi.spec.binding = "tvm-ffi";
  multi.spec.dependencies = {"cutlass"};
  multi.sources = {{"kernel.cu", "int x;\n"}, {"util.cuh", "#pragma once\n"}};
  EXPECT_EQ(upstream_solution_hash(multi), "205e6602123ce12eed411d84d4a72efe9205ff22");
}

TEST(Submission, CarriesTheRenamedSolutionAndTheDefaults) {
  auto s = parse({{"solution", solution_json()}, {"workload_uuids", nullptr}});
  ASSERT_TRUE(s) << s.err().message;
  EXPECT_EQ(s->spec.task, "gemm_n7168_k5120");
  EXPECT_EQ(s->spec.target, "h200") << "the server's target, not target_hardware (documented as unused)";
  EXPECT_TRUE(s->spec.workloads.empty());
  EXPECT_EQ(s->spec.protocol_json, "{}");
  EXPECT_NE(s->spec.solution_json.find("\"k_fd597eef\""), std::string::npos);
  EXPECT_FALSE(s->bypass_cache);
}

TEST(Submission, ReadsUpstreamOptionsAndPtxbenchsOwn) {
  auto s = parse({{"solution", solution_json()},
                  {"workload_uuids", {"94920358-01a8-4c5b-9209-3103fd490e94"}},
                  {"timeout", 20},
                  {"atol", 0.02},
                  {"rtol", nullptr},
                  {"baseline_cache_mode", "bypass"},
                  {"run_baseline", true},
                  {"target", "H200"},
                  {"request_id", "turn-7"},
                  {"some_future_field", 1}});
  ASSERT_TRUE(s) << s.err().message;
  EXPECT_EQ(s->spec.workloads, std::vector<std::string>{"94920358-01a8-4c5b-9209-3103fd490e94"});
  EXPECT_EQ(s->spec.target, "h200");
  EXPECT_TRUE(s->bypass_cache) << "baseline_cache_mode: bypass asks for a fresh measurement";
  EXPECT_EQ(s->request_id, "turn-7");
  auto p = read_protocol(s->spec.protocol_json);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->timeout_s, 20);
  EXPECT_EQ(p->atol, 0.02);
  EXPECT_FALSE(p->rtol) << "null means the server's default";
  auto san = parse({{"solution", solution_json()}, {"sanitizer_types", {"racecheck", "memcheck", "memcheck"}}},
                   queue::job_kind::sanitize);
  ASSERT_TRUE(san);
  EXPECT_EQ(read_protocol(san->spec.protocol_json)->sanitizer_types, (std::vector<std::string>{"memcheck", "racecheck"}));
}

TEST(Submission, EveryWrongRequestIsOneLineNamingTheProblem) {
  EXPECT_EQ(parse_submission("{not json", queue::job_kind::evaluate, the_suite(), "h200").err().message,
            "the request body is not valid JSON");
  EXPECT_EQ(error_of(ordered_json::array()), "the request body must be a JSON object, got array");
  EXPECT_EQ(error_of(ordered_json::object()), "solution: missing required field");
  auto unknown = solution_json();
  unknown["definition"] = "no_such_definition";
  EXPECT_EQ(error_of({{"solution", unknown}}), "Definition not found: no_such_definition");
  auto dotdot = solution_json();
  dotdot["sources"][0]["path"] = "../kernel.cu";
  dotdot["spec"]["entry_point"] = "../kernel.cu::run";
  EXPECT_NE(error_of({{"solution", dotdot}}).find("'..' in path"), std::string::npos);
  auto absolute = solution_json();
  absolute["sources"][0]["path"] = "/etc/passwd";
  EXPECT_NE(error_of({{"solution", absolute}}).find("absolute path"), std::string::npos);
  EXPECT_NE(error_of({{"solution", solution_json(std::string("ELF\x01\x00\x02", 6))}}).find("binary"), std::string::npos);
  EXPECT_NE(error_of({{"solution", solution_json(std::string(600 << 10, 'x'))}}).find("more than the limit"),
            std::string::npos);
  auto torch = solution_json();
  torch["spec"]["binding"] = "torch";
  EXPECT_NE(error_of({{"solution", torch}}).find("binding \"torch\" is not supported"), std::string::npos);
  auto python = solution_json();
  python["spec"]["language"] = "python";
  python["spec"]["entry_point"] = "kernel.cu::run";
  EXPECT_NE(error_of({{"solution", python}}).find("'python' is not supported here (cuda, cpp or triton)"),
            std::string::npos);
  EXPECT_NE(error_of({{"solution", solution_json()}, {"workload_uuids", {"nope"}}}).find("Workload not found"),
            std::string::npos);
  EXPECT_EQ(error_of({{"solution", solution_json()}, {"timeout", -1}}), "timeout: expected a number of seconds in (0, 3600]");
  EXPECT_EQ(error_of({{"solution", solution_json()}, {"timeout", "soon"}}), "timeout: expected a number or null, got string");
  EXPECT_NE(error_of({{"solution", solution_json()}, {"target", "a100"}}).find("unknown target 'a100'"), std::string::npos);
  EXPECT_NE(error_of({{"solution", solution_json()}, {"cache", "maybe"}}).find("expected \"reuse\" or \"bypass\""),
            std::string::npos);
  EXPECT_NE(error_of({{"solution", solution_json()}, {"request_id", std::string(300, 'a')}}).find("request_id"),
            std::string::npos);
  for (const auto& e : {error_of({{"solution", dotdot}}), error_of({{"solution", torch}})})
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(Submission, ATritonSolutionIsAcceptedWithoutABinding) {
  // The service's workers evaluate Triton candidates through the same harness session as eval
  // (bench/triton/triton_gpu.sh submits the Triton examples as Solutions).
  ordered_json sol = {{"name", "gemm_tl_dot"},
                      {"definition", "gemm_n7168_k5120"},
                      {"author", "me"},
                      {"spec", {{"language", "triton"}, {"target_hardware", {"H100"}}, {"entry_point", "kernel.py::run"},
                                {"dependencies", ordered_json::array()}, {"destination_passing_style", true}}},
                      {"sources", {{{"path", "kernel.py"}, {"content", "import triton\ndef run(A, B, C):\n    pass\n"}}}}};
  auto r = parse({{"solution", sol}});
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->candidate.spec.language, "triton");
}

TEST(Submission, APendingReferenceIsRefusedUnlessOnlyTheCpuStagesAreAskedFor) {
  // Every task of the committed suite is ready now; a copy with one task whose reference is still
  // pending stands for a task added before its GPU reference.
  suite with_pending = the_suite();
  for (auto& t : with_pending.tasks)
    if (t.name == "gemm_n7168_k5120") t.status = "pending";
  auto pending = solution_json();
  auto refused = parse_submission(ordered_json{{"solution", pending}}.dump(), queue::job_kind::evaluate, with_pending, "h200");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.err().message.find("cannot be evaluated on a GPU yet"), std::string::npos) << refused.err().message;
  auto check = parse_submission(ordered_json{{"solution", pending}, {"check_only", true}}.dump(), queue::job_kind::evaluate,
                                with_pending, "h200");
  ASSERT_TRUE(check) << check.err().message;
  EXPECT_TRUE(read_protocol(check->spec.protocol_json)->check_only);
  EXPECT_TRUE(parse({{"solution", pending}})) << "the same task when ready";
}

TEST(ArtifactBundle, RoundTripsAndRefusesAnythingElse) {
  std::string so("\x7f" "ELF\0\n\nbinary", 14);
  auto packed = pack_artifact({"{\"format\":\"ptxbench.verdict/1\"}", so});
  auto parts = unpack_artifact(packed);
  ASSERT_TRUE(parts) << parts.err().message;
  EXPECT_EQ(parts->shared_object, so);
  EXPECT_EQ(parts->cpu_verdict_json, "{\"format\":\"ptxbench.verdict/1\"}");
  EXPECT_FALSE(unpack_artifact("fake artifact"));
  EXPECT_FALSE(unpack_artifact(packed.substr(0, packed.size() - 3))) << "truncated";
  EXPECT_FALSE(unpack_artifact(packed + "x")) << "trailing bytes";
}

}  // namespace
}  // namespace ptxbench::service
