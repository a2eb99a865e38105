#pragma once
// An advisory lock (flock) on a file, exclusive or shared. The kernel releases it when the holder
// exits, even after kill -9, so a lock never goes stale: "is anyone holding it?" is the liveness test
// the build cache uses for its work folders and for builds of one key, resumable commands use to keep
// two runs out of one folder, and harnesses use to share a GPU (gpu/harness/device_lease.h). This is
// the one lock wrapper of the tree.

#include <filesystem>
#include <string>

#include "core/result.h"

namespace ptxbench {

enum class lock_mode { exclusive, shared };

class file_lock {
 public:
  /// Creates `path` if needed and takes the lock, waiting at most wait_s seconds (0: try once).
  /// The error says why not: the file cannot be opened (with the system's reason), or another
  /// holder kept it that long. The file is created readable and writable by everyone (0666,
  /// whatever the umask) so that processes of different users can share a lock such as a GPU's.
  static result<file_lock> acquire(const std::filesystem::path& path, double wait_s,
                                   lock_mode mode = lock_mode::exclusive);

  /// Creates DIR and takes an exclusive lock on DIR/name without waiting: the guard of a command
  /// that writes DIR resumably. The error says that another `who` is using DIR.
  static result<file_lock> hold_directory(const std::filesystem::path& dir, const std::string& name,
                                          const std::string& who);

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
