#include "fake_work.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ptxbench::testing {
namespace {

int hex_digit(const std::string& key, std::size_t i) {
  char c = i < key.size() ? key[i] : '0';
  return c <= '9' ? c - '0' : c - 'a' + 10;
}

bool injects_infra(const queue::job& j, const fake_work_options& o) {
  return o.inject_infra && hex_digit(j.content_key, 4) < 4 && j.infra_failures == 0;
}
bool infra_on_cpu(const std::string& key) { return fake_decided_on_cpu(key) || hex_digit(key, 5) < 8; }

void sleep_ms(int ms, const std::atomic<bool>& cancelled) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!cancelled && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(ms, 5)));
}

}  // namespace

bool fake_decided_on_cpu(const std::string& key) { return hex_digit(key, 0) < 2; }

std::string fake_verdict(const std::string& key) {
  nlohmann::ordered_json v;
  int d = hex_digit(key, 0);
  v["evaluator"] = "fake";
  v["content_key"] = key;
  if (d < 2) {
    v["status"] = "COMPILE_ERROR";
    v["outcome"] = "compile_error";
  } else if (d < 4) {
    v["status"] = "INCORRECT_NUMERICAL";
    v["outcome"] = "incorrect_numerical";
  } else if (d == 4) {
    v["status"] = "RUNTIME_ERROR";
    v["outcome"] = "runtime_error";
  } else {
    v["status"] = "PASSED";
    v["outcome"] = "passed";
    v["speedup"] = 0.5 + (hex_digit(key, 1) * 256 + hex_digit(key, 2) * 16 + hex_digit(key, 3)) / 2048.0;
  }
  return v.dump();
}

std::string fake_artifact(const std::string& key) { return "fake artifact of " + key; }

queue::run_environment fake_environment() { return {"FAKE GPU", "0.0", "13.0", "0", "0", "test"}; }

queue::worker_callbacks fake_callbacks(const fake_work_options& options) {
  queue::worker_callbacks cb;
  cb.compile = [options](const queue::job& j, const std::atomic<bool>& cancelled)
      -> result<queue::compile_outcome> {
    sleep_ms(options.cpu_ms, cancelled);
    if (injects_infra(j, options) && infra_on_cpu(j.content_key)) return make_error("fake: build host lost (injected)");
    queue::compile_outcome out;
    if (fake_decided_on_cpu(j.content_key)) out.verdict_json = fake_verdict(j.content_key);
    else out.artifact = fake_artifact(j.content_key);
    return out;
  };
  cb.run = [options](const queue::job& j, const std::string& artifact,
                     const std::atomic<bool>& cancelled) -> result<queue::run_outcome> {
    if (artifact != fake_artifact(j.content_key)) return make_error("fake: wrong artifact for this job");
    if (options.allow_kill_self && j.spec.solution_json.find("FAKE_KILL_WORKER") != std::string::npos)
      ::kill(::getpid(), SIGKILL);  // the candidate takes its worker down
    sleep_ms(options.gpu_ms, cancelled);
    if (injects_infra(j, options) && !infra_on_cpu(j.content_key)) return make_error("fake: GPU lost (injected)");
    return queue::run_outcome{fake_verdict(j.content_key), fake_environment()};
  };
  return cb;
}

std::string fake_solution(const std::string& task, const std::string& code, const std::string& name) {
  nlohmann::ordered_json s;
  s["name"] = name;
  s["definition"] = task;
  s["author"] = "test";
  s["spec"] = {{"language", "cuda"}, {"target_hardware", {"h200"}}, {"entry_point", "kernel.cu::run"}};
  s["sources"] = nlohmann::ordered_json::array({{{"path", "kernel.cu"}, {"content", code}}});
  return s.dump();
}

queue::job_spec fake_spec(int i, const std::string& extra_code) {
  queue::job_spec spec;
  spec.kind = queue::job_kind::evaluate;
  spec.task = "gemm";
  spec.target = "h200";
  spec.solution_json = fake_solution("gemm", fmt::format("// candidate {}\n__global__ void k() {{}}\n{}", i, extra_code));
  return spec;
}

}  // namespace ptxbench::testing
