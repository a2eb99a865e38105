// Reading submissions (service/submission.h): upstream's normalized names, upstream's fields and
// PTXBench's; a request that does not match the schema is upstream's 422 field list, one that cannot
// be served one clear 400 line; the artifact bundle.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "service/artifact_bundle.h"
#include "service/submission.h"
#include "test_support.h"

namespace ptxbench::service {
namespace {

const suite& the_suite() {
  static suite s = *load_suite(testing::repo_root() / "suite");
  return s;
}

std::string normalized_name_of(const ordered_json& sol) {
  auto s = solution_from_json(sol);
  return s ? normalized_solution_name(*s) : "";
}

ordered_json solution_json(const std::string& content = "// k\n") {
  return {{"name", "k"},
          {"definition", "gemm_n7168_k5120"},
          {"author", "me"},
          {"spec", {{"language", "cuda"}, {"target_hardware", {"H100"}}, {"entry_point", "kernel.cu::run"}, {"binding", nullptr}}},
          {"sources", {{{"path", "kernel.cu"}, {"content", content}}}}};
}

parsed_submission parse(const ordered_json& body, queue::job_kind kind = queue::job_kind::evaluate) {
  return parse_submission(body.dump(), kind, the_suite(), "h200");
}

/// The 400 line (a well-formed request that cannot be served).
std::string error_of(const ordered_json& body, queue::job_kind kind = queue::job_kind::evaluate) {
  auto r = parse(body, kind);
  EXPECT_FALSE(r) << body.dump();
  if (r) return "";
  EXPECT_EQ(r.refusal.status, 400) << r.refusal.body().dump();
  return r.refusal.detail;
}

/// The 422 field list (a request that does not match the schema), as "loc: msg [type]" lines.
std::vector<std::string> invalid_of(const std::string& body, queue::job_kind kind = queue::job_kind::evaluate) {
  auto r = parse_submission(body, kind, the_suite(), "h200");
  EXPECT_FALSE(r) << body;
  if (r) return {};
  EXPECT_EQ(r.refusal.status, 422) << r.refusal.body().dump();
  std::vector<std::string> out;
  for (const auto& f : r.refusal.fields) out.push_back(fmt::format("{}: {} [{}]", f.loc.dump(), f.msg, f.type));
  return out;
}
std::vector<std::string> invalid_of(const ordered_json& body, queue::job_kind kind = queue::job_kind::evaluate) {
  return invalid_of(body.dump(), kind);
}

TEST(UpstreamName, IsTheNamePlusTheFirstEightHexDigitsOfUpstreamsSha1) {
  // Expected values from upstream's recipe in Python: sha1 over definition, language, entry point,
  // binding ("" for none), dependencies, then each source's path and content, no separators.
  auto s = parse({{"solution", solution_json()}});
  ASSERT_TRUE(s) << s.refusal.one_line();
  EXPECT_EQ(s->normalized_solution_name, "k_fd597eef");
  solution multi = s->candidate;
  multi.spec.binding = "tvm-ffi";
  multi.spec.dependencies = {"cutlass"};
  multi.sources = {{"kernel.cu", "int x;\n"}, {"util.cuh", "#pragma once\n"}};
  EXPECT_EQ(upstream_solution_hash(multi), "205e6602123ce12eed411d84d4a72efe9205ff22");
}

TEST(Submission, CarriesTheRenamedSolutionAndTheDefaults) {
  auto s = parse({{"solution", solution_json()}, {"workload_uuids", nullptr}});
  ASSERT_TRUE(s) << s.refusal.one_line();
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
  ASSERT_TRUE(s) << s.refusal.one_line();
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

// Issue 27, parity point 3: what FastAPI refuses before upstream's handler runs is 422 with a list
// of {loc, msg, type}; each case names its field.
TEST(Submission, ARequestThatDoesNotMatchTheSchemaIsUpstreams422FieldList) {
  using V = std::vector<std::string>;
  EXPECT_EQ(invalid_of(std::string("{\"solution\": ")), V{"[\"body\",13]: JSON decode error [json_invalid]"});
  EXPECT_EQ(invalid_of(ordered_json::array()),
            V{"[\"body\"]: Input should be a valid dictionary or object to extract fields from [model_attributes_type]"});
  EXPECT_EQ(invalid_of(ordered_json::object()), V{"[\"body\",\"solution\"]: Field required [missing]"});
  auto no_author = solution_json();
  no_author.erase("author");
  EXPECT_EQ(invalid_of({{"solution", no_author}}), V{"[\"body\",\"solution\",\"author\"]: Field required [missing]"});
  auto entry_elsewhere = solution_json();
  entry_elsewhere["spec"]["entry_point"] = "main.cu::run";
  EXPECT_EQ(invalid_of({{"solution", entry_elsewhere}}),
            V{"[\"body\",\"solution\",\"spec\",\"entry_point\"]: entry file \"main.cu\" is not among the sources [value_error]"});
  auto dotdot = solution_json();
  dotdot["sources"][0]["path"] = "../kernel.cu";
  dotdot["spec"]["entry_point"] = "../kernel.cu::run";
  EXPECT_EQ(invalid_of({{"solution", dotdot}}),
            V{"[\"body\",\"solution\",\"sources\",0,\"path\"]: unsafe path \"../kernel.cu\": '..' in path [value_error]"});
  auto absolute = solution_json();
  absolute["sources"][0]["path"] = "/etc/passwd";
  EXPECT_NE(invalid_of({{"solution", absolute}}).at(0).find("absolute path"), std::string::npos);
  EXPECT_EQ(invalid_of({{"solution", solution_json("")}}),
            V{"[\"body\",\"solution\",\"sources\",0,\"content\"]: String should have at least 1 character [string_too_short]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"timeout", 0}}),
            V{"[\"body\",\"timeout\"]: Input should be greater than 0 [greater_than]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"timeout", -1}}),
            V{"[\"body\",\"timeout\"]: Input should be greater than 0 [greater_than]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"timeout", 2.5}}),
            V{"[\"body\",\"timeout\"]: Input should be a valid integer, got a number with a fractional part [int_from_float]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"timeout", "soon"}}),
            V{"[\"body\",\"timeout\"]: Input should be a valid integer [int_type]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"baseline_cache_mode", "invalid"}}),
            V{"[\"body\",\"baseline_cache_mode\"]: Input should be 'reuse' or 'bypass' [enum]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"workload_uuids", {1}}}),
            V{"[\"body\",\"workload_uuids\",0]: Input should be a valid string [string_type]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"run_baseline", "no"}}),
            V{"[\"body\",\"run_baseline\"]: Input should be a valid boolean [bool_type]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"sanitizer_types", {"memcheck", "leakcheck"}}}, queue::job_kind::sanitize),
            V{"[\"body\",\"sanitizer_types\",1]: Input should be 'memcheck', 'racecheck', 'synccheck' or 'initcheck' [enum]"});
  EXPECT_EQ(invalid_of({{"solution", solution_json()}, {"evaluation_timeout", 0}}, queue::job_kind::debug),
            V{"[\"body\",\"evaluation_timeout\"]: Input should be greater than 0 [greater_than]"});
  EXPECT_NE(invalid_of({{"solution", solution_json()}, {"request_id", std::string(300, 'a')}}).at(0).find("request_id"),
            std::string::npos);
  // Several problems at once are all listed.
  EXPECT_EQ(invalid_of({{"solution", no_author}, {"timeout", 0}, {"cache", "maybe"}}).size(), 3u);
}

TEST(Submission, AWellFormedRequestThatCannotBeServedIsOneLine400) {
  auto unknown = solution_json();
  unknown["definition"] = "no_such_definition";
  EXPECT_EQ(error_of({{"solution", unknown}}), "Definition not found: no_such_definition");
  EXPECT_NE(error_of({{"solution", solution_json(std::string("ELF\x01\x02", 5))}}).find("binary"), std::string::npos);
  EXPECT_NE(error_of({{"solution", solution_json(std::string(600 << 10, 'x'))}}).find("more than the limit"),
            std::string::npos);
  auto torch = solution_json();
  torch["spec"]["binding"] = "torch";
  EXPECT_NE(error_of({{"solution", torch}}).find("binding \"torch\" is not supported"), std::string::npos);
  auto tilelang = solution_json();
  tilelang["spec"]["language"] = "tilelang";
  EXPECT_EQ(error_of({{"solution", tilelang}}),
            "solution.spec.language: 'tilelang' is not supported here (cuda, cpp, triton or python)");
  EXPECT_NE(error_of({{"solution", solution_json()}, {"target", "a100"}}).find("unknown target 'a100'"), std::string::npos);
  // Upstream (parity point 6): without a baseline run the reference outputs must be stored; no
  // workload of the suite stores any.
  EXPECT_EQ(error_of({{"solution", solution_json()}, {"run_baseline", false}}),
            "Workload '94920358-01a8-4c5b-9209-3103fd490e94' has no `outputs`; required when run_baseline=False");
  EXPECT_EQ(error_of({{"solution", torch}}).find('\n'), std::string::npos);
}

// Issue 27, parity points 2, 5 and 6.
TEST(Submission, UpstreamsAcceptedRequestsAreAccepted) {
  // A workload uuid the definition does not have: accepted, and the task then fails as upstream's does.
  auto unknown_wl = parse({{"solution", solution_json()}, {"workload_uuids", {"nonexistent_uuid"}}});
  ASSERT_TRUE(unknown_wl) << unknown_wl.refusal.one_line();
  EXPECT_EQ(unknown_wl->no_workloads, "No workloads found for definition: gemm_n7168_k5120");
  auto some = parse({{"solution", solution_json()}, {"workload_uuids", {"nonexistent_uuid", "94920358-01a8-4c5b-9209-3103fd490e94"}}});
  ASSERT_TRUE(some);
  EXPECT_TRUE(some->no_workloads.empty()) << "the workloads it does have are evaluated";
  EXPECT_EQ(some->spec.workloads, std::vector<std::string>{"94920358-01a8-4c5b-9209-3103fd490e94"});
  // Python and Triton solutions (upstream's own test solution is Python): the job carries the language.
  for (const char* language : {"python", "triton"}) {
    auto py = solution_json("import triton\n# FAKE_SPEEDUP=1.2\n");
    py["spec"] = {{"language", language}, {"target_hardware", {"cuda"}}, {"entry_point", "pkg/main.py::kernel"},
                  {"destination_passing_style", false}};
    py["sources"][0]["path"] = "pkg/main.py";
    auto s = parse({{"solution", py}});
    ASSERT_TRUE(s) << language << ": " << s.refusal.one_line();
    auto stored = ordered_json::parse(s->spec.solution_json);
    EXPECT_EQ(stored["spec"]["language"], "triton") << "upstream's python is PTXBench's Triton track";
    EXPECT_EQ(stored["spec"]["entry_point"], "pkg/main.py::kernel");
    EXPECT_FALSE(stored["spec"]["destination_passing_style"].get<bool>());
    EXPECT_EQ(s->normalized_solution_name, normalized_name_of(py)) << "upstream's name hashes what was submitted";
  }
  // profile_baseline: false is carried to the response; a batch-style negative timeout is not ours to refuse here.
  auto no_profile = parse({{"solution", solution_json()}, {"profile_baseline", false}});
  ASSERT_TRUE(no_profile);
  EXPECT_FALSE(read_protocol(no_profile->spec.protocol_json)->profile_baseline);
  // Upstream's other endpoint options are accepted (and type-checked).
  EXPECT_TRUE(parse({{"solution", solution_json()}, {"sanitizer_path", "compute-sanitizer"}, {"max_lines", nullptr}, {"print_limit", 1}},
                    queue::job_kind::sanitize));
  auto debug = parse({{"solution", solution_json()}, {"timeout", 120}, {"evaluation_timeout", 30}, {"print_limit", 100},
                      {"source_context_lines", 2}, {"enable_coredump", true}, {"coredump_grace_seconds", 30}},
                     queue::job_kind::debug);
  ASSERT_TRUE(debug) << debug.refusal.one_line();
  auto p = read_protocol(debug->spec.protocol_json);
  EXPECT_EQ(p->sanitizer_types, std::vector<std::string>{"memcheck"}) << "upstream's debug default";
  EXPECT_EQ(p->call_timeout_s, 30);
  EXPECT_EQ(p->source_context_lines, 2);
  EXPECT_TRUE(parse({{"solution", solution_json()}, {"set", "detailed"}, {"sections", {"SpeedOfLight"}}, {"page", "details"}},
                    queue::job_kind::profile));
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
  ASSERT_TRUE(r) << r.refusal.one_line();
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
  EXPECT_NE(refused.refusal.detail.find("cannot be evaluated on a GPU yet"), std::string::npos) << refused.refusal.detail;
  auto check = parse_submission(ordered_json{{"solution", pending}, {"check_only", true}}.dump(), queue::job_kind::evaluate,
                                with_pending, "h200");
  ASSERT_TRUE(check) << check.refusal.one_line();
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
