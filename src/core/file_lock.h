#pragma once
// An exclusive advisory lock (flock) on a file. The kernel releases it when the holder exits, even
// after kill -9, so a lock never goes stale: "is anyone holding it?" is the liveness test the build
// cache uses for its work folders and for builds of one key.

#include <filesystem>
#include <optional>

namespace ptxbench {

class file_lock {
 public:
  /// Creates `path` if needed and takes the lock, waiting at most wait_s seconds (0: try once).
  /// nullopt when it stayed held that long or the file cannot be created.
  static std::optional<file_lock> acquire(const std::filesystem::path& path, double wait_s);

  /// True when some open file holds a lock on the existing file `path`; false when nobody does or
  /// the file does not exist. Never creates the file.
  static bool held(const std::filesystem::path& path);

  file_lock(file_lock&& other) noexcept;
  file_lock& operator=(file_lock&& other) noexcept;
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  ~file_lock();

 private:
  explicit file_lock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

}  // namespace ptxbench
