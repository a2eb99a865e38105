#include "adapt_cli.h"

#include <sstream>

#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::adapt::testing {
namespace fs = std::filesystem;

std::string kernel_source(const std::string& tag, const std::string& marker, bool wgmma) {
  return "#include <ptxbench/abi.h>\n// tag-" + tag + "- " + marker + "\n" +
         (wgmma ? "// issues wgmma.mma_async through the pack\n" : "") +
         "__global__ void k() {}\nvoid run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, "
         "cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n";
}

std::string kernel(const std::string& tag, const std::string& marker, bool wgmma) {
  return "```cuda\n" + kernel_source(tag, marker, wgmma) + "```\n";
}

std::string rationale(std::size_t sentences) {
  std::string text = "<my_reasoning>\n";
  for (std::size_t i = 0; i < sentences; ++i)
    text += "I look at what the evaluator told me and reason about which assumption in my kernel was wrong, "
            "then I change only that part and keep the rest of the design. ";
  return text + "\n</my_reasoning>\n";
}

std::string read(const fs::path& p) {
  auto t = read_text_file(p, 1u << 28);
  EXPECT_TRUE(t) << p;
  return t ? *t : std::string();
}

json read_json(const fs::path& p) { return json::parse(read(p), nullptr, false); }

std::vector<json> read_jsonl(const fs::path& p) {
  std::vector<json> rows;
  std::istringstream in(read(p));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(json::parse(line, nullptr, false));
  return rows;
}

int nonempty_lines(const std::string& s) {
  int n = 0;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) ++n;
  return n;
}

fs::path tiny_tokenizer() { return ptxbench::testing::repo_root() / "tests/fixtures/tokenizer/tiny_tokenizer.json"; }

std::optional<fs::path> cl100k_ranks() {
  for (const auto& p : {ptxbench::testing::repo_root() / "build" / "third_party" / "tiktoken" / "cl100k_base.json",
                        ptxbench::testing::bin_dir().parent_path() / "third_party" / "tiktoken" / "cl100k_base.json"})
    if (fs::is_regular_file(p)) return p;
  return std::nullopt;
}

json models_file(const std::vector<std::pair<std::string, std::string>>& models) {
  json m = json::object();
  for (const auto& [name, url] : models)
    m[name] = {{"api", "openai"}, {"model_id", name}, {"base_url", url}, {"api_key_required", false}};
  return {{"format", "ptxbench.models/1"}, {"models", m}};
}

void AdaptCli::SetUp() {
  m_bin = ptxbench::testing::bin_dir() / "ptxbench";
  if (!fs::exists(m_bin)) GTEST_SKIP() << "build the `ptxbench` target first (" << m_bin << " is missing)";
  m_dir = ptxbench::testing::make_temp_dir("adapt");
}

void AdaptCli::TearDown() {
  if (!m_dir.empty() && !::testing::Test::HasFailure()) fs::remove_all(m_dir);
}

process_result AdaptCli::cli(std::vector<std::string> args, double timeout_s) {
  process_spec spec;
  spec.argv = {m_bin.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout_s = timeout_s;
  spec.env_overrides.emplace_back("PTXBENCH_ROOT", ptxbench::testing::repo_root().string());
  spec.env_unset = {"OPENAI_API_KEY", "OPENAI_BASE_URL"};
  return run_process(spec);
}

}  // namespace ptxbench::adapt::testing
