#include "core/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

namespace ptxbench {
namespace fs = std::filesystem;

std::string human_bytes(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

result<std::string> read_file(const fs::path& path, std::size_t max_bytes) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return make_error(fmt::format("{}: no such file", path.string()));
  if (fs::is_directory(st)) return make_error(fmt::format("{}: is a directory, expected a file", path.string()));
  if (!fs::is_regular_file(st))
    return make_error(fmt::format("{}: is not a regular file (a FIFO, socket or device), expected a file", path.string()));
  auto size = fs::file_size(path, ec);
  if (ec) return make_error(fmt::format("{}: cannot read size: {}", path.string(), ec.message()));
  if (size > max_bytes) {
    return make_error(fmt::format("{}: file is {} bytes, over the limit of {}", path.string(), size,
                                  human_bytes(max_bytes)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Validates UTF-8 by the well-formedness table of Unicode 15, section 3.9 (no overlongs, no
// surrogates, nothing above U+10FFFF). Returns the byte offset of the first bad sequence or npos.
static std::size_t first_invalid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) { len = 3; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) { len = 3; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) { len = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) { len = 4; hi = 0x8F; }
    else return i;
    if (i + len > n) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    i += len;
  }
  return std::string::npos;
}

status check_text(const std::string& content, const std::string& what) {
  if (content.empty()) return make_error(fmt::format("{}: file is empty", what));
  if (auto nul = content.find('\0'); nul != std::string::npos)
    return make_error(fmt::format("{}: binary file (NUL byte at offset {}), expected text", what, nul));
  if (auto bad = first_invalid_utf8(content); bad != std::string::npos)
    return make_error(fmt::format("{}: binary file (invalid UTF-8 at offset {}), expected text", what, bad));
  return ok();
}

result<std::string> read_text_file(const fs::path& path, std::size_t max_bytes) {
  auto content = read_file(path, max_bytes);
  if (!content) return content.err();
  if (auto st = check_text(*content, path.string()); !st) return st.err();
  return content;
}

status write_file_atomic(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::random_device rd;
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{:x}", (static_cast<uint64_t>(rd()) << 32) | rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(fmt::format("{}: cannot create: {}", tmp.string(), std::strerror(errno)));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      fs::remove(tmp, ec);
      return make_error(fmt::format("{}: write failed: {}", tmp.string(), std::strerror(e)));
    }
    done += static_cast<std::size_t>(w);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    fs::remove(tmp, ec);
    return make_error(fmt::format("{}: rename failed: {}", path.string(), std::strerror(e)));
  }
  return ok();
}

}  // namespace ptxbench
