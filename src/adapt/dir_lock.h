#pragma once
// An exclusive flock on DIR/<name> held while a resumable stage writes DIR, so two runs never write
// the same rows. The kernel drops it when the process dies, so a kill -9 never leaves it stale.

#include <filesystem>
#include <memory>
#include <string>

#include "core/result.h"

namespace ptxbench::adapt {

class dir_lock {
 public:
  /// Creates DIR and takes the lock; fails when another process holds it (`who` names the command).
  static result<std::unique_ptr<dir_lock>> acquire(const std::filesystem::path& dir, const std::string& name,
                                                   const std::string& who);
  ~dir_lock();
  dir_lock(const dir_lock&) = delete;
  dir_lock& operator=(const dir_lock&) = delete;

 private:
  explicit dir_lock(int fd) : m_fd(fd) {}
  int m_fd;
};

}  // namespace ptxbench::adapt
