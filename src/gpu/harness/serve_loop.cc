#include "gpu/harness/serve_loop.h"

#include <fcntl.h>
#include <signal.h>

#include "core/line_channel.h"

namespace ptxbench::gpu {

int serve_candidates(int in_fd, int out_fd, const serve_hooks& hooks) {
  // The protocol descriptors must not leak into the runner processes the harness starts (a candidate
  // could otherwise write a forged result line), and a worker that went away must not kill us with
  // SIGPIPE halfway through a write: the write fails and we exit.
  ::fcntl(in_fd, F_SETFD, FD_CLOEXEC);
  ::fcntl(out_fd, F_SETFD, FD_CLOEXEC);
  ::signal(SIGPIPE, SIG_IGN);
  auto send = [&](const ordered_json& message) { return write_line(out_fd, message.dump()); };

  auto ready = hooks.setup();
  if (!ready) {
    (void)send({{"error", ready.err().message}});
    return 1;
  }
  if (!send({{"ready", *ready}})) return 2;
  line_reader in(in_fd);
  for (;;) {
    auto line = in.read_line(-1);
    if (!line) {
      (void)send({{"error", line.err().message}});
      return 2;
    }
    if (line->kind == line_reader::read_kind::closed) return 0;
    if (line->kind != line_reader::read_kind::line || line->line.empty()) continue;
    auto request = ordered_json::parse(line->line, nullptr, false);
    if (request.is_discarded() || !request.is_object() || !request.contains("candidate")) {
      (void)send({{"error", "malformed request: expected {\"candidate\": ...}"}});
      return 2;
    }
    auto candidate = job_candidate_from_json(request["candidate"]);
    if (!candidate) {
      (void)send({{"error", candidate.err().message}});
      return 2;
    }
    auto evaluated = hooks.evaluate(*candidate);
    if (!evaluated) {
      (void)send({{"error", evaluated.err().message}});
      return 1;  // the driver ends this session and starts a fresh harness
    }
    if (!send({{"result", to_json(*evaluated)}})) return 2;
  }
}

}  // namespace ptxbench::gpu
