#include "eval/harness_session.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/line_channel.h"
#include "core/spawn.h"
#include "eval/static_stage.h"
#include "eval/target_verdict.h"

namespace ptxbench::eval {
namespace fs = std::filesystem;

result<std::unique_ptr<harness_session>> harness_session::start(const task& t, const target_info& target,
                                                                const pipeline_config& config, session_limits limits) {
  const double setup_timeout_s = limits.setup_timeout_s;
  std::unique_ptr<harness_session> s(new harness_session());
  s->m_task = &t;
  s->m_target = &target;
  s->m_await_exit = config.await_harness_exit;
  s->m_job = make_harness_job(t, target, config, &s->m_triton_missing);
  s->m_candidate_deadline_s =
      limits.candidate_timeout_s > 0 ? limits.candidate_timeout_s : candidate_deadline_s(config.gpu, t);
  const fs::path harness = s->m_job.options.harness;
  if (!fs::exists(harness))
    return make_error(fmt::format("{} not found: this build has no GPU harness (build with the CUDA toolkit)",
                                  harness.string()));
  const fs::path job_file = s->m_job.work_dir / "job.json";
  if (auto st = write_file_atomic(job_file, to_json(s->m_job).dump(2)); !st) return st.err();
  // A worker that writes to a harness that just died must get an error, not SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0) return make_error("harness session: pipe failed");
  if (::pipe2(from, O_CLOEXEC) != 0) {
    ::close(to[0]);
    ::close(to[1]);
    return make_error("harness session: pipe failed");
  }
  auto started = spawn_background({.argv = {harness.string(), "--job", job_file.string(), "--serve-fds", "3,4"},
                                   .log = s->m_job.work_dir / "harness.log",
                                   .fds = {{to[0], 3}, {from[1], 4}}});
  ::close(to[0]);
  ::close(from[1]);
  if (!started) {
    ::close(to[1]);
    ::close(from[0]);
    return started.err().with_context("starting the GPU harness");
  }
  s->m_pid = *started;
  s->m_to = to[1];
  s->m_from = from[0];
  auto t0 = std::chrono::steady_clock::now();
  s->m_reader = std::make_unique<line_reader>(s->m_from);
  auto line = s->m_reader->read_line(setup_timeout_s);
  s->m_setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string problem;
  if (!line) problem = line.err().message;
  else if (line->kind == line_reader::read_kind::timeout)
    problem = fmt::format("the harness did not finish setting up {} within {:g} s", t.name, setup_timeout_s);
  else if (line->kind == line_reader::read_kind::closed) problem = "the harness exited while setting up";
  if (problem.empty()) {
    auto msg = ordered_json::parse(line->line, nullptr, false);
    if (msg.is_object() && msg.contains("ready") && msg["ready"].is_object()) {
      s->m_environment = msg["ready"].value("environment", ordered_json::object());
      return s;
    }
    problem = msg.is_object() && msg.contains("error") && msg["error"].is_string()
                  ? msg["error"].get<std::string>()
                  : "the harness sent something other than ready: " + line->line.substr(0, 200);
  }
  std::string tail = s->log_tail();
  s->close(problem, false);
  return make_error(tail.empty() ? problem : fmt::format("{} ({})", problem, tail));
}

harness_session::~harness_session() { close("session ended", true, m_await_exit); }

void harness_session::close(const std::string& why, bool graceful, bool await_exit) {
  if (m_closed_because.empty()) m_closed_because = why;
  if (m_to >= 0) ::close(m_to);  // end of input: a healthy harness exits by itself
  m_to = -1;
  // A healthy harness gets 3 s to exit (SIGCONT is harmless; the wait is what matters); a failed one
  // (hung, confused) is killed with its whole process group at once. A caller about to exit need not
  // wait: the healthy harness has its end of input and exits by itself, or dies with this process.
  if (m_pid > 0 && (!graceful || await_exit)) stop_child(m_pid, graceful ? SIGCONT : SIGKILL, graceful ? 3000 : 0);
  m_pid = -1;
  if (m_from >= 0) ::close(m_from);
  m_from = -1;
}

std::string harness_session::log_tail() const {
  auto text = read_text_file(m_job.work_dir / "harness.log", 1u << 20);
  if (!text || text->empty()) return "";
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  auto nl = t.rfind('\n');
  std::string last = nl == std::string::npos ? t : t.substr(nl + 1);
  return "harness log: " + last.substr(0, 300);
}

status harness_session::complete(const gpu_stage_result& r, gpu_candidate& c) const {
  verdict& v = *c.v;
  v.environment = verdict_environment(m_environment, m_job);
  // Evidence that one harness served many candidates, and what setting the task up cost once.
  v.environment["harness_session"] = {{"pid", m_pid}, {"setup_seconds", m_setup_s}, {"candidate", m_candidates}};
  if (c.language == "triton") {
    // A Triton candidate's build (Triton's JIT compile) and link gate (its kernels' provenance) are
    // decided on the GPU host: those records replace the CPU side's placeholders.
    for (const auto& s : r.stages)
      v.stages.erase(std::remove_if(v.stages.begin(), v.stages.end(), [&](const stage_record& x) { return x.id == s.id; }),
                     v.stages.end());
  }
  merge_into(r, v);
  std::stable_sort(v.stages.begin(), v.stages.end(),
                   [](const stage_record& a, const stage_record& b) { return a.id < b.id; });
  if (v.decided.stage) mark_skipped_after(v.stages, *v.decided.stage, stage_id::dynamic_check);
  if (c.language == "triton") {
    // Triton compiled on the GPU: the static SASS check reads the cubins of the warm-up now.
    if (auto st = run_static_sass_on_cubins(r.jit_cubins, *m_target, m_job.cuda_root, v); !st) return st;
    v.environment["triton_kernels"] = r.jit_kernels;
  }
  decide_target_verdict(v);
  return ok();
}

status harness_session::evaluate(gpu_candidate& c, const std::atomic<bool>* cancel) {
  if (!alive()) return make_error("the harness session is closed: " + m_closed_because);
  if (c.language == "triton" && !m_job.triton)
    return make_error("this host cannot run Triton candidates: " + m_triton_missing);
  ++m_candidates;
  job_candidate jc = make_job_candidate(*c.built, c.symbol, c.language, *c.v, *m_target, std::to_string(m_candidates));
  auto fail = [&](const std::string& why) -> status {
    std::string tail = log_tail();
    close(why, false);
    return make_error(tail.empty() ? why : fmt::format("{} ({})", why, tail));
  };
  if (auto sent = write_line(m_to, ordered_json{{"candidate", to_json(jc)}}.dump()); !sent) {
    // Say how it went (its exit status or the signal that ended it), not only that it is gone.
    pid_t pid = m_pid;
    m_pid = -1;
    auto st = reap_if_exited(pid);
    return fail(fmt::format("the harness is gone ({}; it {})", sent.err().message,
                            st ? describe_wait_status(*st) : "was still running, now " +
                                                                 describe_wait_status(stop_child(pid, SIGKILL, 0))));
  }
  // Wait in slices so a cancelled lease (worker stopping, lease lost) stops the harness promptly.
  const auto sent_at = std::chrono::steady_clock::now();
  auto deadline = sent_at + std::chrono::duration<double>(m_candidate_deadline_s);
  auto line = m_reader->read_line(0);
  while (line && line->kind == line_reader::read_kind::timeout) {
    if (cancel && *cancel) return fail("cancelled: the worker is stopping or lost its lease");
    double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    line = m_reader->read_line(std::min(left, 0.25));
  }
  if (!line) return fail(line.err().message);
  if (line->kind == line_reader::read_kind::timeout)
    return fail(fmt::format("the harness did not answer within {:g} s", m_candidate_deadline_s));
  if (line->kind == line_reader::read_kind::closed) {
    pid_t pid = m_pid;
    m_pid = -1;
    int st = stop_child(pid, SIGKILL, 0);
    return fail("the harness " + describe_wait_status(st));
  }
  auto msg = ordered_json::parse(line->line, nullptr, false);
  if (!msg.is_object() || !msg.contains("result")) {
    return fail(msg.is_object() && msg.contains("error") && msg["error"].is_string()
                    ? "the harness failed: " + msg["error"].get<std::string>()
                    : "the harness sent something other than a result");
  }
  auto r = gpu_stage_result_from_json(msg["result"]);
  if (!r) return fail(r.err().message);
  if (r->decided.outcome == eval_outcome::infra_error) return fail(r->decided.message);  // infrastructure comes as an error line, never as a result
  auto done = complete(*r, c);
  // The GPU half's wall clock as this side saw it (the stages overlap, so their seconds do not add
  // up to it): with setup_seconds, what an evaluation's wall time beyond its stages is made of.
  c.v->environment["harness_session"]["candidate_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent_at).count();
  return done;
}

}  // namespace ptxbench::eval
