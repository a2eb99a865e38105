#pragma once
// Append-only JSON Lines that survive kill -9: each record is one write() of "<json>\n" followed by
// fsync, so after a kill at any moment the file holds every record whose append returned and at most
// one torn last line (no newline). Opening for append cuts such a tail off when it is half of this
// appender's own record (a resumed job redoes that one record) and refuses any other. Readers of a
// finished file refuse a torn tail instead.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench {

struct jsonl_record {
  ordered_json value;
  int line = 0;  ///< 1-based
};

struct jsonl_contents {
  std::vector<jsonl_record> records;
  bool torn_tail = false;  ///< the last line had no newline (a kill mid-append); it is not in records
  std::string tail;        ///< that last line's text
};

/// Reads every complete line as a JSON value. Fails (naming file:line) for a line that is not JSON,
/// for binary content, or when the file is larger than max_bytes. Blank lines are not allowed.
result<jsonl_contents> read_jsonl(const std::filesystem::path& path, std::size_t max_bytes);

/// read_jsonl's rules over text already read (`name` stands for the file in errors).
result<jsonl_contents> parse_jsonl(const std::string& text, const std::string& name);

/// A finished file's records as JSON objects, from its text (e.g. read once to check its hash):
/// read_jsonl's rules, an empty text has none, and a torn last line or a record that is not an
/// object is an error naming `name`:line.
result<std::vector<ordered_json>> parse_jsonl_objects(const std::string& text, const std::string& name);

class jsonl_appender {
 public:
  /// Opens path for appending, creating it (and its folder). A torn last line is cut off first, but
  /// only when it is half of a record this appender writes: it begins like one ({"format":"<format>"
  /// or a prefix of that) and is not complete JSON. Any other last line without a newline (a file
  /// some other program wrote, a note, a trajectory) is refused: nothing is cut or appended.
  static result<std::unique_ptr<jsonl_appender>> open(const std::filesystem::path& path, const std::string& format);
  ~jsonl_appender();
  jsonl_appender(const jsonl_appender&) = delete;
  jsonl_appender& operator=(const jsonl_appender&) = delete;

  /// Appends one record durably (write + fsync). Thread-safe.
  status append(const ordered_json& record);

 private:
  jsonl_appender(int fd, std::filesystem::path path) : m_fd(fd), m_path(std::move(path)) {}
  int m_fd;
  std::filesystem::path m_path;
  std::mutex m_mutex;
};

}  // namespace ptxbench
