// The tensor descriptions the harness sends the runner: IPC handle text, and a scalar input's value
// (the runner passes it to the candidate by host pointer, never reading the device buffer, which the
// harness may fill only after the runner said "prepared").
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "gpu/common/ipc_tensor.h"

namespace ptxbench::gpu {
namespace {

ipc_tensor scalar_sm_scale() {
  ipc_tensor t;
  t.name = "sm_scale";
  for (std::size_t i = 0; i < sizeof t.handle; ++i) reinterpret_cast<unsigned char*>(&t.handle)[i] = static_cast<unsigned char>(i * 7);
  t.offset = 256;
  t.bytes = 4;
  t.type = dtype::float32;
  const float value = 0.08838834764831843F;
  t.value.resize(4);
  std::memcpy(t.value.data(), &value, 4);
  return t;
}

TEST(IpcTensor, AScalarsValueTravelsWithItsDescription) {
  const ipc_tensor t = scalar_sm_scale();
  const ordered_json j = to_json(t);
  ASSERT_TRUE(j.contains("value"));
  EXPECT_EQ(j["value"].get<std::string>().size(), 8U);
  auto back = ipc_tensor_from_json(j);
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->value, t.value);
  float value = 0;
  std::memcpy(&value, back->value.data(), 4);
  EXPECT_FLOAT_EQ(value, 0.08838834764831843F);
  EXPECT_EQ(std::memcmp(&back->handle, &t.handle, sizeof t.handle), 0);
  EXPECT_EQ(back->offset, 256U);
}

TEST(IpcTensor, ATensorHasNoValue) {
  ipc_tensor t = scalar_sm_scale();
  t.name = "q";
  t.value.clear();
  t.shape = {15, 24, 128};
  t.bytes = 15 * 24 * 128 * 2;
  t.type = dtype::bfloat16;
  const ordered_json j = to_json(t);
  EXPECT_FALSE(j.contains("value"));
  auto back = ipc_tensor_from_json(j);
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_TRUE(back->value.empty());
  EXPECT_EQ(back->shape, t.shape);
}

TEST(IpcTensor, MalformedValuesAreRefusedNamingTheTensor) {
  const ordered_json good = to_json(scalar_sm_scale());
  auto with = [&](const std::function<void(ordered_json&)>& edit) {
    ordered_json j = good;
    edit(j);
    auto r = ipc_tensor_from_json(j);
    return r.ok() ? std::string() : r.err().message;
  };
  EXPECT_NE(with([](ordered_json& j) { j["value"] = "abc"; }).find("odd length"), std::string::npos);
  EXPECT_NE(with([](ordered_json& j) { j["value"] = "zz00ff00"; }).find("not a hex digit"), std::string::npos);
  EXPECT_NE(with([](ordered_json& j) { j["value"] = "00112233445566778899"; }).find("sm_scale"), std::string::npos);
  EXPECT_NE(with([](ordered_json& j) { j["value"] = "0011"; }).find("its size"), std::string::npos);  // bytes is 4
  EXPECT_NE(with([](ordered_json& j) { j["output"] = true; }).find("only for a scalar input"), std::string::npos);
  EXPECT_NE(with([](ordered_json& j) { j["shape"] = {1}; }).find("only for a scalar input"), std::string::npos);
  EXPECT_NE(with([](ordered_json& j) { j["value"] = ""; }).find("only for a scalar input"), std::string::npos);
  EXPECT_NE(with([](ordered_json& j) { j["value"] = 5; }).find("malformed tensor message"), std::string::npos);
}

TEST(IpcTensor, HexRoundTripsAndHandlesKeepTheirLength) {
  const unsigned char bytes[] = {0x00, 0x7f, 0x80, 0xff};
  EXPECT_EQ(bytes_hex(bytes, 4), "007f80ff");
  auto back = bytes_from_hex("007f80ff");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, std::vector<unsigned char>(bytes, bytes + 4));
  EXPECT_FALSE(bytes_from_hex("007F").ok());  // lower case only, as written
  EXPECT_FALSE(handle_from_hex("00").ok());
  const ipc_tensor t = scalar_sm_scale();
  auto h = handle_from_hex(handle_hex(t.handle));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(std::memcmp(&*h, &t.handle, sizeof t.handle), 0);
}

}  // namespace
}  // namespace ptxbench::gpu
