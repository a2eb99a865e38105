// Scalar inputs as the harness stores them (the GQA tasks' sm_scale): the value's bytes in the
// input's dtype, and a clear error for a value that does not fit or a dtype the harness cannot hold.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/harness/scalar_input.h"

namespace ptxbench::gpu {
namespace {

tensor_spec scalar(const char* name, dtype type) { return tensor_spec{name, std::nullopt, type, ""}; }

TEST(ScalarInput, Float32IsTheValueRoundedToFloat) {
  auto b = scalar_bytes(scalar("sm_scale", dtype::float32), ordered_json(0.08838834764831843));
  ASSERT_TRUE(b.ok()) << b.err().message;
  ASSERT_EQ(b->size(), 4U);
  float v = 0;
  std::memcpy(&v, b->data(), 4);
  EXPECT_EQ(v, 0.08838834764831843F);
  auto from_int = scalar_bytes(scalar("s", dtype::float32), ordered_json(2));
  ASSERT_TRUE(from_int.ok());
  std::memcpy(&v, from_int->data(), 4);
  EXPECT_EQ(v, 2.0F);
}

TEST(ScalarInput, IntegersAndBooleans) {
  auto i32 = scalar_bytes(scalar("n", dtype::int32), ordered_json(-7));
  ASSERT_TRUE(i32.ok());
  int32_t v = 0;
  std::memcpy(&v, i32->data(), 4);
  EXPECT_EQ(v, -7);
  auto i64 = scalar_bytes(scalar("n", dtype::int64), ordered_json(int64_t{1} << 40));
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(i64->size(), 8U);
  auto flag = scalar_bytes(scalar("f", dtype::boolean), ordered_json(true));
  ASSERT_TRUE(flag.ok());
  EXPECT_EQ((*flag)[0], 1);
}

TEST(ScalarInput, ValuesThatDoNotFitAreNamed) {
  auto big = scalar_bytes(scalar("n", dtype::int32), ordered_json(int64_t{1} << 40));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.err().message.find("input n: the workload's value 1099511627776 does not fit a int32 scalar"),
            std::string::npos)
      << big.err().message;
  EXPECT_FALSE(scalar_bytes(scalar("n", dtype::int32), ordered_json(1.5)).ok());
  EXPECT_FALSE(scalar_bytes(scalar("f", dtype::boolean), ordered_json(1)).ok());
  auto half = scalar_bytes(scalar("h", dtype::bfloat16), ordered_json(1.0));
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.err().message.find("dtype bfloat16 are not supported"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::gpu
