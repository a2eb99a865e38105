#pragma once
// Reads a fixture under tests/fixtures/ as text; a missing fixture fails the test with its path.

#include <gtest/gtest.h>

#include <string>

#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::testing {

inline std::string fixture_text(const std::string& relative_path) {
  auto text = read_text_file(fixtures_dir() / relative_path, 8u << 20);
  if (!text.ok()) {
    ADD_FAILURE() << text.err().message;
    return "";
  }
  return std::move(text).value();
}

}  // namespace ptxbench::testing
