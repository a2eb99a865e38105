#include <gtest/gtest.h>

#include "build/source_gate.h"
#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::build {
namespace {

std::vector<gate_finding> gate(const std::string& code) { return check_sources({{"kernel.cu", code}}); }

source_file fixture(const std::string& name) {
  auto text = read_file(testing::fixtures_dir() / "kernels" / name, 1u << 20);
  return {name, text ? *text : std::string()};
}

TEST(SourceGate, RejectsCublasCallWithRuleAndLine) {
  auto f = check_sources({fixture("cublas_call.cu")});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().rule, "vendor-library");
  EXPECT_EQ(f.front().line, 3);
  EXPECT_EQ(f.front().excerpt, "#include <cublas_v2.h>");
  bool saw_gemm = false;
  for (const auto& x : f) saw_gemm = saw_gemm || (x.excerpt.find("cublasGemmEx") != std::string::npos && x.line == 10);
  EXPECT_TRUE(saw_gemm);
}

TEST(SourceGate, AcceptsVendorNamesInCommentsAndStrings) {
  EXPECT_TRUE(check_sources({fixture("naive_gemm_sm90a.cu")}).empty());
}

TEST(SourceGate, RejectsDlopen) {
  auto f = check_sources({fixture("dlopen_cublas.cu")});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, "dynamic-loading");
  EXPECT_EQ(f[0].line, 8);
  EXPECT_EQ(f[1].line, 9);
}

TEST(SourceGate, TokenPastingEscapesTheSourceGate) {
  // By design: the link gate, not the source gate, catches names built by the preprocessor.
  EXPECT_TRUE(check_sources({fixture("pragma_link_cublas.cu")}).empty());
}

TEST(SourceGate, CudnnHeaderAndLowercaseApi) {
  auto f = gate("#include \"cudnn.h\"\nint x = CUDNN_STATUS_SUCCESS;\n");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].line, 1);
  EXPECT_EQ(f[1].line, 2);
}

TEST(SourceGate, ProcessSpawningOnlyAsACall) {
  EXPECT_EQ(gate("void f() { system(\"rm -rf /\"); }").size(), 1u);
  EXPECT_EQ(gate("void f() { std::system(\"ls\"); }").size(), 1u);
  EXPECT_EQ(gate("void f() { auto pid = fork (); }").size(), 1u);
  EXPECT_TRUE(gate("struct s { int system; }; void f(s& x) { x.system = 1; }").empty());
  EXPECT_TRUE(gate("void f(obj* p) { p->fork(); }").empty());
  EXPECT_EQ(gate("long f() { return syscall(59, 0, 0, 0); }").front().rule, "process-spawn");
}

TEST(SourceGate, SizeLimitIsStatedAndStopsScanning) {
  source_gate_config cfg;
  cfg.max_total_bytes = 1024;
  auto f = check_sources({{"kernel.cu", std::string(2000, ' ') + "cublasCreate();"}}, cfg);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "size");
  EXPECT_NE(f[0].message.find("over the limit of 1 KiB"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::build
