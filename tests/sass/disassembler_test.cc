#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "core/file_io.h"
#include "core/process.h"
#include "sass/disassembler.h"
#include "sass/static_check.h"
#include "sass/fixture_text.h"

namespace ptxbench::sass {
namespace {

namespace fs = std::filesystem;

// A CUDA root with a fake tool in bin/, written as a shell script.
struct fake_root {
  fs::path root = testing::make_temp_dir("disasm");
  fake_root(const std::string& tool, const std::string& script) {
    fs::create_directories(root / "bin");
    EXPECT_TRUE(write_file_atomic(root / "bin" / tool, "#!/bin/sh\n" + script).ok());
    ::chmod((root / "bin" / tool).c_str(), 0755);
    EXPECT_TRUE(write_file_atomic(root / "kernel.so", "not really an ELF").ok());
  }
  ~fake_root() { fs::remove_all(root); }
  disassembler_options options(disassembler_tool t = disassembler_tool::cuobjdump) const {
    disassembler_options o;
    o.tool = t;
    o.cuda_root = root;
    o.search_path = false;
    return o;
  }
};

TEST(Disassembler, MissingToolIsItsOwnState) {
  disassembler_options o;
  o.search_path = false;
  o.cuda_root = "/nonexistent/cuda";
  auto d = disassemble("/bin/sh", o);
  EXPECT_EQ(d.state, disassembly_state::tool_missing);
  EXPECT_EQ(d.message, "cuobjdump is not installed here (searched /nonexistent/cuda/bin)");
  EXPECT_FALSE(find_disassembler(o).has_value());
  EXPECT_EQ(state_name(d.state), "tool_missing");
}

TEST(Disassembler, RunsCuobjdumpWithSassFlag) {
  auto fixture = testing::fixtures_dir() / "sass" / "probe_sm90a.cuobjdump.txt";
  fake_root fake("cuobjdump", "[ \"$1\" = \"-sass\" ] || exit 9\ncat '" + fixture.string() + "'\n");
  auto d = disassemble(fake.root / "kernel.so", fake.options());
  ASSERT_EQ(d.state, disassembly_state::ok) << d.message;
  EXPECT_EQ(d.tool_path, fake.root / "bin" / "cuobjdump");
  EXPECT_EQ(d.command, (std::vector<std::string>{(fake.root / "bin" / "cuobjdump").string(), "-sass",
                                                 (fake.root / "kernel.so").string()}));
  EXPECT_EQ(d.text, testing::fixture_text("sass/probe_sm90a.cuobjdump.txt"));
  auto fns = parse_sass(d.text);
  ASSERT_TRUE(fns.ok());
  EXPECT_EQ(fns->size(), 4u);
}

TEST(Disassembler, NvdisasmGetsCodeOnlyFlag) {
  fake_root fake("nvdisasm", "[ \"$1\" = \"-c\" ] || exit 9\necho ok\n");
  auto d = disassemble(fake.root / "kernel.so", fake.options(disassembler_tool::nvdisasm));
  ASSERT_EQ(d.state, disassembly_state::ok) << d.message;
  EXPECT_EQ(d.text, "ok\n");
}

TEST(Disassembler, FailureCarriesStderr) {
  fake_root fake("cuobjdump", "echo \"cuobjdump fatal   : Could not open input file 'kernel.so'\" >&2\nexit 1\n");
  auto d = disassemble(fake.root / "kernel.so", fake.options());
  EXPECT_EQ(d.state, disassembly_state::tool_failed);
  EXPECT_EQ(d.message, "cuobjdump exited with code 1: cuobjdump fatal   : Could not open input file 'kernel.so'");
}

TEST(Disassembler, TimeoutIsAFailure) {
  fake_root fake("cuobjdump", "sleep 10\n");
  auto o = fake.options();
  o.timeout_s = 0.3;
  auto d = disassemble(fake.root / "kernel.so", o);
  EXPECT_EQ(d.state, disassembly_state::tool_failed);
  EXPECT_NE(d.message.find("timed out"), std::string::npos) << d.message;
}

TEST(Disassembler, MissingInputIsBadInput) {
  fake_root fake("cuobjdump", "exit 0\n");
  auto d = disassemble(fake.root / "absent.so", fake.options());
  EXPECT_EQ(d.state, disassembly_state::bad_input);
  EXPECT_NE(d.message.find("no such file"), std::string::npos);
}

// Runs only where cuobjdump exists (the GPU host): build probe.cu for sm_90a with nvcc, disassemble
// it and check the same family counts the fixture gives.
TEST(Disassembler, RealCuobjdumpOnProbe) {
  disassembler_options o;
  o.cuda_root = "/usr/local/cuda";
  if (!find_disassembler(o)) GTEST_SKIP() << "cuobjdump not installed here; this test runs on the GPU host";
  auto nvcc = find_executable("nvcc", {"/usr/local/cuda/bin"});
  if (!nvcc) GTEST_SKIP() << "nvcc not installed here";
  auto dir = testing::make_temp_dir("probe");
  process_spec build;
  build.argv = {nvcc->string(), "-cubin", "-O2", "-gencode=arch=compute_90a,code=sm_90a",
                (testing::fixtures_dir() / "sass" / "probe.cu").string(), "-o", (dir / "probe.cubin").string()};
  build.timeout_s = 300;
  auto b = run_process(build);
  ASSERT_TRUE(b.succeeded()) << describe_exit(b) << b.err;
  auto d = disassemble(dir / "probe.cubin", o);
  ASSERT_TRUE(d.ok()) << d.message;
  auto fns = parse_sass(d.text);
  ASSERT_TRUE(fns.ok()) << fns.err().message;
  auto r = static_check(*fns, {{"GMMA", "TMA"}, "sm_90a"});
  ASSERT_TRUE(r.ok());
  std::map<std::string, family_counts> got;
  for (const auto& k : r->kernels) got[k.name] = k.families;
  EXPECT_EQ(got["_Z11wgmma_probePf"].at("GMMA"), 1);
  EXPECT_EQ(got["_Z10wgmma_deadPfi"].at("GMMA"), 1);
  EXPECT_EQ(got["_Z15bulk_copy_probePKfPfi"].at("UBLKCP"), 1);
  EXPECT_EQ(got["_Z15bulk_copy_probePKfPfi"].count("TMA"), 0u);
  EXPECT_EQ(got["_Z16tma_tensor_probe14CUtensorMap_stPf"].at("TMA"), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::sass
