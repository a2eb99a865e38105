// A stand-in for ptxbench-runner without CUDA, for the CPU tests of runner_client
// (runner_client_test.cc): it speaks the runner's protocol (src/gpu/runner/runner_main.cc) over the
// socket and, with --sync-fd, on the shared go/done page. What it does on a call is chosen by the
// "symbol" of the setup message:
//   work_<N>ms     sleeps N ms ("the GPU work"), then says done
//   forge_<N>ms    writes "done" on the page at once (a forged early done), then sleeps N ms and says
//                  done again (the runner's own), with a "forged" marker in its message
//   die            exits during the call without answering
//   error          answers the call with an error message and exits (a CUDA failure)
//   stale          sends a done message of an old nonce before each "prepared", then works 1 ms
//   no_page        like work_1ms, but ignores --sync-fd (ready says "sync": false)
//   warmup_<N>ms   sleeps N ms in the first non-noop "prepare" (the Triton runner's warm-up, where
//                  Triton compiles), then works 1 ms per call
//   linger_<N>ms   like work_1ms, but takes N ms to exit after "shutdown" (a slow teardown)
// Whatever the symbol, it creates <scratch>/setup-received when "setup" arrives.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/message_channel.h"
#include "core/sync_channel.h"

using namespace ptxbench;

namespace {

int parse_ms(const std::string& symbol, const std::string& prefix) {
  return std::atoi(symbol.substr(prefix.size()).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path, token;
  int sync_fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--connect") socket_path = argv[i + 1];
    else if (k == "--token") token = argv[i + 1];
    else if (k == "--sync-fd") sync_fd = std::atoi(argv[i + 1]);
  }
  auto ch = message_channel::connect(socket_path);
  if (!ch) return 3;
  (void)ch->send({{"type", "hello"}, {"token", token}, {"pid", ::getpid()}});
  sync_channel page;
  std::string symbol;
  bool warmed_up = false;
  while (true) {
    auto r = ch->receive(-1);
    if (r.kind != message_channel::receive_kind::message) return 0;
    const auto& m = r.message;
    std::string type = m.value("type", "");
    if (type == "setup") {
      symbol = m.value("symbol", "");
      // A mark the tests look for: setup arrived (runner_launch::before_setup ran before it).
      if (FILE* f = std::fopen((m.value("scratch", std::string(".")) + "/setup-received").c_str(), "w")) std::fclose(f);
      if (sync_fd >= 0 && symbol != "no_page") {
        auto p = sync_channel::attach(sync_fd);
        if (p) page = std::move(*p);
      }
      (void)ch->send({{"type", "ready"}, {"pid", ::getpid()}, {"cupti", false}, {"audit", false},
                      {"audit_error", "fake runner"}, {"sync", page.valid()}, {"sandbox", nullptr}});
    } else if (type == "prepare") {
      int64_t nonce = m.value("nonce", int64_t{-1});
      bool sync = m.value("sync", false) && page.valid();
      if (symbol == "stale") (void)ch->send({{"type", "done"}, {"nonce", nonce - 1}, {"ok", false}, {"error", "stale"}});
      if (symbol.rfind("warmup_", 0) == 0 && !m.value("noop", false) && !warmed_up) {
        ::usleep(parse_ms(symbol, "warmup_") * 1000);
        warmed_up = true;
      }
      (void)ch->send({{"type", "prepared"}, {"nonce", nonce}});
      if (sync) {
        if (page.wait_go(static_cast<uint32_t>(nonce), {.liveness_fd = ch->fd()}) != sync_channel::wait_result::signalled)
          return 0;
      } else {
        auto go = ch->receive(-1);
        if (go.kind != message_channel::receive_kind::message || go.message.value("type", "") != "go") return 0;
      }
      std::string note = "ok";
      if (symbol == "die") _exit(7);
      if (symbol == "error") {
        (void)ch->send({{"type", "error"}, {"nonce", nonce}, {"error", "CUDA error: an illegal memory access"}, {"phase", "run"}});
        _exit(3);
      }
      if (symbol.rfind("work_", 0) == 0) ::usleep(parse_ms(symbol, "work_") * 1000);
      if (symbol == "stale" || symbol == "no_page" || symbol.rfind("warmup_", 0) == 0 ||
          symbol.rfind("linger_", 0) == 0)
        ::usleep(1000);
      if (symbol.rfind("forge_", 0) == 0) {
        if (sync) page.signal_done(static_cast<uint32_t>(nonce));  // the candidate's forgery
        ::usleep(parse_ms(symbol, "forge_") * 1000);
        note = "forged";
      }
      if (sync) page.signal_done(static_cast<uint32_t>(nonce));
      (void)ch->send({{"type", "done"}, {"nonce", nonce}, {"ok", true}, {"method", "none"}, {"note", note}});
    } else if (type == "shutdown") {
      if (symbol.rfind("linger_", 0) == 0) ::usleep(parse_ms(symbol, "linger_") * 1000);
      return 0;
    }
  }
}
