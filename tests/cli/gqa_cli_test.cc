// The GQA tasks through the command line, without a GPU: `tasks show` states their index inputs and
// scalar, `prompt` renders them for every variant of the gqa family, and each example kernel passes
// the CPU stages (source gate, one nvcc build, link gate with the task's tensor count and dtypes,
// int32 index inputs and the fp32 scalar included) — and fails the link gate against a task whose
// signature it does not have; `run --tasks all` plans them; a suite whose GQA workload is bad (an
// indptr that does not increase, a page index outside the pool) is refused with one clear line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "cli/cli_test_support.h"
#include "core/json_check.h"
#include "test_support.h"

namespace ptxbench {
namespace {
using testing::one_line;
using testing::run_cli;

constexpr const char* k_decode = "gqa_paged_decode_h24_kv8_d128_ps1";
constexpr const char* k_paged_prefill = "gqa_paged_prefill_causal_h24_kv8_d128_ps1";
constexpr const char* k_ragged = "gqa_ragged_prefill_causal_h32_kv4_d128";

using testing::have_nvcc;

std::string example(const std::string& name) { return (ptxbench::testing::repo_root() / "examples/gqa" / name).string(); }

ordered_json gqa_check_json(const std::string& file, const std::string& task) {
  auto r = run_cli({"check", example(file), "--task", task, "--target", "h200", "--json"});
  EXPECT_TRUE(r.started);
  auto j = parse_json(r.out, file);
  EXPECT_TRUE(j.ok()) << r.out << r.err;
  return j.ok() ? *j : ordered_json();
}

TEST(GqaCli, TasksShowStatesIndexInputsAndTheScalar) {
  auto r = run_cli({"tasks", "show", k_decode});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = ordered_json::parse(r.out);
  EXPECT_EQ(j["workload"]["axes"]["num_kv_indices"], 9625);
  EXPECT_EQ(j["workload"]["shapes"]["kv_indptr"], ordered_json::parse("[16]"));
  EXPECT_EQ(j["inputs"]["kv_indices"]["dtype"], "int32");
  EXPECT_EQ(j["inputs"]["sm_scale"]["shape"], nullptr);
}

TEST(GqaCli, PromptsRenderForEveryGqaTask) {
  for (const char* task : {k_decode, k_paged_prefill, k_ragged}) {
    auto r = run_cli({"prompt", task, "--variant", "base"});
    ASSERT_EQ(r.exit_code, 0) << task << ": " << r.err;
    EXPECT_NE(r.out.find(task), std::string::npos) << task;
    EXPECT_NE(r.out.find("kv_indptr"), std::string::npos) << task;
  }
}

TEST(GqaCli, ExamplesPassTheCpuStages) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  const std::vector<std::pair<const char*, const char*>> examples = {{"plain_paged_decode.cu", k_decode},
                                                                     {"plain_paged_prefill.cu", k_paged_prefill},
                                                                     {"plain_ragged_prefill.cu", k_ragged},
                                                                     {"wgmma_ragged_prefill.cu", k_ragged}};
  for (const auto& [file, task] : examples) {
    auto j = gqa_check_json(file, task);
    EXPECT_EQ(j["outcome"], "built") << file << ": " << j.value("message", "") << "\n" << j.value("log", "");
  }
}

TEST(GqaCli, AnExampleAgainstAnotherTasksSignatureFailsTheLinkGate) {
  if (!have_nvcc()) GTEST_SKIP() << "needs nvcc";
  // The decode kernel exports 8 tensors; the paged prefill task passes 9 (it adds qo_indptr).
  auto j = gqa_check_json("plain_paged_decode.cu", k_paged_prefill);
  EXPECT_EQ(j["outcome"], "incorrect_shape") << j.dump();
  EXPECT_EQ(j["deciding_stage"], "link_gate");
  // The ragged kernel exports 8 tensors too.
  auto k = gqa_check_json("plain_ragged_prefill.cu", k_paged_prefill);
  EXPECT_EQ(k["outcome"], "incorrect_shape") << k.dump();
}

TEST(GqaCli, RunAllPlansEveryGqaTask) {
  // A dry run needs a model but calls none: a one-reply replay file stands in.
  const auto dir = testing::make_temp_dir("gqa-run-all");
  {
    std::ofstream replay(dir / "replay.json");
    replay << R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "x"}]})";
  }
  auto r = run_cli({"run", "--model", "replay:" + (dir / "replay.json").string(), "--tasks", "all", "--target", "h200",
                    "--dry-run", "--out", (dir / "run").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* task : {k_decode, k_paged_prefill, k_ragged})
    EXPECT_NE(r.out.find(std::string(task) + "__h200__base__t0.json"), std::string::npos) << task << "\n" << r.out;
  std::filesystem::remove_all(dir);
}

// A copy of the suite with one GQA workload line edited by `edit` (the task's evaluated workload).
std::filesystem::path suite_with_bad_workload(const std::string& tag, const std::string& file,
                                              const std::function<void(ordered_json&)>& edit) {
  const auto root = testing::make_temp_dir(tag);
  std::filesystem::copy(testing::repo_root() / "suite", root / "suite", std::filesystem::copy_options::recursive);
  const auto path = root / "suite/workloads" / file;
  std::ifstream in(path);
  std::stringstream out;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (first) {
      auto j = ordered_json::parse(line);
      edit(j["workload"]);
      line = j.dump();
      first = false;
    }
    out << line << "\n";
  }
  in.close();
  std::ofstream(path, std::ios::trunc) << out.str();
  return root;
}

TEST(GqaCli, NonMonotoneIndptrIsRefusedInOneLine) {
  const auto root = suite_with_bad_workload("gqa-bad-indptr", "gqa_ragged/gqa_ragged_prefill_causal_h32_kv4_d128.jsonl",
                                            [](ordered_json& w) {
                                              auto& v = w["inputs"]["qo_indptr"]["values"];
                                              std::swap(v[3], v[4]);
                                            });
  auto r = run_cli({"--root", root.string(), "tasks"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("gqa_ragged_prefill_causal_h32_kv4_d128.jsonl: workload: inputs.qo_indptr.values[4]"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("must increase strictly"), std::string::npos) << r.err;
  // Every command reads the suite first: an evaluation is refused the same way, before any build.
  auto e = run_cli({"--root", root.string(), "check", example("plain_ragged_prefill.cu"), "--task", k_ragged});
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_TRUE(one_line(e.err)) << e.err;
  std::filesystem::remove_all(root);
}

TEST(GqaCli, PageIndexOutsideThePoolIsRefusedInOneLine) {
  const auto root = suite_with_bad_workload("gqa-bad-page", "gqa_paged/gqa_paged_prefill_causal_h24_kv8_d128_ps1.jsonl",
                                            [](ordered_json& w) {
                                              ordered_json values = ordered_json::array();
                                              for (int i = 0; i < 892; ++i) values.push_back(i == 7 ? 43676 : i);
                                              w["inputs"]["kv_indices"]["values"] = values;
                                            });
  auto r = run_cli({"--root", root.string(), "tasks", "show", k_paged_prefill});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("inputs.kv_indices.values[7] = 43676: page index out of range [0, 43676)"), std::string::npos)
      << r.err;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace ptxbench
