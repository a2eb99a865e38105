#include "core/jsonl_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/file_io.h"

namespace ptxbench {
namespace fs = std::filesystem;

namespace {

status fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("{}: cannot open folder: {}", dir.string(), std::strerror(errno)));
  ::fsync(fd);
  ::close(fd);
  return ok();
}

}  // namespace

result<jsonl_contents> parse_jsonl(const std::string& text, const std::string& name) {
  if (text.empty()) return make_error(fmt::format("{}: empty file", name));
  // Only the complete lines must be text: a kill can cut the last line inside a UTF-8 sequence.
  std::size_t last_nl = text.rfind('\n');
  std::size_t complete = last_nl == std::string::npos ? 0 : last_nl + 1;
  const std::string& checked = complete > 0 ? text.substr(0, complete) : text;
  if (auto st = check_text(checked, name); !st) return st.err();
  if (text.find('\0', complete) != std::string::npos)
    return make_error(fmt::format("{}: binary file (NUL byte), expected JSON lines", name));
  jsonl_contents out;
  out.torn_tail = complete < text.size();
  if (out.torn_tail) out.tail = text.substr(complete);
  std::size_t pos = 0;
  int line = 0;
  while (pos < complete) {
    ++line;
    std::size_t eol = text.find('\n', pos);
    std::string body = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (body.find_first_not_of(" \t\r") == std::string::npos)
      return make_error(fmt::format("{}:{}: blank line (expected one JSON object per line)", name, line));
    auto j = parse_json(body, fmt::format("{}:{}", name, line));
    if (!j) return j.err();
    out.records.push_back({std::move(*j), line});
  }
  return out;
}

result<jsonl_contents> read_jsonl(const fs::path& path, std::size_t max_bytes) {
  auto text = read_file(path, max_bytes);
  if (!text) return text.err();
  return parse_jsonl(*text, path.string());
}

result<std::vector<ordered_json>> parse_jsonl_objects(const std::string& text, const std::string& name) {
  if (text.empty()) return std::vector<ordered_json>{};
  auto contents = parse_jsonl(text, name);
  if (!contents) return contents.err();
  if (contents->torn_tail)
    return make_error(fmt::format("{}:{}: the last line is cut off (written by a process that was killed?)", name,
                                  contents->records.size() + 1));
  std::vector<ordered_json> rows;
  for (auto& r : contents->records) {
    if (!r.value.is_object()) return make_error(fmt::format("{}:{}: not a JSON object", name, r.line));
    rows.push_back(std::move(r.value));
  }
  return rows;
}

namespace {

// Is `tail` (a last line without its newline) half of a record that starts {"format":"<format>"?
// The record's own beginning, or any prefix of it, and not a complete JSON value: a whole object
// without its newline was written by something else.
bool half_a_record(const std::string& tail, const std::string& format) {
  const std::string start = ordered_json({{"format", format}}).dump();  // {"format":"..."}
  const std::string head = start.substr(0, start.size() - 1);           // without the closing brace
  // Compared without blanks, so a record written with spaces ({"format": "...") counts too.
  std::string compact;
  for (char c : tail.substr(0, 4 * head.size()))
    if (c != ' ' && c != '\t' && c != '\r') compact += c;
  bool begins = compact.size() <= head.size() ? head.compare(0, compact.size(), compact) == 0
                                              : compact.compare(0, head.size(), head) == 0;
  return begins && ordered_json::parse(tail, nullptr, false).is_discarded();
}

}  // namespace

result<std::unique_ptr<jsonl_appender>> jsonl_appender::open(const fs::path& path, const std::string& format) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  bool existed = fs::exists(path, ec);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(fmt::format("{}: cannot open for appending: {}", path.string(), std::strerror(errno)));
  // Cut a torn tail: everything after the last newline is half a record.
  off_t size = ::lseek(fd, 0, SEEK_END);
  off_t keep = size;
  char c = 0;
  while (keep > 0) {
    if (::pread(fd, &c, 1, keep - 1) != 1) break;
    if (c == '\n') break;
    --keep;
  }
  if (keep != size) {
    std::string tail(static_cast<std::size_t>(size - keep), '\0');
    if (::pread(fd, tail.data(), tail.size(), keep) != static_cast<ssize_t>(tail.size()) || !half_a_record(tail, format)) {
      ::close(fd);
      return make_error(fmt::format("{}: its last line ({} bytes) has no newline and is not a half-written {} record; "
                                    "not touching a file this command did not write (choose another file)",
                                    path.string(), tail.size(), format));
    }
    if (::ftruncate(fd, keep) != 0 || ::fsync(fd) != 0) {
      ::close(fd);
      return make_error(fmt::format("{}: cannot cut the incomplete last line: {}", path.string(), std::strerror(errno)));
    }
  }
  if (::lseek(fd, 0, SEEK_END) < 0) {
    ::close(fd);
    return make_error(fmt::format("{}: {}", path.string(), std::strerror(errno)));
  }
  if (!existed)
    if (auto st = fsync_dir(path.parent_path()); !st) {
      ::close(fd);
      return st.err();
    }
  return std::unique_ptr<jsonl_appender>(new jsonl_appender(fd, path));
}

jsonl_appender::~jsonl_appender() { ::close(m_fd); }

status jsonl_appender::append(const ordered_json& record) {
  std::string line = record.dump() + "\n";  // dump() escapes newlines inside strings: one record, one line
  std::lock_guard lock(m_mutex);
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(m_fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(fmt::format("{}: write failed: {}", m_path.string(), std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(m_fd) != 0) return make_error(fmt::format("{}: fsync failed: {}", m_path.string(), std::strerror(errno)));
  return ok();
}

}  // namespace ptxbench
