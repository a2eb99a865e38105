// The gates against the measurement machinery (build/measurement_rules.h): every name in code or in
// the built object's undefined symbols is rejected; the same words in comments and in ordinary
// strings are not (the source gate's policy), except a string that is exactly a banned function
// name (a lookup by name) or a /proc path to the process's maps.
#include <gtest/gtest.h>

#include "build/link_gate.h"
#include "build/measurement_rules.h"
#include "build/source_gate.h"
#include "core/file_io.h"
#include "core/process.h"
#include "test_support.h"

namespace ptxbench::build {
namespace {

std::vector<gate_finding> measurement_gate(const std::string& code) { return check_sources({{"kernel.cu", code}}); }

int measurement_findings(const std::vector<gate_finding>& f) {
  int n = 0;
  for (const auto& x : f) n += x.rule == "measurement-machinery";
  return n;
}

TEST(MeasurementGate, EachNameInCodeIsRejected) {
  for (const char* code : {
           // CUPTI, declared by hand (an extern "C" declaration passed both gates before)
           "extern \"C\" int cuptiActivityDisable(int);\nvoid f() { cuptiActivityDisable(10); }",
           "void f() { int k = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL; (void)k; }",
           "struct CUpti_ActivityKernel9;",
           // the CUDA profiler API
           "extern \"C\" int cudaProfilerStop();\nvoid f() { cudaProfilerStop(); }",
           "extern \"C\" int cuProfilerStart();\nvoid f() { cuProfilerStart(); }",
           // NVTX
           "extern \"C\" int nvtxRangePushA(const char*);\nvoid f() { nvtxRangePushA(0); }",
           "void f() { nvToolsExtInit(); }",
           // driver export tables
           "extern \"C\" int cuGetExportTable(const void**, const void*);",
           // the runner's own code
           "namespace ptxbench::gpu { struct activity_tracer; }",
           "struct X { ptxbench :: gpu :: other* p; };",
           "extern \"C\" void runner_client();",
           "namespace ptxbench { class sync_channel; }",
           "struct launch_counter* c;",
           // walking the loaded images
           "extern \"C\" int dl_iterate_phdr(void*, void*);\nvoid f() { dl_iterate_phdr(0, 0); }",
           "extern \"C\" unsigned long getauxval(unsigned long);\nvoid f() { getauxval(3); }",
           "extern \"C\" struct r_debug _r_debug;\nvoid* f() { return &_r_debug; }",
           "struct link_map* m;",
           "extern \"C\" int dladdr(const void*, void*);",
           "extern char __ehdr_start;",
       }) {
    auto f = measurement_gate(code);
    EXPECT_GE(measurement_findings(f), 1) << code;
    if (!f.empty()) {
      EXPECT_NE(f.front().message.find("measurement machinery"), std::string::npos) << code;
    }
  }
}

TEST(MeasurementGate, HeadersAreRejected) {
  for (const char* inc : {"#include <cupti.h>", "#include <cupti_activity.h>", "#include \"cuda_profiler_api.h\"",
                          "#include <cudaProfiler.h>", "#include <nvtx3/nvToolsExt.h>", "#include <nvToolsExt.h>",
                          "#include <link.h>", "#include <sys/auxv.h>", "#include <elf.h>"}) {
    auto f = measurement_gate(std::string(inc) + "\n");
    ASSERT_EQ(measurement_findings(f), 1) << inc;
    EXPECT_EQ(f.front().line, 1);
  }
}

TEST(MeasurementGate, WordsInCommentsAndProseStringsAreFine) {
  EXPECT_TRUE(measurement_gate("// this kernel does not call CUPTI, cuptiActivityDisable, nvtxRangePush or dl_iterate_phdr\n"
                   "/* cudaProfilerStop link_map _r_debug activity_tracer <cupti.h> */\n"
                   "const char* note = \"timed by CUPTI; no cuptiActivityDisable here\";\n"
                   "int x = 1;\n")
                  .empty());
  // The kernel ABI's own namespace is the candidate's to use.
  EXPECT_TRUE(measurement_gate("void run(ptxbench::tensor_view a) { throw ptxbench::abi_error(\"x\"); }").empty());
}

TEST(MeasurementGate, PrefixesAreWholeIdentifierPrefixesOnly) {
  // "my_cupti_like" does not start with cupti; "nvtx_" does (NVTX's own names all start so).
  EXPECT_EQ(measurement_findings(measurement_gate("int my_cupti_like = 0;")), 0);
  EXPECT_EQ(measurement_findings(measurement_gate("int cupti_like = 0;")), 1);
}

TEST(MeasurementGate, LookupByNameAndProcPathsInStrings) {
  // cudaGetDriverEntryPoint / cuGetProcAddress / an asm label take the name as a string.
  auto a = measurement_gate("void f(void** p) { cudaGetDriverEntryPoint(\"cuProfilerStop\", p, 0, 0); }");
  ASSERT_EQ(measurement_findings(a), 1);
  EXPECT_NE(a.front().message.find("names \"cuProfilerStop\" in a string"), std::string::npos) << a.front().message;
  EXPECT_EQ(measurement_findings(measurement_gate("extern \"C\" int off(int) __asm__(\"cuptiActivityDisable\");")), 1);
  EXPECT_EQ(measurement_findings(measurement_gate("const char* s = R\"(cuptiActivityEnable)\";")), 1);
  // ... while the legitimate lookup of the tensor-map encoder passes.
  EXPECT_TRUE(measurement_gate("void f(void** p) { cudaGetDriverEntryPoint(\"cuTensorMapEncodeTiled\", p, 0, 0); }").empty());
  for (const char* path : {"FILE* f = fopen(\"/proc/self/maps\", \"r\");", "int fd = open(\"/proc/self/mem\", 0);",
                           "const char* p = \"/proc/\";", "const char* q = \"self/maps\";",
                           "auto e = \"/proc/self/exe\";"})
    EXPECT_EQ(measurement_findings(measurement_gate(path)), 1) << path;
  EXPECT_TRUE(measurement_gate("const char* s = \"/proc/self/status\";").empty());
}

// --- the link gate: what the built object shows ---

std::filesystem::path build_measurement_so(const std::string& code) {
  auto dir = testing::make_temp_dir("elf-measure");
  EXPECT_TRUE(write_file_atomic(dir / "x.cc", code).ok());
  auto r = run_process({.argv = {"g++", "-shared", "-fPIC", "-o", (dir / "x.so").string(), (dir / "x.cc").string()},
                        .timeout_s = 60,
                        .merge_stderr = true});
  EXPECT_TRUE(r.succeeded()) << r.out;
  return dir / "x.so";
}

TEST(MeasurementLinkGate, UndefinedMeasurementSymbolsAreRejected) {
  // Names built by the preprocessor escape the source gate; the object still shows them.
  auto so = build_measurement_so(
      "#define CAT(a, b) a##b\n"
      "extern \"C\" int CAT(cupt, iActivityDisable)(int);\n"
      "extern \"C\" int CAT(cuProfiler, Stop)();\n"
      "extern \"C\" int CAT(dl_iterate, _phdr)(void*, void*);\n"
      "namespace ptxbench { namespace gpu { struct CAT(activity, _tracer) { static unsigned long now(); }; } }\n"
      "extern \"C\" long f() { return cuptiActivityDisable(1) + cuProfilerStop() + dl_iterate_phdr(0, 0) +\n"
      "                        (long)ptxbench::gpu::activity_tracer::now(); }\n");
  auto f = check_linkage_of(so);
  ASSERT_TRUE(f.ok()) << f.err().message;
  std::string all;
  for (const auto& x : *f) {
    EXPECT_EQ(x.rule, "measurement-machinery");
    all += x.message + "\n";
  }
  EXPECT_EQ(f->size(), 4u) << all;
  EXPECT_NE(all.find("cuptiActivityDisable (undefined symbol: CUPTI)"), std::string::npos) << all;
  EXPECT_NE(all.find("cuProfilerStop (undefined symbol: the CUDA profiler API)"), std::string::npos) << all;
  EXPECT_NE(all.find("dl_iterate_phdr (undefined symbol: walking the loaded ELF images)"), std::string::npos) << all;
  EXPECT_NE(all.find("_ZN8ptxbench3gpu15activity_tracer3nowEv (undefined symbol: the runner's own code)"),
            std::string::npos)
      << all;
}

TEST(MeasurementLinkGate, SymbolRules) {
  EXPECT_TRUE(measurement_symbol("cuptiActivityFlushAll").has_value());
  EXPECT_TRUE(measurement_symbol("nvtxRangePushA@NVTX_1").has_value());
  EXPECT_TRUE(measurement_symbol("getauxval").has_value());
  EXPECT_TRUE(measurement_symbol("ptxbench_entry_other").has_value());
  EXPECT_TRUE(measurement_symbol("_ZNK8ptxbench3gpu15activity_tracer3nowEv").has_value());
  EXPECT_FALSE(measurement_symbol("cudaGetDriverEntryPointByVersion").has_value());
  EXPECT_FALSE(measurement_symbol("__cudaLaunchKernel").has_value());
  EXPECT_FALSE(measurement_symbol("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc").has_value());
  EXPECT_FALSE(measurement_symbol("memcpy").has_value());
}

}  // namespace
}  // namespace ptxbench::build
