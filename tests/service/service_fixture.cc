#include "service_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "service/environment.h"
#include "service/job_runner.h"
#include "queue/open_store.h"
#include "queue/worker_loop.h"
#include "test_support.h"

namespace ptxbench::testing {
namespace fs = std::filesystem;

const suite& test_suite() {
  static suite s = *load_suite(repo_root() / "suite");
  return s;
}

ordered_json gemm_solution(const std::string& code, const std::string& name) {
  return {{"name", name},
          {"definition", "gemm_n7168_k5120"},
          {"author", "test"},
          {"spec", {{"language", "cuda"}, {"target_hardware", {"H200"}}, {"entry_point", "kernel.cu::run"}}},
          {"sources", {{{"path", "kernel.cu"}, {"content", code}}}}};
}

std::string raw_exchange(int port, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "";
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  // Until the server closes, or one whole response (headers and Content-Length bytes) is in.
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
    out.append(buf, static_cast<std::size_t>(n));
    auto end = out.find("\r\n\r\n");
    auto length = out.find("Content-Length: ");
    if (end != std::string::npos && length != std::string::npos && length < end &&
        out.size() >= end + 4 + std::stoul(out.substr(length + 16)))
      break;
  }
  ::close(fd);
  return out;
}

namespace {
queue::store_options fast_options() {
  queue::store_options o;
  o.poll_interval_ms = 10;
  o.reap_interval_ms = 50;
  o.policy.backoff_base_ms = 20;
  o.policy.backoff_max_ms = 100;
  return o;
}
}  // namespace

in_process_service::in_process_service(const std::string& token, int cpu_workers, int gpu_workers, std::size_t max_body)
    : in_process_service(service_setup{token, cpu_workers, gpu_workers, max_body}) {}

in_process_service::in_process_service(const service_setup& setup) {
  const std::string& token = setup.token;
  const int cpu_workers = setup.cpu_workers, gpu_workers = setup.gpu_workers;
  m_dir = make_temp_dir("serve-api");
  const std::string queue = (m_dir / "queue").string() + "/";
  m_store = queue::open_job_store(queue, fast_options()).value();
  auto pool = service::store_pool::open([&] { return queue::open_job_store(queue, fast_options()); }, 2);
  service::server_settings s;
  s.port = 0;
  s.token = token;
  s.max_body_bytes = setup.max_body;
  s.threads = 16;
  s.reap_interval_ms = 50;
  s.unserved_after_ms = setup.unserved_after_ms;
  s.api.default_target = setup.default_target;
  auto server = service::http_server::create(s, test_suite(), std::move(*pool), queue::open_job_store(queue, fast_options()).value());
  EXPECT_TRUE(server) << (server ? "" : server.err().message);
  m_server = std::move(*server);
  m_serving = std::thread([this] { m_server->run(); });
  for (int i = 0; i < cpu_workers + gpu_workers; ++i)
    m_workers.emplace_back([this, queue, i, cpu_workers, targets = setup.gpu_targets] {
      auto store = queue::open_job_store(queue, fast_options());
      if (!store) return;
      bool cpu = i < cpu_workers;
      queue::worker_config wc;
      wc.id = fmt::format("{}-{}", cpu ? "cpu" : "gpu", i);
      wc.role = cpu ? queue::worker_role::cpu : queue::worker_role::gpu;
      wc.targets = targets;
      wc.lease_ms = 2000;
      wc.idle_wait_ms = 50;
      auto env = cpu ? service::fake_cpu_environment() : service::fake_gpu_environment();
      wc.info_json = ordered_json{{"device", cpu ? "cpu" : "cuda:0"}, {"environment", service::to_json(env)}}.dump();
      (void)queue::run_worker(**store, wc, service::fake_callbacks(test_suite(), {}), m_stop);
    });
}

in_process_service::~in_process_service() {
  m_stop = true;
  for (auto& t : m_workers) t.join();
  m_server->stop();
  m_serving.join();
  m_server.reset();
  m_store.reset();
  std::error_code ec;
  fs::remove_all(m_dir, ec);
}

std::unique_ptr<service::service_client> in_process_service::client(const std::string& token) {
  service::client_settings cs;
  cs.url = url();
  cs.token = token;
  cs.retry_for_s = 5;
  return service::service_client::create(cs).value();
}

int64_t in_process_service::jobs_in_queue() {
  auto st = m_store->stats();
  EXPECT_TRUE(st);
  int64_t n = 0;
  if (st)
    for (const auto& [state, count] : st->depth) n += count;
  return n;
}

}  // namespace ptxbench::testing
