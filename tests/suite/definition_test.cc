#include <gtest/gtest.h>

#include "suite/definition.h"
#include "suite/workload.h"

namespace ptxbench {
namespace {

ordered_json gemm_definition() {
  return ordered_json::parse(R"({
    "name": "gemm_test", "op_type": "gemm", "description": "C = A @ B.T", "tags": ["status:test"],
    "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 64}, "K": {"type": "const", "value": 32}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"}, "B": {"shape": ["N", "K"], "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "bfloat16"}},
    "reference": "import torch\ndef run(A, B):\n    return A @ B.T\n"})");
}

TEST(Definition, RoundTripKeepsEveryField) {
  auto d = definition_from_json(gemm_definition());
  ASSERT_TRUE(d.ok()) << d.err().message;
  EXPECT_EQ(d->axes.size(), 3u);
  EXPECT_TRUE(d->axes[1].is_const);
  EXPECT_EQ(d->axes[1].value, 64);
  auto again = definition_from_json(to_json(*d));
  ASSERT_TRUE(again.ok()) << again.err().message;
  EXPECT_EQ(to_json(*again), to_json(*d));
  EXPECT_EQ(to_json(*d)["inputs"]["B"]["shape"], ordered_json::parse(R"(["N","K"])"));
}

TEST(Definition, UndeclaredAxisNamesThePath) {
  auto j = gemm_definition();
  j["inputs"]["A"]["shape"][1] = "X";
  auto d = definition_from_json(j);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.err().message, "definition.inputs.A.shape[1]: axis \"X\" is not declared in axes");
}

TEST(Definition, WrongTypesAreNamed) {
  auto j = gemm_definition();
  j["axes"]["N"]["value"] = "64";
  auto d = definition_from_json(j);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.err().message, "definition.axes.N.value: expected integer, got string");
}

TEST(Definition, UnknownDtypeAndFieldAreRejected) {
  auto j = gemm_definition();
  j["outputs"]["C"]["dtype"] = "bf16";
  auto d = definition_from_json(j);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.err().message.find("definition.outputs.C.dtype: unknown dtype \"bf16\""), std::string::npos);
  j = gemm_definition();
  j["shapes"] = 1;
  d = definition_from_json(j);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.err().message.find("definition.shapes: unknown field"), std::string::npos);
}

TEST(Definition, OutputNameMayNotShadowInput) {
  auto j = gemm_definition();
  j["outputs"]["A"] = j["outputs"]["C"];
  auto d = definition_from_json(j);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.err().message.find("definition.outputs.A: an output may not share a name"), std::string::npos);
}

TEST(Definition, ReferenceMustDefineRun) {
  auto j = gemm_definition();
  j["reference"] = "import torch\n";
  auto d = definition_from_json(j);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.err().message.find("definition.reference"), std::string::npos);
}

TEST(Workload, RoundTripAndValidation) {
  auto d = definition_from_json(gemm_definition());
  ASSERT_TRUE(d.ok());
  auto w = workload_from_json(ordered_json::parse(
      R"({"uuid": "u1", "axes": {"M": 128}, "inputs": {"A": {"type": "random"}, "B": {"type": "derived", "generator": "x.y"}}})"));
  ASSERT_TRUE(w.ok()) << w.err().message;
  EXPECT_TRUE(validate_workload(*w, *d).ok());
  auto again = workload_from_json(to_json(*w));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(to_json(*again), to_json(*w));
  auto axes = resolve_axes(*w, *d);
  EXPECT_EQ(concrete_shape(d->outputs[0], axes), (std::vector<int64_t>{128, 64}));
}

TEST(Workload, MissingVarAxisAndUnknownInputAreReported) {
  auto d = definition_from_json(gemm_definition());
  auto w = workload_from_json(ordered_json::parse(R"({"uuid": "u1", "axes": {}, "inputs": {"Z": {"type": "random"}}})"));
  ASSERT_TRUE(w.ok());
  auto st = validate_workload(*w, *d);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.err().message.find("workload.axes.M: missing value for var axis"), std::string::npos);
  EXPECT_NE(st.err().message.find("and 1 more"), std::string::npos);
}

TEST(Workload, ConstAxisMustAgree) {
  auto d = definition_from_json(gemm_definition());
  auto w = workload_from_json(ordered_json::parse(R"({"uuid": "u1", "axes": {"M": 4, "N": 65}})"));
  ASSERT_TRUE(w.ok());
  auto st = validate_workload(*w, *d);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.err().message, "workload.axes.N: axis is const 64 in the definition, got 65");
}

TEST(Workload, UnknownInputTypeIsRejected) {
  auto w = workload_from_json(ordered_json::parse(R"({"uuid": "u", "axes": {}, "inputs": {"A": {"type": "zeros"}}})"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.err().message.find("workload.inputs.A.type: expected \"random\""), std::string::npos);
}

}  // namespace
}  // namespace ptxbench
