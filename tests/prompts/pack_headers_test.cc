// The knowledge-pack headers are real code: every header compiles on its own for its architecture,
// a probe kernel that calls every wrapper goes through ptxas, the ABI example and the pack-based GEMM
// candidate build exactly like a candidate, and the headers shared by both packs stay identical.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "core/file_io.h"
#include "core/process.h"
#include "prompt_test_support.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;
using ptxbench::testing::cuda_tool;
using ptxbench::testing::make_temp_dir;
using ptxbench::testing::source_root;

struct pack_arch {
  const char* pack;
  const char* gencode;
};
constexpr pack_arch k_packs[] = {{"sm90a", "arch=compute_90a,code=sm_90a"},
                                 {"sm100a", "arch=compute_100a,code=sm_100a"}};

std::vector<fs::path> headers_in(const fs::path& include_dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(include_dir / "ptxkit"))
    if (e.path().extension() == ".cuh") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// The headers a candidate for this pack can include: the pack's own and the ones every pack shares.
std::vector<fs::path> headers_of(const char* pack) {
  auto out = headers_in(source_root() / "packs" / "common" / "include");
  auto own = headers_in(source_root() / "packs" / pack / "include");
  out.insert(out.end(), own.begin(), own.end());
  return out;
}

/// The include options of a candidate build for this pack (as eval::candidate_include_dirs gives).
std::vector<std::string> pack_includes(const char* pack) {
  return {"-I", (source_root() / "packs" / "common" / "include").string(), "-I",
          (source_root() / "packs" / pack / "include").string(), "-I",
          (source_root() / "packs" / "common" / "include" / "ptxkit").string()};
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Runs nvcc with the pack's include path; returns "" on success, else the command and its output.
std::string nvcc(const fs::path& exe, const std::vector<std::string>& args, const fs::path& cwd) {
  process_spec spec;
  spec.argv = {exe.string(), "-std=c++17"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.timeout_s = 600;
  spec.merge_stderr = true;
  auto r = run_process(spec);
  std::string cmd;
  for (const auto& a : spec.argv) cmd += a + " ";
  if (!r.succeeded()) return cmd + "\n" + describe_exit(r, spec.timeout_s) + "\n" + r.out;
  if (r.out.find("warning") != std::string::npos) return cmd + "\nwarnings:\n" + r.out;
  return "";
}

#define REQUIRE_NVCC(var)       \
  auto var = cuda_tool("nvcc"); \
  if (!var) GTEST_SKIP() << "nvcc not found (CUDA toolkit not installed)";

TEST(PackHeaders, EveryHeaderIsSelfContainedForItsArch) {
  REQUIRE_NVCC(exe);
  const auto dir = make_temp_dir("pack-headers");
  for (const auto& pa : k_packs) {
    const auto headers = headers_of(pa.pack);
    ASSERT_FALSE(headers.empty()) << pa.pack;
    for (const auto& h : headers) {
      const std::string name = h.filename().string();
      const fs::path tu = dir / fmt::format("{}_{}.cu", pa.pack, h.stem().string());
      // Included twice: the include guard must hold; nothing else: the header must bring its own includes.
      ASSERT_TRUE(write_file_atomic(tu, fmt::format("#include <ptxkit/{0}>\n#include <ptxkit/{0}>\n", name)).ok());
      const std::string err =
          nvcc(*exe,
               concat(concat({"-gencode=" + std::string(pa.gencode)}, pack_includes(pa.pack)),
                      {"-ptx", tu.string(), "-o", (dir / (tu.stem().string() + ".ptx")).string()}),
               dir);
      EXPECT_EQ(err, "") << pa.pack << "/" << name;
    }
  }
  fs::remove_all(dir);
}

TEST(PackHeaders, ProbeKernelsCallingEveryWrapperPassPtxas) {
  REQUIRE_NVCC(exe);
  const auto dir = make_temp_dir("pack-probes");
  for (const auto& [pack, gencode, probe] :
       {std::tuple{"sm90a", "arch=compute_90a,code=sm_90a", "sm90a_probe.cu"},
        std::tuple{"sm100a", "arch=compute_100a,code=sm_100a", "tcgen05_probe.cu"}}) {
    const std::string err =
        nvcc(*exe,
             concat(concat({std::string("-gencode=") + gencode}, pack_includes(pack)),
                    {"-cubin", (source_root() / "tests" / "fixtures" / "packs" / probe).string(), "-o",
                     (dir / (std::string(pack) + ".cubin")).string()}),
             dir);
    EXPECT_EQ(err, "") << probe;
  }
  fs::remove_all(dir);
}

TEST(PackHeaders, AbiExampleAndPackGemmBuildLikeACandidate) {
  REQUIRE_NVCC(exe);
  const auto dir = make_temp_dir("pack-candidates");
  for (const auto& src :
       {source_root() / "packs" / "abi_example.cu", source_root() / "examples" / "gemm" / "wgmma_tma_pack.cu",
        source_root() / "examples" / "reference" / "gemm_persistent.cu"}) {
    const std::string err = nvcc(
        *exe,
        concat(concat({"-O3", "-gencode=arch=compute_90a,code=sm_90a", "-shared", "-Xcompiler", "-fPIC", "--cudart",
                       "shared", "-I", (source_root() / "include").string()},
                      pack_includes("sm90a")),
               {src.string(), "-o", (dir / (src.stem().string() + ".so")).string(), "-lcuda"}),
        dir);
    EXPECT_EQ(err, "") << src;
  }
  fs::remove_all(dir);
}

TEST(PackHeaders, EveryHeaderLivesInOnePlace) {
  // Headers both generations use live once, in packs/common; a pack's own folder holds only what is
  // specific to its architecture. The same name in both would make the include order decide.
  const auto shared = headers_in(source_root() / "packs" / "common" / "include");
  EXPECT_GE(shared.size(), 6u);
  for (const char* pack : {"sm90a", "sm100a"})
    for (const auto& h : headers_in(source_root() / "packs" / pack / "include"))
      for (const auto& c : shared) EXPECT_NE(h.filename(), c.filename()) << pack << " repeats " << c.filename();
}

}  // namespace
}  // namespace ptxbench

namespace ptxbench {
namespace {

// Every wrapper the Hopper pack declares is called by a GPU test in tests/gpu/pack_*.cu (run on the
// H200 by bench/eval/pack_gpu_tests.sh), so no wrapper ships untested. Names generated by token
// pasting (wgmma_m64n##N##k16_ss) are reached through wgmma_ss/wgmma_rs; pack_bf16x2 only through
// the wrappers that use it.
TEST(PackHeaders, EveryHopperWrapperIsCalledByAGpuTest) {
  std::string tests;
  for (const auto& e : fs::directory_iterator(source_root() / "tests" / "gpu")) {
    const auto name = e.path().filename().string();
    if (name.rfind("pack_", 0) != 0 || e.path().extension() != ".cu") continue;
    auto text = read_text_file(e.path(), 1u << 22);
    ASSERT_TRUE(text) << e.path();
    tests += *text;
  }
  ASSERT_FALSE(tests.empty());
  const std::set<std::string> indirect = {"pack_bf16x2"};
  const std::regex decl(R"((__device__|__host__)[^;{(]*?([A-Za-z_#][A-Za-z0-9_#]*)\s*\()");
  std::vector<std::string> uncalled;
  for (const auto& header : headers_of("sm90a")) {
    auto read = read_text_file(header, 1u << 22);
    ASSERT_TRUE(read) << header;
    const std::string& text = *read;
    for (std::sregex_iterator it(text.begin(), text.end(), decl), end; it != end; ++it) {
      const std::string name = (*it)[2];
      if (name.find('#') != std::string::npos || indirect.count(name)) continue;
      if (!std::regex_search(tests, std::regex("\\b" + name + "\\b")))
        uncalled.push_back(header.filename().string() + ": " + name);
    }
  }
  EXPECT_TRUE(uncalled.empty()) << fmt::format("wrappers no GPU test calls: {}", fmt::join(uncalled, ", "));
}

}  // namespace
}  // namespace ptxbench
