// No network for the candidate: every socket refused, no connection to a listener the test opened
// (TCP on 127.0.0.1 and a Unix socket), loopback included.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/violation_reporter.h"
#include "sandbox_test_support.h"

namespace ptxbench::sandbox::testing {
namespace {

// A TCP listener on 127.0.0.1 with a kernel-chosen port; connected() says whether anyone came.
class tcp_listener {
 public:
  tcp_listener() {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(m_fd, 4);
    socklen_t len = sizeof a;
    ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len);
    m_port = ntohs(a.sin_port);
  }
  ~tcp_listener() { ::close(m_fd); }
  int port() const { return m_port; }
  bool connected() const {
    int c = ::accept(m_fd, nullptr, nullptr);
    if (c >= 0) ::close(c);
    return c >= 0;
  }

 private:
  int m_fd = -1;
  int m_port = 0;
};

long connect_tcp(int s, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
}

TEST(SandboxNetwork, TcpSocketToALoopbackListenerIsTrappedAndReported) {
  sandbox_dirs d;
  tcp_listener listener;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    report(fd, s < 0 ? -1 : connect_tcp(s, listener.port()));
  });
  EXPECT_EQ(r.exit_code, violation_exit_code);
  EXPECT_EQ(r.output, "ptxbench-sandbox: attempted socket(AF_INET)\n");
  EXPECT_EQ(find_violation(r.output).value_or(""), "sandbox: attempted socket(AF_INET)");
  EXPECT_FALSE(listener.connected());
}

TEST(SandboxNetwork, ConnectWithASocketOpenedBeforeTheSandboxIsTrapped) {
  // A socket that exists before the sandbox (as the harness channel does) cannot be pointed anywhere.
  sandbox_dirs d;
  tcp_listener listener;
  int pre = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(pre, 0);
  auto r = run_sandboxed(test_policy(d), [&](int fd) { report(fd, connect_tcp(pre, listener.port())); });
  ::close(pre);
  EXPECT_EQ(r.exit_code, violation_exit_code);
  EXPECT_EQ(r.output, "ptxbench-sandbox: attempted connect\n");
  EXPECT_FALSE(listener.connected());
}

TEST(SandboxNetwork, UnixSocketCreationFailsWithEacces) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::socket(AF_UNIX, SOCK_STREAM, 0)); });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, errno_line(EACCES));
}

TEST(SandboxNetwork, ConnectToAUnixListenerIsTrapped) {
  sandbox_dirs d;
  int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::string path = (d.root / "listener.sock").string();
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  int pre = ::socket(AF_UNIX, SOCK_STREAM, 0);
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    report(fd, ::connect(pre, reinterpret_cast<const sockaddr*>(&a), sizeof a));
  });
  EXPECT_EQ(r.exit_code, violation_exit_code);
  EXPECT_EQ(r.output, "ptxbench-sandbox: attempted connect\n");
  EXPECT_LT(::accept(listener, nullptr, nullptr), 0);
  ::close(pre);
  ::close(listener);
}

class SandboxSocketFamily : public ::testing::TestWithParam<std::pair<int, const char*>> {};

TEST_P(SandboxSocketFamily, EveryNonLocalFamilyIsTrapped) {
  sandbox_dirs d;
  auto [family, name] = GetParam();
  auto r = run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::socket(family, SOCK_DGRAM, 0)); });
  EXPECT_EQ(r.exit_code, violation_exit_code);
  EXPECT_EQ(r.output, std::string("ptxbench-sandbox: attempted socket(") + name + ")\n");
}

INSTANTIATE_TEST_SUITE_P(Families, SandboxSocketFamily,
                         ::testing::Values(std::make_pair(AF_INET, "AF_INET"), std::make_pair(AF_INET6, "AF_INET6"),
                                           std::make_pair(AF_NETLINK, "AF_NETLINK"),
                                           std::make_pair(AF_PACKET, "AF_PACKET"),
                                           std::make_pair(AF_VSOCK, "family 40")));

TEST(SandboxNetwork, SocketpairFailsWithEacces) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    int sv[2];
    report(fd, ::socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, errno_line(EACCES));
}

TEST(SandboxNetwork, AnExistingConnectedSocketKeepsWorking) {
  // The harness channel is connected before the sandbox; it must keep carrying messages.
  sandbox_dirs d;
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  auto r = run_sandboxed(test_policy(d), [&](int fd) { report(fd, ::send(sv[1], "hello", 5, 0)); });
  char buf[8] = {};
  EXPECT_EQ(::recv(sv[0], buf, sizeof buf, MSG_DONTWAIT), 5);
  EXPECT_STREQ(buf, "hello");
  EXPECT_EQ(r.output, "ok\n");
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(SandboxNetwork, TheCandidateThreadSeesOnlyADownLoopback) {
  sandbox_dirs d;
  auto r = run_sandboxed(test_policy(d), [&](int fd) {
    std::ifstream dev("/proc/self/net/dev");
    std::string line, names;
    std::getline(dev, line);
    std::getline(dev, line);  // two header lines
    while (std::getline(dev, line)) names += line.substr(0, line.find(':')) + ";";
    names += "\n";
    (void)!::write(fd, names.data(), names.size());
  });
  if (::geteuid() != 0) GTEST_SKIP() << "not root: no network namespace here (" << r.output << ")";
  EXPECT_EQ(r.exit_code, 0);
  // /proc/net/dev right-aligns names.
  EXPECT_NE(r.output.find("lo;"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("eth"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), ';'), 1) << r.output;
}

TEST(SandboxNetwork, UnderAToolSocketsFailInsteadOfTrapping) {
  sandbox_dirs d;
  auto p = test_policy(d);
  p.tool = tool_mode::compute_sanitizer;
  auto r = run_sandboxed(p, [&](int fd) { report(fd, ::socket(AF_INET, SOCK_STREAM, 0)); });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, errno_line(EACCES));
}

TEST(SandboxNetwork, AuditModeLetsTheCallThrough) {
  sandbox_dirs d;
  auto p = test_policy(d);
  p.mode = enforcement::audit;
  auto r = run_sandboxed(p, [&](int fd) { report(fd, ::socket(AF_INET, SOCK_STREAM, 0)); });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "ok\n");
}

}  // namespace
}  // namespace ptxbench::sandbox::testing

namespace ptxbench::sandbox::testing {
namespace {

TEST(SandboxNetwork, ADisabledFilterIsReportedAndLetsSocketsThrough) {
  // Diagnosis only (bench/eval/sandbox_probe.sh bisects with it); shows the filter is what refuses.
  sandbox_dirs d;
  auto p = test_policy(d);
  p.disabled = {"seccomp"};
  p.required = {"no_new_privs"};
  auto r = run_sandboxed(p, [&](int fd) { report(fd, ::socket(AF_INET, SOCK_STREAM, 0)); });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "ok\n");
  p.required = {"seccomp"};
  r = run_sandboxed(p, [](int) {});
  EXPECT_EQ(r.output, "apply failed: sandbox: seccomp is required but unavailable: disabled by the policy (diagnosis "
                      "only)\n");
}

}  // namespace
}  // namespace ptxbench::sandbox::testing
