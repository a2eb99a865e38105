#include <gtest/gtest.h>

#include "core/sha256.h"

namespace ptxbench {
namespace {

TEST(Sha256, KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, PartsAreLengthPrefixed) {
  sha256_builder a, b;
  a.update("ab").update("c");
  b.update("a").update("bc");
  EXPECT_NE(a.hex_digest(), b.hex_digest());
}

}  // namespace
}  // namespace ptxbench
