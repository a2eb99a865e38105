#include "agent/sse.h"

namespace ptxbench::agent {

void sse_parser::line(std::string_view l, std::vector<sse_event>& out) {
  if (l.empty()) {  // dispatch
    if (m_has_data || !m_event.event.empty()) out.push_back(std::move(m_event));
    m_event = {};
    m_has_data = false;
    return;
  }
  if (l.front() == ':') return;
  auto colon = l.find(':');
  std::string_view field = l.substr(0, colon), value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (m_has_data) m_event.data += '\n';
    m_event.data += value;
    m_has_data = true;
  } else if (field == "event") {
    m_event.event = std::string(value);
  }  // id, retry and unknown fields do not matter here
}

std::vector<sse_event> sse_parser::feed(std::string_view bytes) {
  std::vector<sse_event> out;
  m_bytes += bytes.size();
  for (char c : bytes) {
    if (c == '\n') {
      if (m_last_was_cr) {  // the LF of a CRLF: the line was already ended by its CR
        m_last_was_cr = false;
        continue;
      }
      line(m_partial, out);
      m_partial.clear();
    } else if (c == '\r') {
      line(m_partial, out);
      m_partial.clear();
      m_last_was_cr = true;
      continue;
    } else {
      m_partial.push_back(c);
    }
    m_last_was_cr = false;
  }
  return out;
}

std::vector<sse_event> sse_parser::finish() {
  std::vector<sse_event> out;
  if (!m_partial.empty()) {
    line(m_partial, out);
    m_partial.clear();
  }
  if (m_has_data) out.push_back(std::move(m_event));
  m_event = {};
  m_has_data = false;
  return out;
}

}  // namespace ptxbench::agent
