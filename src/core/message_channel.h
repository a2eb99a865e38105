#pragma once
// A private, message-oriented channel between the trusted harness and a candidate runner: a Unix
// SOCK_SEQPACKET socket in a 0700 folder (message boundaries for free, no stdout/stderr involved),
// carrying one JSON document per message. The listening side learns the peer's pid from the kernel
// (SO_PEERCRED), which the peer cannot forge.

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench {

class message_channel {
 public:
  message_channel() = default;
  explicit message_channel(int fd) : m_fd(fd) {}
  ~message_channel();
  message_channel(message_channel&& other) noexcept;
  message_channel& operator=(message_channel&& other) noexcept;
  message_channel(const message_channel&) = delete;
  message_channel& operator=(const message_channel&) = delete;

  /// Connects to a listening socket at path.
  static result<message_channel> connect(const std::filesystem::path& path);

  [[nodiscard]] int fd() const { return m_fd; }
  void close();

  /// Sends one JSON message. Fails if the peer is gone.
  status send(const ordered_json& message);

  enum class receive_kind { message, timeout, closed, error };
  struct received {
    receive_kind kind = receive_kind::error;
    ordered_json message;
    std::string error;
  };
  /// Waits up to timeout_s (negative: forever) for one message.
  received receive(double timeout_s);

 private:
  int m_fd = -1;
};

class message_listener {
 public:
  message_listener() = default;
  ~message_listener();
  message_listener(const message_listener&) = delete;
  message_listener& operator=(const message_listener&) = delete;

  /// Creates a private folder under parent and listens on a socket inside it.
  status listen(const std::filesystem::path& parent);
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

  struct accepted {
    message_channel channel;
    pid_t peer_pid = -1;
  };
  /// Waits up to timeout_s for a connection.
  result<accepted> accept(double timeout_s);

 private:
  int m_fd = -1;
  std::filesystem::path m_dir, m_path;
};

}  // namespace ptxbench
