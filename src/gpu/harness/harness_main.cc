// ptxbench-harness: the trusted GPU process. Reads a job (task, candidates, options) written by the
// orchestrator, evaluates each candidate in a fresh runner process, and writes the result file after
// every candidate, so a crash never loses what was already established.
//
//   ptxbench-harness --job JOB.json --result RESULT.json
//   ptxbench-harness --job JOB.json --serve-fds IN,OUT   (the job's candidates are ignored; candidates
//                                                         arrive one per line: gpu/harness/serve_loop.h)
//   ptxbench-harness --environment OUT.json [--device N]  (the device and library versions, no task)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/file_io.h"
#include "verdict/harness_protocol.h"
#include "gpu/harness/environment.h"
#include "gpu/harness/harness.h"
#include "gpu/harness/serve_loop.h"

using namespace ptxbench;

namespace {

int write_result(const std::string& path, const ordered_json& result) {
  if (auto st = write_file_atomic(path, result.dump(2) + "\n"); !st) {
    std::fprintf(stderr, "ptxbench-harness: %s\n", st.err().message.c_str());
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string job_path, result_path, serve_fds, environment_path;
  int device = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--job") job_path = argv[i + 1];
    else if (k == "--result") result_path = argv[i + 1];
    else if (k == "--serve-fds") serve_fds = argv[i + 1];
    else if (k == "--environment") environment_path = argv[i + 1];
    else if (k == "--device") device = std::atoi(argv[i + 1]);
  }
  if (!environment_path.empty()) {
    // What a GPU worker registers (and keys the result cache by) before it has run any task.
    ordered_json env = gpu::collect_environment(device);
    return write_result(environment_path, env) ? 3 : 0;
  }
  if (job_path.empty() || (result_path.empty() && serve_fds.empty())) {
    std::fprintf(stderr, "usage: ptxbench-harness --job JOB.json --result RESULT.json (started by ptxbench eval)\n");
    return 2;
  }
  ordered_json doc = {{"format", "ptxbench.harness-result/1"}, {"candidates", ordered_json::array()}};
  auto text = read_text_file(job_path, 64u << 20);
  auto j = text ? parse_json(*text, job_path) : ptxbench::result<ordered_json>(text.err());
  auto job = j ? harness_job_from_json(*j) : ptxbench::result<harness_job>(j.err());
  if (!serve_fds.empty()) {
    int in_fd = -1, out_fd = -1;
    if (std::sscanf(serve_fds.c_str(), "%d,%d", &in_fd, &out_fd) != 2 || in_fd < 0 || out_fd < 0) {
      std::fprintf(stderr, "ptxbench-harness: --serve-fds IN,OUT expects two descriptor numbers\n");
      return 2;
    }
    std::unique_ptr<gpu::harness> h;
    gpu::serve_hooks hooks;
    hooks.setup = [&]() -> ptxbench::result<ordered_json> {
      if (!job) return job.err();
      auto created = gpu::harness::create(*job);
      if (!created) return created.err().with_context("setting up the task on the GPU");
      h = std::move(*created);
      return ordered_json{{"environment", h->environment()}, {"baseline", h->baseline_description()}};
    };
    hooks.evaluate = [&](const job_candidate& c) { return h->evaluate(c); };
    return gpu::serve_candidates(in_fd, out_fd, hooks);
  }
  if (!job) {
    doc["error"] = job.err().message;
    return write_result(result_path, doc) ? 3 : 1;
  }
  auto h = gpu::harness::create(*job);
  if (!h) {
    doc["error"] = "setting up the task on the GPU: " + h.err().message;
    return write_result(result_path, doc) ? 3 : 1;
  }
  doc["environment"] = (*h)->environment();
  doc["baseline"] = (*h)->baseline_description();
  if (int rc = write_result(result_path, doc)) return rc;
  for (const auto& c : job->candidates) {
    auto outcome = (*h)->evaluate(c);
    doc["candidates"].push_back(to_json(outcome));
    if (int rc = write_result(result_path, doc)) return rc;
  }
  return 0;
}
