#pragma once
// Server-sent events (the WHATWG event-stream format) read incrementally, as the three streaming
// APIs send them: `event:` and `data:` fields, one event per blank line, comments (`:`) ignored, data
// lines joined with "\n", CR, LF or CRLF line ends, and a line split across network reads.

#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::agent {

struct sse_event {
  std::string event;  ///< empty: the default "message"
  std::string data;
};

class sse_parser {
 public:
  /// Feeds bytes; returns the events completed by them.
  std::vector<sse_event> feed(std::string_view bytes);
  /// At the end of the stream: an event that was never closed by a blank line, when it has data.
  /// (The standard drops it; streaming APIs end with one, so it is kept here, to be judged by the
  /// wire format's own completeness check.)
  std::vector<sse_event> finish();
  /// Bytes received in total.
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

 private:
  void line(std::string_view l, std::vector<sse_event>& out);
  std::string m_partial;  ///< a line not yet ended
  sse_event m_event;
  bool m_has_data = false;
  bool m_last_was_cr = false;
  std::size_t m_bytes = 0;
};

}  // namespace ptxbench::agent
