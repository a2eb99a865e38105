#include <gtest/gtest.h>

#include "fake_work.h"
#include "queue/content_key.h"

namespace ptxbench::testing {
namespace {

using namespace queue;

job_spec spec_with(const std::string& solution, const std::string& protocol = "{}") {
  job_spec s;
  s.task = "gemm";
  s.target = "h200";
  s.solution_json = solution;
  s.protocol_json = protocol;
  return s;
}

const char* two_files = R"({"name":"k","definition":"gemm","author":"a","spec":{"language":"cuda",
  "target_hardware":["h200"],"entry_point":"kernel.cu::run"},
  "sources":[{"path":"kernel.cu","content":"#include \"util.cuh\"\n"},{"path":"util.cuh","content":"// util\n"}]})";

std::string key_of(const job_spec& s) {
  auto k = content_key(s);
  EXPECT_TRUE(k) << k.err().message;
  return k ? *k : "";
}

TEST(ContentKey, SameContentGivesTheSameKey) {
  EXPECT_EQ(key_of(spec_with(two_files)), key_of(spec_with(two_files)));
  EXPECT_EQ(key_of(spec_with(two_files)).size(), 64u);
}

TEST(ContentKey, CanonicalTextIsPinned) {
  // If this changes, every stored key changes: bump "ptxbench-job-key/N" in content_key.cc on purpose.
  auto text = canonical_job_text(spec_with(fake_solution("gemm", "x"), R"({"atol": 0.01, "timeout": 30.0})"));
  ASSERT_TRUE(text) << text.err().message;
  EXPECT_EQ(*text,
            R"({"kind":"evaluate","protocol":{"atol":0.01,"timeout":30},"solution":{"sources":[{"content":"x",)"
            R"("path":"kernel.cu"}],"spec":{"binding":null,"dependencies":[],"destination_passing_style":true,)"
            R"("entry_point":"kernel.cu::run","language":"cuda","target_hardware":["h200"]}},"target":"h200",)"
            R"("task":"gemm","workloads":[]})");
}

TEST(ContentKey, SourceOrderNameAuthorAndFormattingDoNotMatter) {
  const char* reordered = R"({"name":"other","definition":"gemm","author":"b","description":"d",
    "sources":[{"content":"// util\n","path":"util.cuh"},{"path":"kernel.cu","content":"#include \"util.cuh\"\n"}],
    "spec":{"entry_point":"kernel.cu::run","target_hardware":["h200"],"language":"cuda"}})";
  EXPECT_EQ(key_of(spec_with(two_files)), key_of(spec_with(reordered)));
}

TEST(ContentKey, SpecDefaultsWrittenOrLeftOutAreTheSame) {
  std::string with_defaults = two_files;
  with_defaults.replace(with_defaults.find("\"entry_point\""), 0,
                        "\"destination_passing_style\": true, \"binding\": null, \"dependencies\": [], ");
  EXPECT_EQ(key_of(spec_with(two_files)), key_of(spec_with(with_defaults)));
  std::string no_dps = two_files;
  no_dps.replace(no_dps.find("\"entry_point\""), 0, "\"destination_passing_style\": false, ");
  EXPECT_NE(key_of(spec_with(two_files)), key_of(spec_with(no_dps)));
}

TEST(ContentKey, ProtocolNullsKeyOrderAndIntegralFloatsAreCanonical) {
  auto base = key_of(spec_with(two_files, R"({"atol":0.01,"timeout":30})"));
  EXPECT_EQ(base, key_of(spec_with(two_files, R"({ "timeout" : 30.0, "atol" : 1e-2, "rtol": null })")));
  EXPECT_NE(base, key_of(spec_with(two_files, R"({"atol":0.02,"timeout":30})")));
  EXPECT_EQ(key_of(spec_with(two_files, "{}")), key_of(spec_with(two_files, "")));
}

TEST(ContentKey, EveryPartOfTheJobChangesTheKey) {
  job_spec base = spec_with(two_files);
  std::string k = key_of(base);
  auto differs = [&](job_spec s, const char* what) { EXPECT_NE(key_of(s), k) << what; };
  job_spec s = base;
  s.kind = job_kind::sanitize;
  differs(s, "kind");
  s = base;
  s.target = "b200";
  differs(s, "target");
  s = base;
  s.workloads = {"w-1"};
  differs(s, "workloads");
  s = base;
  s.protocol_json = R"({"atol":0.05})";
  differs(s, "protocol");
  std::string t = two_files;
  differs(spec_with(t.replace(t.find("// util"), 7, "// Util")), "one byte of a source");
  t = two_files;
  differs(spec_with(t.replace(t.find("util.cuh\",\"content"), 8, "util.cu ")), "a source path");
  t = two_files;
  differs(spec_with(t.replace(t.find("kernel.cu::run"), 14, "kernel.cu::go ")), "the entry point");
  t = two_files;
  differs(spec_with(t.replace(t.find("\\n\"},{\"path\":\"util"), 2, "\\r\\n")), "CRLF instead of LF");
  s = base;
  s.task = "gemm2";
  s.solution_json = std::string(two_files);
  s.solution_json.replace(s.solution_json.find("\"gemm\""), 6, "\"gemm2\"");
  differs(s, "task");
}

TEST(ContentKey, WorkloadOrderAndDuplicatesDoNotMatter) {
  job_spec a = spec_with(two_files), b = spec_with(two_files);
  a.workloads = {"w2", "w1"};
  b.workloads = {"w1", "w2", "w1"};
  EXPECT_EQ(key_of(a), key_of(b));
}

TEST(ContentKey, BadSolutionsAreOneLineErrors) {
  auto err = [](const std::string& solution, const std::string& needle) {
    auto k = content_key(spec_with(solution));
    ASSERT_FALSE(k) << solution;
    EXPECT_NE(k.err().message.find(needle), std::string::npos) << k.err().message;
    EXPECT_EQ(k.err().message.find('\n'), std::string::npos);
  };
  err("{", "invalid JSON");
  err("[]", "expected a JSON object");
  err(R"({"definition":"attention","spec":{},"sources":[{"path":"a","content":""}]})", "does not match");
  err(R"({"sources":[{"path":"a","content":""}]})", "solution.spec");
  err(R"({"spec":{},"sources":[]})", "non-empty array");
  err(R"({"spec":{},"sources":[{"path":"a"}]})", "solution.sources[0]");
  err(R"({"spec":{},"sources":[{"path":"a","content":""},{"path":"a","content":"x"}]})", "appears twice");
  auto bad_protocol = content_key(spec_with(two_files, "[1,2]"));
  ASSERT_FALSE(bad_protocol);
  EXPECT_NE(bad_protocol.err().message.find("protocol options"), std::string::npos);
  job_spec no_target = spec_with(two_files);
  no_target.target.clear();
  EXPECT_FALSE(content_key(no_target));
}

}  // namespace
}  // namespace ptxbench::testing
