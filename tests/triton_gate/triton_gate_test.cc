// The Triton source gate through its C++ wrapper: every fixture file (accepted/ must pass,
// rejected/ must give exactly the (rule, line) pairs its "# gate-expect:" markers name,
// unparsable/ must give one "syntax" finding), and the wrapper's own failure paths.
// One CTest entry per fixture (gtest_discover_tests), skipped visibly where python3 is missing.

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/process.h"
#include "triton_gate/triton_gate.h"

namespace ptxbench::triton_gate {
namespace {
namespace fs = std::filesystem;

const fs::path k_fixtures = PTXBENCH_TRITON_GATE_FIXTURES;
const fs::path k_script = PTXBENCH_TRITON_GATE_SCRIPT;

#define SKIP_WITHOUT_PYTHON()                                                   \
  if (!find_executable("python3")) GTEST_SKIP() << "python3 not found on PATH"

using rule_line = std::pair<std::string, int>;

std::set<rule_line> expected_findings(const fs::path& file) {
  static const std::regex line_marker(R"(#\s*gate-expect:\s*(.+)$)");
  static const std::regex file_marker(R"(#\s*gate-expect-file:\s*(.+)$)");
  std::set<rule_line> expected;
  std::ifstream in(file);
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    std::smatch m;
    int at = -1;
    if (std::regex_search(text, m, line_marker)) at = number;
    else if (std::regex_search(text, m, file_marker)) at = 0;
    if (at < 0) continue;
    std::istringstream rules(m[1].str());
    for (std::string rule; rules >> rule;) expected.insert({rule, at});
  }
  return expected;
}

std::vector<fs::path> fixture_files(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(k_fixtures / folder))
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

gate_options options() {
  gate_options o;
  o.script = k_script;
  return o;
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class Accepted : public ::testing::TestWithParam<fs::path> {};
TEST_P(Accepted, HasNoFinding) {
  SKIP_WITHOUT_PYTHON();
  auto findings = check_triton_source(GetParam(), options());
  ASSERT_TRUE(findings.ok()) << findings.err().message;
  for (const auto& f : *findings) ADD_FAILURE() << f.rule << " at line " << f.line << ": " << f.message;
}
INSTANTIATE_TEST_SUITE_P(TritonGate, Accepted, ::testing::ValuesIn(fixture_files("accepted")), test_name);

class Rejected : public ::testing::TestWithParam<fs::path> {};
TEST_P(Rejected, GivesTheMarkedRulesAndLines) {
  SKIP_WITHOUT_PYTHON();
  const auto expected = expected_findings(GetParam());
  ASSERT_FALSE(expected.empty()) << "a rejected fixture must mark what it expects";
  auto findings = check_triton_source(GetParam(), options());
  ASSERT_TRUE(findings.ok()) << findings.err().message;
  std::set<rule_line> got;
  for (const auto& f : *findings) {
    got.insert({f.rule, f.line});
    EXPECT_FALSE(f.message.empty());
    if (f.line > 0) {
      EXPECT_FALSE(f.excerpt.empty()) << f.rule << " at line " << f.line;
    }
  }
  EXPECT_EQ(got, expected);
}
INSTANTIATE_TEST_SUITE_P(TritonGate, Rejected, ::testing::ValuesIn(fixture_files("rejected")), test_name);

class Unparsable : public ::testing::TestWithParam<fs::path> {};
TEST_P(Unparsable, IsOneSyntaxFindingWithItsLine) {
  SKIP_WITHOUT_PYTHON();
  auto findings = check_triton_source(GetParam(), options());
  ASSERT_TRUE(findings.ok()) << findings.err().message;
  ASSERT_EQ(findings->size(), 1u);
  EXPECT_EQ(findings->front().rule, "syntax");
  EXPECT_GE(findings->front().line, 1);
}
INSTANTIATE_TEST_SUITE_P(TritonGate, Unparsable, ::testing::ValuesIn(fixture_files("unparsable")), test_name);

TEST(TritonGateWrapper, SyntaxFindingQuotesTheLine) {
  SKIP_WITHOUT_PYTHON();
  auto findings = check_triton_source(k_fixtures / "unparsable" / "missing_colon.py", options());
  ASSERT_TRUE(findings.ok()) << findings.err().message;
  ASSERT_EQ(findings->size(), 1u);
  EXPECT_EQ(findings->front().line, 3);
  EXPECT_EQ(findings->front().excerpt, "def run(A, B, C)");
}

TEST(TritonGateWrapper, ScalarPositionsReachTheGate) {
  SKIP_WITHOUT_PYTHON();
  const fs::path dir = fs::temp_directory_path() / ("triton_gate_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "kernel.py";
  std::ofstream(file) << "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n\n"
                         "def run(Q, K, V, sm_scale, O):\n    t = -Q\n    s = sm_scale * 2\n";
  auto inferred = check_triton_source(file, options());
  ASSERT_TRUE(inferred.ok()) << inferred.err().message;
  EXPECT_TRUE(inferred->empty());  // Q is never used as a tensor: the gate cannot know
  auto opts = options();
  opts.scalar_positions = std::vector<int>{3};
  auto known = check_triton_source(file, opts);
  ASSERT_TRUE(known.ok()) << known.err().message;
  ASSERT_EQ(known->size(), 1u);
  EXPECT_EQ(known->front().rule, "tensor-arithmetic");
  EXPECT_EQ(known->front().line, 9);
  fs::remove_all(dir);
}

// Issue 27 (new-user probe 6): the caller names the entry's arity (inputs + outputs); an entry that
// cannot take that call is a finding, not "built".
TEST(TritonGateWrapper, ArityReachesTheGate) {
  SKIP_WITHOUT_PYTHON();
  const fs::path dir = fs::temp_directory_path() / ("triton_gate_arity_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "kernel.py";
  std::ofstream(file) << "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n\n"
                         "def run(A, B):\n    k[(1,)](A)\n";
  auto opts = options();
  auto unchecked = check_triton_source(file, opts);
  ASSERT_TRUE(unchecked.ok()) << unchecked.err().message;
  EXPECT_TRUE(unchecked->empty());
  opts.arity = 3;
  auto checked = check_triton_source(file, opts);
  ASSERT_TRUE(checked.ok()) << checked.err().message;
  ASSERT_EQ(checked->size(), 1u);
  EXPECT_EQ(checked->front().rule, "entry-signature");
  EXPECT_EQ(checked->front().line, 8);
  EXPECT_NE(checked->front().message.find("takes 2 positional parameters"), std::string::npos) << checked->front().message;
  fs::remove_all(dir);
}

TEST(TritonGateWrapper, MissingCandidateIsAnError) {
  auto r = check_triton_source(k_fixtures / "no-such-file.py", options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("missing"), std::string::npos);
}

TEST(TritonGateWrapper, MissingPythonIsAnError) {
  auto opts = options();
  opts.python = "/nonexistent/python3";
  auto r = check_triton_source(k_fixtures / "accepted" / "gemm_tl_dot.py", opts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("could not start"), std::string::npos) << r.err().message;
}

TEST(TritonGateWrapper, MissingScriptIsAnError) {
  auto opts = options();
  opts.script = k_fixtures / "no-such-gate.py";
  auto r = check_triton_source(k_fixtures / "accepted" / "gemm_tl_dot.py", opts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("script"), std::string::npos);
}

// A gate that hangs, crashes or prints something else is the tool's failure, never "passed".
TEST(TritonGateWrapper, MisbehavingGateIsAnError) {
  SKIP_WITHOUT_PYTHON();
  const fs::path dir = fs::temp_directory_path() / ("triton_gate_fake_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> fakes = {
      {"hang.py", "import time\ntime.sleep(30)\n"},
      {"garbage.py", "print('not json')\n"},
      {"wrong_shape.py", "print('[{\"rule\": 3}]')\nraise SystemExit(1)\n"},
      {"mismatch.py", "print('[]')\nraise SystemExit(1)\n"},
      {"crash.py", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"},
      {"usage.py", "import sys\nprint('usage: bad', file=sys.stderr)\nraise SystemExit(2)\n"},
      {"other_code.py", "raise SystemExit(5)\n"},
  };
  for (const auto& [name, body] : fakes) {
    SCOPED_TRACE(name);
    std::ofstream(dir / name) << body;
    auto opts = options();
    opts.script = dir / name;
    opts.timeout_s = 1;
    auto r = check_triton_source(k_fixtures / "accepted" / "gemm_tl_dot.py", opts);
    EXPECT_FALSE(r.ok());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::triton_gate
