// The TVM-FFI compatibility headers, end to end without a GPU: probe_kernel.cu (written like an
// upstream PTXBench kernel) is built by the real build stage with the include folders the tvm-ffi
// binding adds, loaded, and its ptxbench_entry_<name> symbols are called with fake ptxbench_tensor
// arguments holding host pointers. The probe launches nothing, so no device is needed; what its
// functions saw comes back through probe_last().
#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "build/binding_includes.h"
#include "build/build_stage.h"
#include "core/file_io.h"
#include "ptxbench/abi.h"
#include "test_support.h"
#include "tvm_ffi/probe_record.h"

namespace ptxbench {
namespace {
namespace fs = std::filesystem;

constexpr int32_t k_device = 1;  // not 0, so a device id that is merely defaulted would show

ptxbench_tensor tensor(void* data, ptxbench_dtype dtype, std::vector<int64_t> shape) {
  ptxbench_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.sizes[i] = shape[i];
    t.strides[i] = stride;
    stride *= shape[i];
  }
  t.device = k_device;
  return t;
}

ptxbench_tensor scalar(void* value, ptxbench_dtype dtype) { return tensor(value, dtype, {}); }

cudaStream_t fake_stream() { return reinterpret_cast<cudaStream_t>(0x5eed); }

class TvmFfiBridge : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto tc = build::find_toolchain(PTXBENCH_CUDA_ROOT_FOR_TESTS);
    if (!tc) {
      s_skip = "needs nvcc: " + tc.err().message;
      return;
    }
    // One build cache for every run of this binary (ctest runs each test in its own process): the
    // build stage is content-addressed and safe to share, so the probe compiles once per change.
    s_cache = PTXBENCH_TVM_FFI_PROBE_CACHE;
    build::build_request req;
    for (const char* name : {"probe_kernel.cu", "probe_record.h"}) {
      auto text = read_text_file(testing::fixtures_dir() / "tvm_ffi" / name, 1u << 20);
      ASSERT_TRUE(text.ok()) << text.err().message;
      req.sources.push_back({name, *text});
    }
    req.gencode = "arch=compute_90a,code=sm_90a";
    req.include_dirs = {testing::repo_root() / "include"};
    for (auto& d : build::binding_include_dirs(kernel_binding::tvm_ffi, testing::repo_root())) req.include_dirs.push_back(d);
    req.cache_dir = s_cache;
    auto built = build::build_candidate(req, *tc);
    ASSERT_TRUE(built.ok()) << built.err().message;
    ASSERT_EQ(built->outcome, build::build_outcome::built) << built->log.text;
    s_build_log = built->log.text;
    // The candidate needs libcudart (it calls nothing in it); load the toolkit's first in case the
    // loader's search path does not have it.
    for (const char* lib : {"lib64/libcudart.so", "lib/libcudart.so"})
      if (dlopen((tc->cuda_root / lib).c_str(), RTLD_NOW | RTLD_GLOBAL)) break;
    s_lib = dlopen(built->shared_object.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(s_lib, nullptr) << dlerror();
  }
  void SetUp() override {
    if (!s_skip.empty()) GTEST_SKIP() << s_skip;
    ASSERT_NE(s_lib, nullptr) << "the probe kernel did not build or load";
    *record() = probe_record{};
  }

  static ptxbench_entry_fn entry(const std::string& name) {
    return reinterpret_cast<ptxbench_entry_fn>(dlsym(s_lib, ("ptxbench_entry_" + name).c_str()));
  }
  static probe_record* record() {
    return reinterpret_cast<probe_record* (*)()>(dlsym(s_lib, "probe_last"))();
  }
  static void* stream_now() { return reinterpret_cast<void* (*)()>(dlsym(s_lib, "probe_stream_now"))(); }
  static std::string call(const std::string& name, std::vector<ptxbench_tensor> args) {
    auto fn = entry(name);
    if (!fn) return "<no entry>";
    const char* err = nullptr;
    int32_t kind = fn(args.data(), static_cast<int32_t>(args.size()), fake_stream(), &err);
    if ((kind == PTXBENCH_OK) != (err == nullptr)) return "<error kind and message disagree>";
    return err ? err : "";
  }

  // The run(x, scale, shift, y) arguments of a good call.
  float x[8] = {}, y[8] = {};
  float scale = 2.5f;
  int32_t shift = -3;
  std::vector<ptxbench_tensor> run_args() {
    return {tensor(x, PTXBENCH_FLOAT32, {8}), scalar(&scale, PTXBENCH_FLOAT32), scalar(&shift, PTXBENCH_INT32),
            tensor(y, PTXBENCH_FLOAT32, {8})};
  }

  static inline std::string s_skip, s_build_log;
  static inline fs::path s_cache;
  static inline void* s_lib = nullptr;
};

TEST_F(TvmFfiBridge, ExportsPtxbenchEntryPointsAndNothingOfTvmFfi) {
  for (const char* name : {"run", "pair", "kinds", "nothing"}) {
    EXPECT_NE(entry(name), nullptr) << name;
    // The signature record: no declared dtypes (upstream's export carries none).
    auto sig = static_cast<const ptxbench_signature*>(dlsym(s_lib, (std::string("ptxbench_signature_") + name).c_str()));
    ASSERT_NE(sig, nullptr) << name;
    EXPECT_EQ(sig->magic, PTXBENCH_SIGNATURE_MAGIC);
    for (int32_t i = 0; i < sig->count; ++i) EXPECT_EQ(sig->dtypes[i], -1) << name;
    auto version = reinterpret_cast<int32_t (*)()>(dlsym(s_lib, (std::string("ptxbench_abi_version_") + name).c_str()));
    ASSERT_NE(version, nullptr) << name;
    EXPECT_EQ(version(), PTXBENCH_ABI_VERSION);
  }
  EXPECT_EQ(dlsym(s_lib, "__tvm_ffi_run"), nullptr);
  // The stream lookup stays inside the candidate (hidden), so it cannot interpose on anything.
  EXPECT_EQ(dlsym(s_lib, "TVMFFIEnvGetStream"), nullptr);
}

TEST_F(TvmFfiBridge, TensorsBecomeTensorViewsAndScalarsPlainValues) {
  EXPECT_EQ(call("run", run_args()), "");
  const probe_record& r = *record();
  EXPECT_EQ(r.calls, 1);
  EXPECT_FLOAT_EQ(r.scale, 2.5f);
  EXPECT_EQ(r.shift, -3);
  for (int i = 0; i < 2; ++i) {
    const probe_tensor& t = r.tensors[i];
    EXPECT_EQ(t.data, i == 0 ? static_cast<void*>(x) : static_cast<void*>(y));
    EXPECT_EQ(t.ndim, 1);
    EXPECT_EQ(t.size0, 8);
    EXPECT_EQ(t.last_size, 8);
    EXPECT_EQ(t.stride0, 1);
    EXPECT_EQ(t.numel, 8);
    EXPECT_EQ(t.dtype_code, 2);  // kDLFloat
    EXPECT_EQ(t.dtype_bits, 32);
    EXPECT_EQ(t.dtype_lanes, 1);
    EXPECT_EQ(t.device_type, 2);  // kDLCUDA
    EXPECT_EQ(t.device_id, k_device);
    EXPECT_EQ(t.contiguous, 1);
  }
}

TEST_F(TvmFfiBridge, TheHarnessStreamIsTheEnvironmentStreamDuringTheCallOnly) {
  EXPECT_EQ(call("run", run_args()), "");
  EXPECT_EQ(record()->stream, reinterpret_cast<void*>(fake_stream()));
  EXPECT_EQ(record()->stream_other, nullptr) << "another device has no registered stream";
  EXPECT_EQ(record()->stream_cpu, nullptr);
  EXPECT_EQ(stream_now(), nullptr) << "the registration ends with the call";
}

TEST_F(TvmFfiBridge, WrongArgumentCountIsReportedLikePtxbenchExport) {
  auto args = run_args();
  args.pop_back();
  EXPECT_EQ(call("run", args), "run expects 4 tensors (inputs then outputs), got 3");
  auto fn = entry("run");
  ASSERT_NE(fn, nullptr);
  const char* err = nullptr;
  EXPECT_EQ(fn(nullptr, 0, fake_stream(), &err), PTXBENCH_ERROR_ARGUMENT_COUNT);
  ASSERT_NE(err, nullptr);
  EXPECT_STREQ(err, "run expects 4 tensors (inputs then outputs), got 0");
  EXPECT_EQ(record()->calls, 0) << "the function must not run on a count mismatch";
}

TEST_F(TvmFfiBridge, ThrownTvmErrorIsReportedWithKindMessageAndPlace) {
  scale = -1.f;
  std::string err = call("run", run_args());
  EXPECT_EQ(err.rfind("run threw: ValueError: negative scale -1 (probe_kernel.cu:", 0), 0u) << err;
  EXPECT_EQ(stream_now(), nullptr) << "the registration ends also when the kernel throws";
}

TEST_F(TvmFfiBridge, FailedChecksNameTheConditionAndTheValues) {
  float x2[4] = {};
  auto args = run_args();
  args[0] = tensor(x2, PTXBENCH_FLOAT32, {2, 2});
  std::string err = call("run", args);
  EXPECT_NE(err.find("run threw: InternalError: Check failed: (x.ndim() == 1) is false: x must be 1-D"),
            std::string::npos) << err;

  args = run_args();
  args[3].dtype = PTXBENCH_BFLOAT16;  // dtypes are the kernel's own to check, here with ICHECK_EQ
  err = call("run", args);
  EXPECT_NE(err.find("Check failed: y.dtype() == f32 (bfloat16 vs. float32) : y must be float32"), std::string::npos)
      << err;
  EXPECT_EQ(record()->tensors[1].dtype_code, 4);  // kDLBfloat
  EXPECT_EQ(record()->tensors[1].dtype_bits, 16);
}

TEST_F(TvmFfiBridge, ScalarParametersAreChecked) {
  auto args = run_args();
  args[1] = tensor(x, PTXBENCH_FLOAT32, {8});
  EXPECT_EQ(call("run", args),
            "run threw: argument 1: the function takes a floating-point value but the task passes a 1-d float32 "
            "tensor here; declare it tvm::ffi::TensorView");
  float not_an_int = 1.5f;
  args = run_args();
  args[2] = scalar(&not_an_int, PTXBENCH_FLOAT32);
  EXPECT_EQ(call("run", args),
            "run threw: argument 2: the function takes an integer value but the task passes a float32 scalar");
  EXPECT_EQ(record()->calls, 0);

  int32_t four = 4;  // an integer scalar for a float parameter converts, as TVM-FFI converts a Python int
  args = run_args();
  args[1] = scalar(&four, PTXBENCH_INT32);
  EXPECT_EQ(call("run", args), "");
  EXPECT_FLOAT_EQ(record()->scale, 4.f);
}

TEST_F(TvmFfiBridge, OtherScalarKinds) {
  uint8_t flag = 1;
  int64_t count = int64_t{1} << 40;
  float ratio = 0.25f;
  int16_t t[6] = {};
  EXPECT_EQ(call("kinds", {tensor(t, PTXBENCH_INT16, {2, 3}), scalar(&flag, PTXBENCH_BOOL),
                           scalar(&count, PTXBENCH_INT64), scalar(&ratio, PTXBENCH_FLOAT32)}),
            "");
  const probe_record& r = *record();
  EXPECT_TRUE(r.flag);
  EXPECT_EQ(r.count, int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(r.ratio, 0.25);
  EXPECT_EQ(r.tensors[0].dtype_code, 0);  // kDLInt
  EXPECT_EQ(r.tensors[0].dtype_bits, 16);
  EXPECT_EQ(r.tensors[0].size0, 2);
  EXPECT_EQ(r.tensors[0].last_size, 3);
  EXPECT_EQ(r.tensors[0].stride0, 3);
  EXPECT_EQ(r.tensors[0].numel, 6);
}

TEST_F(TvmFfiBridge, StridesComeThroughAndAMissingDimensionIsAnIndexError) {
  uint16_t a[6] = {}, b[6] = {};
  auto ta = tensor(a, PTXBENCH_BFLOAT16, {2, 3});
  auto tb = tensor(b, PTXBENCH_BFLOAT16, {3, 2});
  tb.strides[0] = 1;  // a transposed view: not contiguous
  tb.strides[1] = 3;
  std::string err = call("pair", {ta, tb});
  EXPECT_EQ(err, "pair threw: IndexError: index 2 out of bounds for a tensor with 2 dimensions");
  const probe_record& r = *record();
  EXPECT_EQ(r.tensors[0].contiguous, 1);
  EXPECT_EQ(r.tensors[1].contiguous, 0);
  EXPECT_EQ(r.tensors[1].stride0, 1);
  EXPECT_EQ(r.tensors[1].last_size, 2);
}

TEST_F(TvmFfiBridge, AFunctionWithoutArgumentsGetsTheStreamForAnyCudaDevice) {
  auto fn = entry("nothing");
  ASSERT_NE(fn, nullptr);
  ptxbench_tensor none[1] = {};
  const char* err = nullptr;
  EXPECT_EQ(fn(none, 0, fake_stream(), &err), PTXBENCH_OK);
  EXPECT_EQ(err, nullptr);
  EXPECT_EQ(record()->calls, 1);
  EXPECT_EQ(record()->stream, reinterpret_cast<void*>(fake_stream()));
  EXPECT_EQ(record()->stream_cpu, nullptr);
  EXPECT_EQ(fn(none, 1, fake_stream(), &err), PTXBENCH_ERROR_ARGUMENT_COUNT);
  EXPECT_STREQ(err, "nothing expects 0 tensors (inputs then outputs), got 1");
  // PTXBENCH_EXPORT's rule, kept: no argument array at all is refused, whatever the count.
  EXPECT_EQ(fn(nullptr, 0, fake_stream(), &err), PTXBENCH_ERROR_ARGUMENT_COUNT);
  EXPECT_STREQ(err, "nothing expects 0 tensors (inputs then outputs), got 0");
}

}  // namespace
}  // namespace ptxbench
