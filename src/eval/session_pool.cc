#include "eval/session_pool.h"

#include <fmt/format.h>

namespace ptxbench::eval {

std::string session_key(const task& t, const target_info& target, const pipeline_config& config) {
  ordered_json options = to_json(config.gpu);
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", t.name, target.name, t.tol.atol, t.tol.rtol, t.correctness_trials,
                     config.cache_dir.string(), options.dump());
}

status session_pool::evaluate(const task& t, const target_info& target, const pipeline_config& config,
                              gpu_candidate& candidate, const std::atomic<bool>* cancel, bool* session_started) {
  if (session_started) *session_started = false;
  const std::string key = session_key(t, target, config);
  auto found = m_sessions.find(key);
  if (found != m_sessions.end() && !found->second.session->alive()) {
    if (m_last == found->second.session.get()) m_last = nullptr;
    m_sessions.erase(found);
    found = m_sessions.end();
  }
  if (found == m_sessions.end()) {
    while (static_cast<int>(m_sessions.size()) >= m_max) {
      auto oldest = m_sessions.begin();
      for (auto it = m_sessions.begin(); it != m_sessions.end(); ++it)
        if (it->second.last_used < oldest->second.last_used) oldest = it;
      if (m_last == oldest->second.session.get()) m_last = nullptr;
      oldest->second.session->retire();  // its harness exits before the next one starts
      m_sessions.erase(oldest);
    }
    entry e;
    e.t = std::make_unique<task>(t);
    auto started = harness_session::start(*e.t, target, config);
    if (!started) return started.err().with_context("starting the GPU harness");
    e.session = std::move(*started);
    found = m_sessions.emplace(key, std::move(e)).first;
    if (session_started) *session_started = true;
  }
  found->second.last_used = ++m_clock;
  m_last = found->second.session.get();
  return found->second.session->evaluate(candidate, cancel);
}

}  // namespace ptxbench::eval
