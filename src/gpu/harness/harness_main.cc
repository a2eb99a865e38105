// ptxbench-harness: the trusted GPU process. Reads a job (task, candidates, options) written by the
// orchestrator, evaluates each candidate in a fresh runner process, and writes the result file after
// every candidate, so a crash never loses what was already established.
//
//   ptxbench-harness --job JOB.json --result RESULT.json
#include <cstdio>
#include <string>

#include "core/file_io.h"
#include "verdict/harness_protocol.h"
#include "gpu/harness/harness.h"

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
  std::string job_path, result_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--job") job_path = argv[i + 1];
    else if (k == "--result") result_path = argv[i + 1];
  }
  if (job_path.empty() || result_path.empty()) {
    std::fprintf(stderr, "usage: ptxbench-harness --job JOB.json --result RESULT.json (started by ptxbench eval)\n");
    return 2;
  }
  ordered_json doc = {{"format", "ptxbench.harness-result/1"}, {"candidates", ordered_json::array()}};
  auto text = read_text_file(job_path, 64u << 20);
  if (!text) {
    doc["error"] = text.err().message;
    return write_result(result_path, doc) ? 3 : 1;
  }
  auto j = parse_json(*text, job_path);
  auto job = j ? harness_job_from_json(*j) : ptxbench::result<harness_job>(j.err());
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
