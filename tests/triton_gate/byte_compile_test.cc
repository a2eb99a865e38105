// The Triton "build" (src/triton_gate/byte_compile.h): Python's compiler on the candidate in a
// confined child, never importing it; and the Triton pack's example passes the gate it teaches.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/process.h"
#include "triton_gate/byte_compile.h"
#include "triton_gate/triton_gate.h"

namespace ptxbench::triton_gate {
namespace {
namespace fs = std::filesystem;

const fs::path k_root = PTXBENCH_SOURCE_ROOT_FOR_TESTS;

#define SKIP_WITHOUT_PYTHON() \
  if (!find_executable("python3")) GTEST_SKIP() << "python3 not found on PATH"

gate_options byte_compile_options() {
  gate_options o;
  o.script = gate_script_under(k_root);
  return o;
}

fs::path write(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p;
}

TEST(ByteCompile, AValidFileCompiles) {
  SKIP_WITHOUT_PYTHON();
  auto r = byte_compile(k_root / "examples" / "triton" / "gemm_tl_dot.py", byte_compile_options());
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_TRUE(r->ok);
  EXPECT_FALSE(r->python_version.empty());
  EXPECT_GE(r->code_objects, 3);  // the module, the kernel, run
  ASSERT_GE(r->command.size(), 4u);
  EXPECT_EQ(r->command[1], "-I");
  EXPECT_EQ(r->command[2], "-B");
}

TEST(ByteCompile, CompilerErrorsCarryLineAndMessage) {
  SKIP_WITHOUT_PYTHON();
  auto p = write("ptxbench-bc-return.py", "x = 1\n\n\ndef f():\n    pass\n\nreturn x\n");
  auto r = byte_compile(p, byte_compile_options());
  fs::remove(p);
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->line, 7);
  EXPECT_EQ(r->kind, "SyntaxError");
  EXPECT_NE(r->message.find("'return' outside function"), std::string::npos) << r->message;
}

TEST(ByteCompile, NeverRunsTheCandidate) {
  SKIP_WITHOUT_PYTHON();
  fs::path marker = fs::temp_directory_path() / "ptxbench-bc-ran";
  fs::remove(marker);
  auto p = write("ptxbench-bc-side-effect.py", "open(" + fs::path(marker).string().insert(0, "'").append("'") +
                                                   ", 'w').write('ran')\nraise SystemExit(3)\n");
  auto r = byte_compile(p, byte_compile_options());
  fs::remove(p);
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_TRUE(r->ok);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(ByteCompile, MissingFileOrScriptIsAnErrorNotAVerdict) {
  EXPECT_FALSE(byte_compile("/nonexistent/kernel.py", byte_compile_options()).ok());
  gate_options o = byte_compile_options();
  o.script = "/nonexistent/triton_gate.py";
  SKIP_WITHOUT_PYTHON();
  auto r = byte_compile(k_root / "examples" / "triton" / "gemm_tl_dot.py", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("byte-compile script"), std::string::npos);
}

TEST(TritonPackExample, PassesTheGate) {
  SKIP_WITHOUT_PYTHON();
  auto findings = check_triton_source(k_root / "packs" / "triton" / "abi_example.py", byte_compile_options());
  ASSERT_TRUE(findings.ok()) << findings.err().message;
  EXPECT_TRUE(findings->empty()) << (findings->empty() ? "" : findings->front().rule + ": " + findings->front().message);
}

}  // namespace
}  // namespace ptxbench::triton_gate
