#include <gtest/gtest.h>

#include "build/link_gate.h"
#include "core/file_io.h"
#include "core/process.h"
#include "test_support.h"

namespace ptxbench::build {
namespace {

// Builds a host shared object with g++ (always present where the project builds): fast, and enough
// to exercise the ELF reader on real DT_NEEDED and undefined-symbol tables.
std::filesystem::path build_so(const std::string& code, const std::vector<std::string>& extra = {}) {
  auto dir = testing::make_temp_dir("elf");
  EXPECT_TRUE(write_file_atomic(dir / "x.cc", code).ok());
  std::vector<std::string> argv = {"g++", "-shared", "-fPIC", "-o", (dir / "x.so").string(), (dir / "x.cc").string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run_process({.argv = argv, .timeout_s = 60, .merge_stderr = true});
  EXPECT_TRUE(r.succeeded()) << r.out;
  return dir / "x.so";
}

TEST(LinkGate, CleanObjectPasses) {
  auto so = build_so("extern \"C\" int add(int a, int b) { return a + b; }");
  auto f = check_linkage_of(so);
  ASSERT_TRUE(f.ok()) << f.err().message;
  EXPECT_TRUE(f->empty());
}

TEST(LinkGate, UndefinedAndWeakVendorSymbolsAreRejected) {
  auto so = build_so(
      "extern \"C\" int cublasCreate_v2(void**);\n"
      "extern \"C\" __attribute__((weak)) int cudnnCreate(void**);\n"
      "extern \"C\" int f() { void* h; if (&cudnnCreate) cudnnCreate(&h); return cublasCreate_v2(&h); }");
  auto info = read_elf_dynamic(so);
  ASSERT_TRUE(info.ok());
  auto f = check_linkage(*info, "x.so");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, "vendor-library");
  std::string all = f[0].message + f[1].message;
  EXPECT_NE(all.find("cublasCreate_v2 (undefined symbol)"), std::string::npos);
  EXPECT_NE(all.find("cudnnCreate (weak undefined symbol)"), std::string::npos);
}

TEST(LinkGate, NeededLibraryOutsideAllowListIsRejected) {
  auto so = build_so("extern \"C\" double g(double x);\nextern \"C\" double f(double x) { return g(x); }",
                     {"-Wl,--no-as-needed", "-lz"});
  auto info = read_elf_dynamic(so);
  ASSERT_TRUE(info.ok());
  bool has_z = false;
  for (const auto& n : info->needed) has_z = has_z || n.rfind("libz.so", 0) == 0;
  if (!has_z) GTEST_SKIP() << "libz not available to link against on this machine";
  auto f = check_linkage(*info, "x.so");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, "needed-library");
}

TEST(LinkGate, DlopenSymbolIsRejected) {
  auto so = build_so("#include <dlfcn.h>\nextern \"C\" void* f() { return dlopen(\"x\", RTLD_NOW); }", {"-ldl"});
  auto f = check_linkage_of(so);
  ASSERT_TRUE(f.ok());
  ASSERT_FALSE(f->empty());
  EXPECT_EQ(f->front().rule, "dynamic-loading");
}

TEST(ElfReader, RejectsNonElfAndTruncatedFiles) {
  EXPECT_EQ(parse_elf_dynamic("hello").err().message, "not an ELF file");
  std::string fake = std::string("\x7f" "ELF", 4) + std::string(60, '\0');
  fake[4] = 2;
  fake[5] = 1;
  fake[0x3A] = 64;
  fake[0x3C] = 10;  // ten sections past the end of the file
  EXPECT_EQ(parse_elf_dynamic(fake).err().message, "malformed ELF section table");
}

}  // namespace
}  // namespace ptxbench::build
