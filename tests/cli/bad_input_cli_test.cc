// What a new user meets first (issue 12): bad numbers, bad output paths, bad inputs, a machine without
// a GPU, a command line with no subcommand or a misspelled option. Every case runs the real binary
// and checks the exact exit code and the exact first line of the message, and that it is one line.
#include <sys/stat.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "cli/cli_test_support.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "test_support.h"

namespace ptxbench {
namespace {
namespace fs = std::filesystem;
using testing::first_line;
using testing::one_line;
using testing::run_cli;
using testing::cli_case;
using testing::expect_cases;

const std::string k_task = "gemm_n7168_k5120";

std::string fixture_kernel(const std::string& name) { return (testing::fixtures_dir() / "kernels" / name).string(); }
std::string replay() { return (testing::repo_root() / "examples" / "agent" / "gemm_replay.json").string(); }

class BadInputCli : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = testing::make_temp_dir("bad-input"); }
  void TearDown() override { fs::remove_all(m_dir); }
  std::string path(const std::string& name) const { return (m_dir / name).string(); }
  fs::path m_dir;
};

// Defect 3: NaN, infinities, negative and out-of-range numbers, one line each, exit 2.
TEST_F(BadInputCli, NumericOptionsAreCheckedWithShortMessages) {
  const std::vector<std::string> run = {"run", "--model", "replay:" + replay(), "--tasks", k_task, "--out", path("r")};
  auto with = [](std::vector<std::string> base, std::vector<std::string> extra) {
    base.insert(base.end(), extra.begin(), extra.end());
    return base;
  };
  const std::vector<std::string> check = {"check", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task};
  const std::vector<std::string> eval = {"eval", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task};
  expect_cases({
      // Once "Value 0 not in range 0.000000 to 1797693134862315708145274237317043567980...(309 digits)".
      {with(run, {"--turns", "0"}), 2, "ptxbench: --turns: expected a whole number from 1 to 1000, got '0'"},
      {with(run, {"--turns", "nan"}), 2, "ptxbench: --turns: expected a whole number from 1 to 1000, got 'nan'"},
      {with(run, {"--turns", "2.5"}), 2, "ptxbench: --turns: expected a whole number from 1 to 1000, got '2.5'"},
      {with(run, {"--trajectories", "-3"}), 2,
       "ptxbench: --trajectories: expected a whole number from 1 to 10000, got '-3'"},
      {with(run, {"--target-speedup", "nan"}), 2,
       "ptxbench: --target-speedup: expected a number above 0 and at most 1000000, got 'nan'"},
      {with(run, {"--target-speedup", "inf"}), 2,
       "ptxbench: --target-speedup: expected a number above 0 and at most 1000000, got 'inf'"},
      {with(run, {"--target-speedup", "-1"}), 2,
       "ptxbench: --target-speedup: expected a number above 0 and at most 1000000, got '-1'"},
      {with(run, {"--eval-retries", "-1"}), 2, "ptxbench: --eval-retries: expected a whole number from 0 to 100, got '-1'"},
      {with(run, {"--parallel", "0"}), 2, "ptxbench: --parallel: expected a whole number from 1 to 1024, got '0'"},
      {with(run, {"--gpus", "0"}), 2, "ptxbench: --gpus: expected a whole number from 1 to 256, got '0'"},
      {with(run, {"--context-budget", "0"}), 2,
       "ptxbench: --context-budget: expected a whole number from 1 to 1000000000, got '0'"},
      {with(run, {"--seed", "-1"}), 2,
       "ptxbench: --seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
      {with(check, {"--compile-timeout", "nan"}), 2,
       "ptxbench: --compile-timeout: expected seconds above 0 and at most 604800, got 'nan'"},
      {with(check, {"--compile-timeout", "-5"}), 2,
       "ptxbench: --compile-timeout: expected seconds above 0 and at most 604800, got '-5'"},
      {with(eval, {"--call-timeout", "0"}), 2,
       "ptxbench: --call-timeout: expected seconds above 0 and at most 604800, got '0'"},
      {with(eval, {"--sanitize-timeout", "inf"}), 2,
       "ptxbench: --sanitize-timeout: expected seconds above 0 and at most 604800, got 'inf'"},
      {with(eval, {"--profile-timeout", "1e30"}), 2,
       "ptxbench: --profile-timeout: expected seconds above 0 and at most 604800, got '1e30'"},
      {with(eval, {"--iterations", "0"}), 2, "ptxbench: --iterations: expected a whole number from 1 to 100000, got '0'"},
      {with(eval, {"--warmup", "-1"}), 2, "ptxbench: --warmup: expected a whole number from 0 to 100000, got '-1'"},
      {with(eval, {"--input-sets", "nan"}), 2, "ptxbench: --input-sets: expected a whole number from 0 to 1000, got 'nan'"},
      {with(eval, {"--device", "-1"}), 2, "ptxbench: --device: expected a whole number from 0 to 1023, got '-1'"},
      {with(eval, {"--seed", "x"}), 2, "ptxbench: --seed: expected a whole number from 0 to 18446744073709551615, got 'x'"},
      // The same share, worded the same, as `metrics --min-coverage` (90 was once taken as 9000 %).
      {with(eval, {"--min-coverage", "nan"}), 2,
       "ptxbench: --min-coverage: expected a share from 0 to 1 (0.9 = 90%), got 'nan'"},
      {with(eval, {"--min-coverage", "90"}), 2,
       "ptxbench: --min-coverage: expected a share from 0 to 1 (0.9 = 90%), got '90'"},
      // The data commands (fixit, kernelgen, sft) use the same checks.
      {{"fixit", "mine", path("runs"), "--out", path("o"), "--seed", "-1"}, 2,
       "ptxbench: --seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
      {{"fixit", "repair", path("mined"), "--out", path("o"), "--model", "replay:" + replay(), "--turns", "0"}, 2,
       "ptxbench: --turns: expected a whole number from 1 to 1000, got '0'"},
      {{"fixit", "repair", path("mined"), "--out", path("o"), "--model", "replay:" + replay(), "--target-speedup",
        "nan"},
       2, "ptxbench: --target-speedup: expected a number above 0 and at most 1000000, got 'nan'"},
      {{"fixit", "repair", path("mined"), "--out", path("o"), "--model", "replay:" + replay(), "--eval-retries", "-1"},
       2, "ptxbench: --eval-retries: expected a whole number from 0 to 100, got '-1'"},
      {{"fixit", "pairs", path("repairs"), "--out", path("o"), "--min-speedup", "nan"}, 2,
       "ptxbench: --min-speedup: expected off or a number from 0 to 1000000, got 'nan'"},
      {{"fixit", "mine", path("runs"), "--out", path("o"), "--cap-rule", "proportional"}, 2,
       "ptxbench: --cap-rule: expected one of upstream, every-stratum, got 'proportional'"},
      {{"kernelgen", "collect", path("runs"), "--out", path("o"), "--speedup-above", "-1"}, 2,
       "ptxbench: --speedup-above: expected off or a number from 0 to 1000000, got '-1'"},
      {{"fixit", "reason", path("pairs"), "--out", path("o"), "--model", "replay:" + replay(), "--top-p", "1.5"},
       2, "ptxbench: --top-p: expected a number from 0 to 1, got '1.5'"},
      {{"sft", "export", path("reasoning"), "--format", "fixit", "--out", path("o"), "--kernel-fence", "c"}, 2,
       "ptxbench: --kernel-fence: expected one of cpp, cuda, got 'c'"},
      {{"fixit", "reason", path("pairs"), "--out", path("o"), "--model", "replay:" + replay(), "--max-attempts", "0"},
       2, "ptxbench: --max-attempts: expected a whole number from 1 to 100, got '0'"},
      {{"kernelgen", "collect", path("runs"), "--out", path("o"), "--cap-per-definition", "-1"}, 2,
       "ptxbench: --cap-per-definition: expected a whole number from 0 to 1000000000, got '-1'"},
      {{"sft", "export", path("reasoning"), "--format", "fixit", "--out", path("o"), "--max-tokens", "0"}, 2,
       "ptxbench: --max-tokens: expected a whole number from 1 to 1000000000, got '0'"},
      {{"sft", "recipe", "s0", "--parallel", "inf"}, 2,
       "ptxbench: --parallel: expected a whole number from 1 to 1024, got 'inf'"},
      // A misspelled tool once reached compute-sanitizer on the GPU host, after the build.
      {with(eval, {"--sanitizer-tools", "memchek"}), 2,
       "ptxbench: --sanitizer-tools: expected a comma list of memcheck, racecheck, synccheck, initcheck, got "
       "'memchek'"},
      {with(eval, {"--sanitizer-tools", "memcheck,,racecheck"}), 2,
       "ptxbench: --sanitizer-tools: expected a comma list of memcheck, racecheck, synccheck, initcheck, got "
       "'memcheck,,racecheck'"},
      {{"sass", "-", "--wait", "0"}, 2, "ptxbench: --wait: expected seconds above 0 and at most 3600, got '0'"},
  });
}

// Defect 4: an output path that cannot be written is refused before any work (no build happens).
TEST_F(BadInputCli, OutputPathsAreCheckedBeforeAnyWork) {
  ASSERT_TRUE(write_file_atomic(path("a_file"), "x").ok());
  fs::create_directories(path("a_dir"));
  const std::string cache = path("cache");
  const std::vector<std::string> check = {"check", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task, "--out"};
  auto with = [](std::vector<std::string> base, const std::string& out) {
    base.push_back(out);
    return base;
  };
  expect_cases(
      {
          {with(check, ""), 2, "ptxbench: --out: empty path; give the file to write"},
          {with(check, path("a_dir")), 2, "ptxbench: --out " + path("a_dir") + ": is a folder, expected a file name"},
          {with(check, path("a_file") + "/v.json"), 2,
           "ptxbench: --out " + path("a_file") + "/v.json: " + path("a_file") + " is not a folder"},
          {with(check, path("new") + "/"), 2, "ptxbench: --out " + path("new") + "/: ends in '/', expected a file name"},
          {{"report", path("a_dir"), "--out", path("a_dir")}, 2,
           "ptxbench: --out " + path("a_dir") + ": is a folder, expected a file name"},
          {{"report", path("a_dir"), "--out", ""}, 2, "ptxbench: --out: empty path; give the file to write"},
          {{"metrics", path("a_dir"), "--out", ""}, 2, "ptxbench: --out: empty path; give the folder to write into"},
          {{"metrics", path("a_dir"), "--out", path("a_file")}, 2,
           "ptxbench: --out " + path("a_file") + ": is a file, expected a folder"},
          {{"prompt", k_task, "--out", ""}, 2, "ptxbench: --out: empty path; give the folder to write into"},
          {{"prompt", k_task, "--out", path("a_file")}, 2,
           "ptxbench: --out " + path("a_file") + ": is a file, expected a folder"},
          {{"run", "--model", "replay:" + replay(), "--tasks", k_task, "--out", ""}, 2,
           "ptxbench: --out: empty path; give the folder to write into"},
          {{"run", "--model", "replay:" + replay(), "--tasks", k_task, "--out", path("a_file")}, 2,
           "ptxbench: --out " + path("a_file") + ": is a file, expected a folder"},
      },
      {{"PTXBENCH_CACHE", cache}});
  EXPECT_FALSE(fs::exists(fs::path(cache) / "builds")) << "a build ran before the --out check";
  EXPECT_FALSE(fs::exists(path("a_file") + "/turns.csv"));
  // Not writable even for root: a process's /proc folder.
  auto r = run_cli(with(check, "/proc/1/verdict.json"), 120, {{"PTXBENCH_CACHE", cache}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(first_line(r.err).rfind("ptxbench: --out /proc/1/verdict.json: cannot write in /proc/1 (", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(fs::path(cache) / "builds"));
}

// Defect 5: bad input is exit 2 with one line, never 3 (infrastructure), in every subcommand.
TEST_F(BadInputCli, BadInputIsExitTwoInEverySubcommand) {
  ASSERT_TRUE(write_file_atomic(path("k.txt"), "__global__ void k() {}\n").ok());
  ASSERT_TRUE(write_file_atomic(path("unknown_task.json"),
                                R"({"name": "x", "definition": "no_such_task", "author": "a", "spec": {"language": "cuda",
  "target_hardware": ["h200"], "entry_point": "kernel.cu::run"}, "sources": [{"path": "kernel.cu", "content": "x"}]})")
                  .ok());
  ASSERT_TRUE(write_file_atomic(path("no_cu.json"),
                                R"({"name": "x", "definition": "gemm_n7168_k5120", "author": "a", "spec": {"language": "cpp",
  "target_hardware": ["h200"], "entry_point": "kernel.cpp::run"}, "sources": [{"path": "kernel.cpp", "content": "int x;"}]})")
                  .ok());
  // Defect 9: NUL bytes are refused in a Solution's sources as in a .cu file.
  ASSERT_TRUE(write_file_atomic(path("nul.json"),
                                R"({"name": "x", "definition": "gemm_n7168_k5120", "author": "a", "spec": {"language": "cuda",
  "target_hardware": ["h200"], "entry_point": "kernel.cu::run"}, "sources": [{"path": "kernel.cu", "content": "int x;\u0000"}]})")
                  .ok());
  fs::create_directories(path("a_dir"));
  ASSERT_TRUE(write_file_atomic(path("models.json"),
                                R"({"format": "ptxbench.models/1", "models": {"": {"api": "openai", "model_id": "x",
  "base_url": "http://127.0.0.1:9/v1", "api_key_env": null}}})")
                  .ok());
  const std::string models = path("models.json");
  ASSERT_TRUE(write_file_atomic(path("ranks.json"), "garbage\n").ok());
  ASSERT_TRUE(write_file_atomic(path("a_file"), "x").ok());
  expect_cases({
      // A cache folder that cannot be one is the user's setting, said before any build (it was exit 3
      // from inside the build stage).
      {{"--cache-dir", path("a_file"), "check", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task}, 2,
       "ptxbench: --cache-dir " + path("a_file") + ": is a file, expected a folder"},
      {{"--cache-dir", path("a_file"), "run", "--model", "replay:" + replay(), "--tasks", k_task, "--cpu-only",
        "--out", path("r")},
       2, "ptxbench: --cache-dir " + path("a_file") + ": is a file, expected a folder"},
      // A ranks file named on the command line must load (it fell back to chars/4 estimates, exit 0).
      {{"prompt", k_task, "--ranks", path("ranks.json")}, 2,
       "ptxbench: --ranks " + path("ranks.json") + ": not a usable cl100k_base ranks file (" + path("ranks.json") +
           ": invalid JSON at line 1, column 1: 'g')"},
      // A base URL without a scheme was retried six times, then the run ended as an API failure (exit 3).
      {{"run", "--model", "openai:qwen", "--base-url", "localhost:8000/v1", "--tasks", k_task, "--cpu-only", "--out",
        path("r")},
       2, "ptxbench: --base-url 'localhost:8000/v1': expected an http:// or https:// URL with a host, e.g. "
          "http://localhost:8000/v1"},
      // Refused in one line: the replay's "holds 2 replies" note came first.
      {{"run", "--model", "replay:" + replay(), "--tasks", k_task, "--cpu-only", "--evaluator", "bogus", "--out",
        path("r")},
       2, "ptxbench: --evaluator bogus: expected 'pipeline', a service URL http://HOST:PORT (or 'fake', for tests)"},
  });
  expect_cases({{{"eval", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task}, 2,
                 "ptxbench: PTXBENCH_CACHE " + path("a_file") + ": is a file, expected a folder"}},
               {{"PTXBENCH_CACHE", path("a_file")}});
  expect_cases({
      {{"check", path("unknown_task.json")}, 2,
       "ptxbench: " + path("unknown_task.json") + ": unknown task 'no_such_task'; `ptxbench tasks` lists them"},
      {{"check", path("k.txt"), "--task", k_task}, 2,
       "ptxbench: " + path("k.txt") + ": expected a .cu kernel, a Triton .py file or a Solution .json file, not a .txt file"},
      {{"check", path("no_cu.json")}, 2,
       "ptxbench: " + path("no_cu.json") + ": sources: no .cu file among them (nvcc builds .cu sources)"},
      {{"check", path("nul.json")}, 2,
       "ptxbench: " + path("nul.json") + ".sources[0].content: binary content (NUL byte at offset 6), expected text"},
      {{"eval", path("k.txt"), "--task", k_task}, 2,
       "ptxbench: " + path("k.txt") + ": expected a .cu kernel, a Triton .py file or a Solution .json file, not a .txt file"},
      {{"eval", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task, "--harness", path("nonexistent")}, 2,
       "ptxbench: --harness " + path("nonexistent") + ": no such file"},
      {{"tasks", "show", "gemm"}, 2, "ptxbench: unknown task 'gemm' (did you mean 'gemm_n7168_k5120'?)"},
      {{"--root", path("a_dir"), "tasks"}, 2, "ptxbench: " + path("a_dir") + "/suite: suite folder not found"},
      {{"sass", path("a_dir")}, 2, "ptxbench: " + path("a_dir") + ": is a directory, expected a file or a stream"},
      {{"sass", path("missing.so")}, 2, "ptxbench: " + path("missing.so") + ": no such file"},
      {{"sass", "/dev/null"}, 2, "ptxbench: /dev/null: is a device; give a file, a pipe or '-' for standard input"},
      {{"prompt", "nosuch"}, 2, "ptxbench: unknown task 'nosuch'; `ptxbench tasks` lists them"},
      {{"prompt", k_task, "--ranks", path("missing")}, 2, "ptxbench: --ranks " + path("missing") + ": no such file"},
      {{"prompt", k_task, "--variant", "nosuch"}, 2,
       "ptxbench: no variant 'nosuch' for problem family 'gemm' in pack 'sm90a' (choose one of: base, multicast, "
       "warp_specialization, ablation_params, ablation_templates, ablation_contracts), or builtin-minimal (no "
       "knowledge pack)"},
      // The task is checked before the machine: an unknown task is the first thing to hear about.
      {{"run", "--model", "replay:" + replay(), "--tasks", "nosuch", "--out", path("r")}, 2,
       "ptxbench: unknown task 'nosuch'; `ptxbench tasks` lists them"},
      // Defect 9: a model label the metrics would refuse is refused by run.
      {{"run", "--model", "", "--models-file", models, "--tasks", k_task, "--out", path("r")}, 2,
       "ptxbench: --model: empty name; a run records it and the metrics need one"},
      {{"metrics", path("missing"), "--out", path("m")}, 2,
       "ptxbench: " + path("missing") + ": not a run directory (no trajectories/ folder inside) nor a Harbor job (no trial folder with agent/ or verifier/ inside)"},
      {{"report", path("missing"), "--out", path("r.html")}, 2,
       "ptxbench: " + path("missing") + ": not a run directory (no trajectories/ folder inside) nor a Harbor job (no trial folder with agent/ or verifier/ inside)"},
  });
  EXPECT_FALSE(fs::exists(path("r"))) << "run created its folder for a bad command";
}

// Defect 6: eval on a machine without a GPU says so before building anything.
TEST_F(BadInputCli, EvalWithoutAGpuSaysSoBeforeBuilding) {
  const std::string cache = path("cache");
  expect_cases({{{"eval", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task}, 3,
                 "ptxbench: no NVIDIA GPU or driver found on this machine (" + path("no-nvidia0") +
                     " is missing); `ptxbench check` runs the CPU stages (gates, build, static SASS)"}},
               {{"PTXBENCH_CACHE", cache}, {"PTXBENCH_DEVICE_NODE", path("no-nvidia0")}});
  EXPECT_FALSE(fs::exists(fs::path(cache) / "builds")) << "eval built before finding out there is no GPU";
  // Every sanitizer tool, listed once each, is accepted (the machine is what stops it here).
  expect_cases({{{"eval", fixture_kernel("naive_gemm_sm90a.cu"), "--task", k_task, "--sanitizer-tools",
                  "memcheck,racecheck,synccheck,initcheck", "--min-coverage", "0.9"},
                 3,
                 "ptxbench: no NVIDIA GPU or driver found on this machine (" + path("no-nvidia0") +
                     " is missing); `ptxbench check` runs the CPU stages (gates, build, static SASS)"}},
               {{"PTXBENCH_CACHE", cache}, {"PTXBENCH_DEVICE_NODE", path("no-nvidia0")}});
  expect_cases({{{"run", "--model", "replay:" + replay(), "--tasks", k_task, "--out", path("r")}, 2,
                 "ptxbench: no NVIDIA GPU or driver found on this machine (" + path("no-nvidia0") +
                     " is missing) to evaluate h200 kernels on; pass --cpu-only to evaluate only the CPU stages "
                     "(gates, build, static SASS)"}},
               {{"PTXBENCH_DEVICE_NODE", path("no-nvidia0")}});
}

// Defect 8: sass reads standard input, pipes, process substitution and FIFOs; never hangs.
TEST_F(BadInputCli, SassReadsStreamsAndNeverHangs) {
  const std::string listing = (testing::fixtures_dir() / "sass" / "probe_sm90a.cuobjdump.txt").string();
  const std::string bin = (testing::bin_dir() / "ptxbench").string();
  const std::string expected = "static: found GMMA x2 in wgmma_dead, wgmma_probe; TMA x1 in tma_tensor_probe";
  auto sh = [&](const std::string& script) {
    return run_process({.argv = {"bash", "-c", script},
                        .env_overrides = {{"PTXBENCH_ROOT", testing::repo_root().string()}, {"B", bin}, {"L", listing},
                                          {"D", m_dir.string()}},
                        .timeout_s = 60});
  };
  for (const std::string script : {"cat \"$L\" | \"$B\" sass -", "\"$B\" sass /dev/stdin < \"$L\"",
                                   "\"$B\" sass <(cat \"$L\")", "cat \"$L\" | \"$B\" sass /dev/stdin",
                                   "mkfifo \"$D/f1\"; (sleep 0.3; cat \"$L\" > \"$D/f1\") & \"$B\" sass \"$D/f1\""}) {
    auto r = sh(script);
    EXPECT_EQ(r.exit_code, 0) << script << "\n" << r.err;
    EXPECT_NE(r.out.find(expected), std::string::npos) << script << "\n" << r.out;
  }
  // A FIFO nobody writes to: a bounded wait, then one line and exit 2 (it hung forever before).
  ASSERT_EQ(::mkfifo(path("silent").c_str(), 0600), 0);
  auto r = run_cli({"sass", path("silent"), "--wait", "0.5"}, 20);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(first_line(r.err), "ptxbench: " + path("silent") +
                                   ": no data for 0.5 s (is anything writing to it?); start the writer first, or give a file");
  // A FIFO given to check as a kernel is refused at once instead of blocking in open().
  ASSERT_EQ(::mkfifo(path("fifo.cu").c_str(), 0600), 0);
  auto c = run_cli({"check", path("fifo.cu"), "--task", k_task}, 20);
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(first_line(c.err),
            "ptxbench: " + path("fifo.cu") + ": is not a regular file (a FIFO, socket or device), expected a file");
}

// Newcomer: no subcommand, a misspelled option, defaults in --help, tasks show --json.
TEST_F(BadInputCli, CommandLineHelpForNewcomers) {
  expect_cases({
      {{}, 2,
       "ptxbench: a subcommand is required: tasks, check, eval, sass, prompt, run, metrics, report, serve, worker, jobs, "
       "fixit, kernelgen, sft, notes, mcp; `ptxbench --help` says what each does"},
      {{"--taks"}, 2, "ptxbench: unknown option '--taks' (did you mean the subcommand 'tasks'?)"},
      {{"run", "--taks", k_task}, 2, "ptxbench: unknown option '--taks' (did you mean '--tasks'?)"},
      {{"check", fixture_kernel("naive_gemm_sm90a.cu"), "--tsak", k_task}, 2,
       "ptxbench: unknown option '--tsak' (did you mean '--task'?)"},
      {{"tasks", "--bogus"}, 2, "ptxbench: unknown option '--bogus'; `ptxbench tasks --help` lists them"},
  });
  auto eval_help = run_cli({"eval", "--help"});
  EXPECT_EQ(eval_help.exit_code, 0);
  for (const char* shown : {"--input-sets INT:0..1000=0", "--seed UINT:0..2^64-1=0", "--warmup INT:0..100000=10",
                            "--iterations INT:1..100000=adaptive", "--timing-cap FLOAT:>0=1.5", "--call-timeout FLOAT:seconds=30",
                            "--min-coverage FLOAT:0..1=off", "--compile-timeout FLOAT:seconds=180"})
    EXPECT_NE(eval_help.out.find(shown), std::string::npos) << shown << "\n" << eval_help.out;
  auto run_help = run_cli({"run", "--help"});
  for (const char* shown : {"--turns INT:1..1000=8", "--seed UINT:0..2^64-1=0", "--variants TEXT=[0,1,2]",
                            "--target TEXT ", "--history TEXT=full", "--target-speedup FLOAT:>0=1.2"})
    EXPECT_NE(run_help.out.find(shown), std::string::npos) << shown << "\n" << run_help.out;
  auto show = run_cli({"tasks", "show", k_task, "--json"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  auto j = parse_json(show.out, "tasks show");
  ASSERT_TRUE(j.ok()) << show.out;
  EXPECT_EQ((*j)["workload"]["axes"]["M"], 8192);
}

// Defect 9: `prompt --variant builtin-minimal` renders what `run --variants builtin-minimal` sends.
TEST_F(BadInputCli, PromptAndRunShareTheBuiltinMinimalVariant) {
  auto p = run_cli({"prompt", k_task, "--variant", "builtin-minimal", "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto rendered = parse_json(p.out, "prompt");
  ASSERT_TRUE(rendered.ok()) << p.out;
  EXPECT_EQ((*rendered)["variant"], "builtin-minimal");
  auto r = run_cli({"run", "--model", "replay:" + replay(), "--tasks", k_task, "--variants", "builtin-minimal",
                    "--trajectories", "1", "--turns", "1", "--cpu-only", "--evaluator", "fake", "-q", "--out", path("r")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = read_text_file(path("r") + "/trajectories/gemm_n7168_k5120__h200__builtin-minimal__t0.json", 1 << 24);
  ASSERT_TRUE(t.ok()) << t.err().message;
  auto traj = parse_json(*t, "trajectory");
  ASSERT_TRUE(traj.ok());
  EXPECT_EQ((*traj)["messages"][0]["content"], (*rendered)["system"]);
  EXPECT_EQ((*traj)["messages"][1]["content"], (*rendered)["user"]);
  auto list = run_cli({"prompt", k_task, "--list"});
  EXPECT_NE(list.out.find("builtin-minimal"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace ptxbench
