#pragma once
// What the adaptation tests share: build/bin/ptxbench as a black box (the fake evaluator and the
// scripted model servers of tests/agent/fake_llm_server.h), kernels the fake evaluator judges by
// their markers, rationales of a chosen length, and readers for the files the stages write.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.h"

namespace ptxbench::adapt::testing {

using json = nlohmann::json;

/// A reply holding a kernel the fake evaluator judges by `marker`; `tag` makes each one distinct (and
/// lets the teachers' rules recognise the row in their prompts). The reply ends with its fence.
std::string kernel(const std::string& tag, const std::string& marker, bool wgmma = false);
/// The kernel source alone (what the reply above fences).
std::string kernel_source(const std::string& tag, const std::string& marker, bool wgmma = false);

/// A <my_reasoning> block of `sentences` sentences of 189 characters each (plus the tags).
std::string rationale(std::size_t sentences);

std::string read(const std::filesystem::path& p);
json read_json(const std::filesystem::path& p);
std::vector<json> read_jsonl(const std::filesystem::path& p);
int nonempty_lines(const std::string& s);

/// tests/fixtures/tokenizer/tiny_tokenizer.json: a byte-level BPE of a few hundred tokens.
std::filesystem::path tiny_tokenizer();

/// The cl100k ranks scripts/setup.sh fetches (the export's labelled fallback), when present.
std::optional<std::filesystem::path> cl100k_ranks();

/// A models file naming scripted servers (name -> base URL) as OpenAI-compatible models.
json models_file(const std::vector<std::pair<std::string, std::string>>& models);

class AdaptCli : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  /// Runs build/bin/ptxbench with args (PTXBENCH_ROOT set, no OpenAI variables).
  process_result cli(std::vector<std::string> args, double timeout_s = 300);

  std::filesystem::path m_bin, m_dir;
};

}  // namespace ptxbench::adapt::testing
