// Disassembles the probe kernels of both packs and checks that each wrapper produced the intended
// SASS instruction. Needs cuobjdump (skips visibly without it: this machine has none, the GPU host
// does). Checks are substring matches on executable lines ("/*0a30*/  OPCODE ...") only.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/process.h"
#include "prompt_test_support.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;
using ptxbench::testing::cuda_tool;
using ptxbench::testing::make_temp_dir;
using ptxbench::testing::source_root;

/// Instruction lines of a cuobjdump -sass listing, grouped by "Function :" section.
std::map<std::string, std::vector<std::string>> sass_by_function(const std::string& listing) {
  std::map<std::string, std::vector<std::string>> out;
  std::string current = "?";
  std::size_t pos = 0;
  while (pos < listing.size()) {
    std::size_t eol = listing.find('\n', pos);
    if (eol == std::string::npos) eol = listing.size();
    const std::string line = listing.substr(pos, eol - pos);
    pos = eol + 1;
    if (auto f = line.find("Function : "); f != std::string::npos) {
      current = line.substr(f + 11);
      continue;
    }
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 2, "/*") != 0) continue;
    const auto close = line.find("*/", start);
    if (close == std::string::npos || close == start + 2) continue;
    const std::string addr = line.substr(start + 2, close - start - 2);
    if (addr.find_first_not_of("0123456789abcdef") != std::string::npos) continue;  // encoding comment
    out[current].push_back(line.substr(close + 2));
  }
  return out;
}

int count_op(const std::vector<std::string>& lines, const std::string& op) {
  int n = 0;
  for (const auto& l : lines) n += l.find(op) != std::string::npos;
  return n;
}

std::string probe_sass(const char* pack, const char* gencode, const char* probe, std::string& error) {
  auto nvcc = cuda_tool("nvcc");
  auto cuobjdump = cuda_tool("cuobjdump");
  const auto dir = make_temp_dir("pack-sass");
  const auto cubin = dir / "probe.cubin";
  auto built =
      run_process({.argv = {nvcc->string(), "-std=c++17", std::string("-gencode=") + gencode, "-I",
                            (source_root() / "packs" / "common" / "include").string(), "-I",
                            (source_root() / "packs" / pack / "include").string(), "-I",
                            (source_root() / "packs" / "common" / "include" / "ptxkit").string(), "-cubin",
                            (source_root() / "tests" / "fixtures" / "packs" / probe).string(), "-o", cubin.string()},
                   .timeout_s = 600,
                   .merge_stderr = true});
  if (!built.succeeded()) {
    error = "nvcc: " + describe_exit(built) + "\n" + built.out;
    return "";
  }
  auto dis = run_process({.argv = {cuobjdump->string(), "-sass", cubin.string()}, .timeout_s = 120});
  fs::remove_all(dir);
  if (!dis.succeeded()) error = "cuobjdump: " + describe_exit(dis) + "\n" + dis.err;
  return dis.out;
}

#define REQUIRE_TOOLS()                                  \
  if (!cuda_tool("nvcc")) GTEST_SKIP() << "nvcc not found"; \
  if (!cuda_tool("cuobjdump")) GTEST_SKIP() << "cuobjdump not found (the CUDA toolkit on the GPU host has it)"

TEST(PackSass, BlackwellWrappersEmitTcgen05Instructions) {
  REQUIRE_TOOLS();
  std::string error;
  const auto listing = probe_sass("sm100a", "arch=compute_100a,code=sm_100a", "tcgen05_probe.cu", error);
  ASSERT_EQ(error, "");
  const auto fns = sass_by_function(listing);
  ASSERT_EQ(fns.size(), 2u) << listing.substr(0, 2000);
  std::vector<std::string> all;
  for (const auto& [name, lines] : fns) all.insert(all.end(), lines.begin(), lines.end());
  for (const char* op : {"UTCHMMA", "UTCBAR", "LDTM", "STTM", "UTCCP", "UTCSHIFT", "UTCATOMSWS", "UTMALDG",
                         "SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.ARRIVE.TRANS64"})
    EXPECT_GT(count_op(all, op), 0) << op << " missing from the sm_100a probe";
  for (const auto& [name, lines] : fns) EXPECT_GT(count_op(lines, "UTCHMMA"), 0) << "no MMA in " << name;
}

TEST(PackSass, HopperWrappersEmitWgmmaTmaAndBarrierInstructions) {
  REQUIRE_TOOLS();
  std::string error;
  const auto listing = probe_sass("sm90a", "arch=compute_90a,code=sm_90a", "sm90a_probe.cu", error);
  ASSERT_EQ(error, "");
  std::vector<std::string> all;
  for (const auto& [name, lines] : sass_by_function(listing)) all.insert(all.end(), lines.begin(), lines.end());
  for (const char* op : {"HGMMA.64x256x16.F32.BF16",
                         "HGMMA.64x128x16.F32.BF16",
                         "WARPGROUP.ARRIVE",
                         "UTMALDG.2D",
                         "UTMALDG.3D",
                         "UTMASTG.2D",
                         "UTMASTG.3D",
                         "UTMAREDG.2D",
                         "UTMAPF",
                         "UBLKCP.S.G",
                         "UBLKCP.G.S",
                         "UBLKPF",
                         "SYNCS.EXCH.64",
                         "SYNCS.ARRIVE.TRANS64",
                         "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                         "ELECT",
                         "USETMAXREG",
                         "LDSM",
                         "STSM",
                         "FENCE.VIEW.ASYNC.S",
                         "UCGABAR_ARV",
                         "UCGABAR_WAIT"})
    EXPECT_GT(count_op(all, op), 0) << op << " missing from the sm_90a probe";
}

TEST(PackSass, ParserKeepsOnlyExecutableLines) {
  const std::string listing =
      "\tcode for sm_100a\n\t\tFunction : _Z3fooPf\n"
      "        /*0000*/                   LDC R1, c[0x0][0x37c] ;       /* 0x0000df00ff017b82 */\n"
      "                                                                 /* 0x000fe20000000800 */\n"
      "        /*0010*/                   UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8] ;\n";
  const auto fns = sass_by_function(listing);
  ASSERT_EQ(fns.count("_Z3fooPf"), 1u);
  EXPECT_EQ(fns.at("_Z3fooPf").size(), 2u);
  EXPECT_EQ(count_op(fns.at("_Z3fooPf"), "UTCHMMA"), 1);
}

}  // namespace
}  // namespace ptxbench
