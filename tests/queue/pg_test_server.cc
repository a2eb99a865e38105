#include "pg_test_server.h"

#include "child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <libpq-fe.h>

namespace ptxbench::testing {
namespace fs = std::filesystem;
namespace {

/// PTXBENCH_PG_BIN, else PostgreSQL 15's Debian location, else the newest installed major version.
fs::path find_pg_bin() {
  if (const char* env = std::getenv("PTXBENCH_PG_BIN"); env && *env) return env;
  fs::path root = "/usr/lib/postgresql";
  if (fs::exists(root / "15" / "bin")) return root / "15" / "bin";
  fs::path best = root / "15" / "bin";
  int best_major = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    int major = std::atoi(e.path().filename().c_str());
    if (major > best_major && fs::exists(e.path() / "bin" / "postgres")) {
      best_major = major;
      best = e.path() / "bin";
    }
  }
  return best;
}
const fs::path pg_bin = find_pg_bin();

struct account {
  uid_t uid;
  gid_t gid;
  bool switch_user;
};

result<account> server_account() {
  if (geteuid() != 0) return account{getuid(), getgid(), false};
  const passwd* pw = getpwnam("postgres");
  if (!pw) return make_error("running as root and there is no 'postgres' user to run PostgreSQL as");
  return account{pw->pw_uid, pw->pw_gid, true};
}

pid_t spawn(const account& who, const std::vector<std::string>& argv, const fs::path& log, bool new_group) {
  std::optional<run_as_user> as;
  if (who.switch_user) as = run_as_user{who.uid, who.gid};
  return spawn_process(argv, log, new_group, as);
}

void chown_tree(const fs::path& root, const account& who) {
  if (!who.switch_user) return;
  (void)lchown(root.c_str(), who.uid, who.gid);
  for (const auto& e : fs::recursive_directory_iterator(root)) (void)lchown(e.path().c_str(), who.uid, who.gid);
}

std::string tail_of(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return text.size() > 600 ? text.substr(text.size() - 600) : text;
}

/// initdb once into a shared template (under a lock); returns the template's data directory.
result<fs::path> template_data(const account& who) {
  // One template per PostgreSQL installation and user (a data directory only fits its own major version).
  fs::path base = fs::temp_directory_path() /
                  fmt::format("ptxbench-pg-template-{}-{:x}", geteuid(), std::hash<std::string>{}(pg_bin.string()));
  fs::path lock_file = base.string() + ".lock";
  int lock = open(lock_file.c_str(), O_RDWR | O_CREAT, 0644);
  if (lock < 0) return make_error("cannot open " + lock_file.string());
  flock(lock, LOCK_EX);
  fs::path data = base / "data", ready = base / "ready";
  status out = ok();
  if (!fs::exists(ready)) {
    std::error_code ec;
    fs::remove_all(base, ec);
    fs::create_directories(base);
    chown_tree(base, who);
    fs::path log = base / "initdb.log";
    pid_t pid = spawn(who, {(pg_bin / "initdb").string(), "-D", data.string(), "-U", "ptxbench", "--auth=trust",
                            "-E", "UTF8", "--no-sync", "--no-instructions"},
                      log, false);
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) std::ofstream(ready) << "ok\n";
    else out = make_error("initdb failed: " + tail_of(log));
  }
  flock(lock, LOCK_UN);
  close(lock);
  if (!out) return out.err();
  return data;
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

bool gone(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() && line[close_paren + 2] == 'Z';
}

}  // namespace

std::optional<std::string> pg_unavailable_reason() {
  for (const char* tool : {"initdb", "postgres"})
    if (access((pg_bin / tool).c_str(), X_OK) != 0)
      return fmt::format("PostgreSQL is not installed ({} missing; apt-get install postgresql-15, or set "
                         "PTXBENCH_PG_BIN to its bin directory)",
                         (pg_bin / tool).string());
  auto who = server_account();
  if (!who) return who.err().message;
  return std::nullopt;
}

result<std::unique_ptr<pg_test_server>> pg_test_server::start() {
  if (auto reason = pg_unavailable_reason()) return make_error(*reason);
  auto who = server_account();
  auto tmpl = template_data(*who);
  if (!tmpl) return tmpl.err();
  std::string pattern = (fs::temp_directory_path() / "ptxbench-pg-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return make_error("mkdtemp failed");
  fs::path dir = pattern;
  fs::copy(*tmpl, dir / "data", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::permissions(dir, fs::perms::owner_all);
  fs::permissions(dir / "data", fs::perms::owner_all);
  chown_tree(dir, *who);
  std::unique_ptr<pg_test_server> server(new pg_test_server(dir, free_port()));
  if (auto s = server->launch(); !s) return s.err();
  return server;
}

status pg_test_server::launch() {
  auto who = server_account();
  if (!who) return who.err();
  fs::path log = m_dir / "server.log";
  m_pid = spawn(*who,
                {(pg_bin / "postgres").string(), "-D", (m_dir / "data").string(), "-p", std::to_string(m_port), "-k",
                 m_dir.string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"},
                log, true);
  std::string conninfo = fmt::format("host=127.0.0.1 port={} user=ptxbench dbname=postgres connect_timeout=2", m_port);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PQping(conninfo.c_str()) == PQPING_OK) return ok();
    int st = 0;
    if (waitpid(m_pid, &st, WNOHANG) == m_pid) {
      m_pid = -1;
      return make_error("postgres exited during start: " + tail_of(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return make_error("postgres did not accept connections within 30 s: " + tail_of(log));
}

std::string pg_test_server::url(const std::string& database) const {
  return fmt::format("postgresql://ptxbench@127.0.0.1:{}/{}", m_port, database);
}

result<std::string> pg_test_server::create_database(const std::string& name) {
  PGconn* conn = PQconnectdb(url().c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    PQfinish(conn);
    return make_error("cannot connect to the test server: " + msg);
  }
  PGresult* res = PQexec(conn, ("CREATE DATABASE " + name).c_str());
  bool created = PQresultStatus(res) == PGRES_COMMAND_OK;
  std::string msg = PQresultErrorMessage(res);
  PQclear(res);
  PQfinish(conn);
  if (!created) return make_error("CREATE DATABASE " + name + ": " + msg);
  return url(name);
}

void pg_test_server::kill_hard() {
  if (m_pid <= 0) return;
  auto children = children_of(m_pid);
  kill(m_pid, SIGKILL);
  for (pid_t c : children) kill(c, SIGKILL);
  waitpid(m_pid, nullptr, 0);
  m_pid = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (pid_t c : children)
    while (!gone(c) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

status pg_test_server::restart() {
  kill_hard();
  // A backend forked just as the postmaster was killed can hold the old shared memory for a moment
  // (it exits when it notices its postmaster is gone); the start then fails and is tried again.
  status out = ok();
  for (int attempt = 0; attempt < 5; ++attempt) {
    out = launch();
    if (out) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return out;
}

pg_test_server::~pg_test_server() {
  if (m_pid > 0) {
    kill(m_pid, SIGQUIT);  // immediate shutdown: the postmaster stops its backends and exits
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(m_pid, nullptr, WNOHANG) == m_pid) {
        m_pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill_hard();
  }
  std::error_code ec;
  fs::remove_all(m_dir, ec);
}

}  // namespace ptxbench::testing
