// ptxbench-harness: the trusted GPU process. Reads a job (task, options) written by its driver
// (eval/harness_session.h), sets the task up once, then evaluates candidates as they arrive, each in
// fresh runner processes.
//
//   ptxbench-harness --job JOB.json --serve-fds IN,OUT    (candidates arrive one per line: gpu/harness/serve_loop.h)
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

int main(int argc, char** argv) {
  std::string job_path, serve_fds, environment_path;
  int device = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--job") job_path = argv[i + 1];
    else if (k == "--serve-fds") serve_fds = argv[i + 1];
    else if (k == "--environment") environment_path = argv[i + 1];
    else if (k == "--device") device = std::atoi(argv[i + 1]);
  }
  if (!environment_path.empty()) {
    // What a GPU worker registers (and keys the result cache by), and what `eval` reads to pick the
    // target, before any task is set up.
    ordered_json env = gpu::collect_environment(device);
    if (auto st = write_file_atomic(environment_path, env.dump(2) + "\n"); !st) {
      std::fprintf(stderr, "ptxbench-harness: %s\n", st.err().message.c_str());
      return 3;
    }
    return 0;
  }
  int in_fd = -1, out_fd = -1;
  if (job_path.empty() || std::sscanf(serve_fds.c_str(), "%d,%d", &in_fd, &out_fd) != 2 || in_fd < 0 || out_fd < 0) {
    std::fprintf(stderr,
                 "usage: ptxbench-harness --job JOB.json --serve-fds IN,OUT (started by ptxbench eval, run or worker)\n"
                 "       ptxbench-harness --environment OUT.json [--device N]\n");
    return 2;
  }
  auto text = read_text_file(job_path, 64u << 20);
  auto j = text ? parse_json(*text, job_path) : ptxbench::result<ordered_json>(text.err());
  auto job = j ? harness_job_from_json(*j) : ptxbench::result<harness_job>(j.err());
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
