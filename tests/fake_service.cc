#include "fake_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "core/spawn.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace {

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

bool accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a = loopback(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback(0);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

fake_service::fake_service(const std::filesystem::path& dir, const std::vector<std::string>& extra)
    : m_port(free_loopback_port()), m_log(dir / "serve.log") {
  std::filesystem::create_directories(dir);
  std::vector<std::string> argv = {(bin_dir() / "ptxbench").string(), "--root", repo_root().string(), "--cache-dir",
                                   (dir / "cache").string(), "serve", "--listen",
                                   "127.0.0.1:" + std::to_string(m_port), "--service-dir", (dir / "service").string(),
                                   "--evaluator", "fake", "--fake-gpus", "1"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto pid = spawn_background({.argv = argv, .log = m_log});
  if (!pid) return;
  m_pid = *pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && !reap_if_exited(m_pid)) {
    if (accepts(m_port)) {
      m_ready = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

fake_service::~fake_service() {
  if (m_pid > 0) stop_child(m_pid, SIGTERM, 5000);
}

}  // namespace ptxbench::testing
