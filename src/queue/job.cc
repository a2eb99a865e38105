#include "queue/job.h"

#include <array>
#include <chrono>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/sha256.h"

namespace ptxbench::queue {
namespace {

template <typename E, std::size_t N>
result<E> parse_name(std::string_view text, const std::array<std::pair<E, std::string_view>, N>& names,
                     std::string_view what) {
  std::string expected;
  for (const auto& [value, name] : names) {
    if (name == text) return value;
    expected += expected.empty() ? std::string(name) : ", " + std::string(name);
  }
  return make_error(fmt::format("unknown {} '{}' (expected one of: {})", what, text, expected));
}

constexpr std::array<std::pair<job_kind, std::string_view>, 4> kind_names{{{job_kind::evaluate, "evaluate"},
                                                                          {job_kind::sanitize, "sanitize"},
                                                                          {job_kind::profile, "profile"},
                                                                          {job_kind::debug, "debug"}}};
constexpr std::array<std::pair<job_state, std::string_view>, 6> state_names{{{job_state::queued, "queued"},
                                                                             {job_state::compiling, "compiling"},
                                                                             {job_state::compiled, "compiled"},
                                                                             {job_state::running, "running"},
                                                                             {job_state::done, "done"},
                                                                             {job_state::failed, "failed"}}};
constexpr std::array<std::pair<worker_role, std::string_view>, 2> role_names{
    {{worker_role::cpu, "cpu"}, {worker_role::gpu, "gpu"}}};
constexpr std::array<std::pair<failure_kind, std::string_view>, 5> failure_names{{{failure_kind::none, ""},
                                                                                 {failure_kind::infra, "infra"},
                                                                                 {failure_kind::poison_pill, "poison_pill"},
                                                                                 {failure_kind::no_workloads, "no_workloads"},
                                                                                 {failure_kind::unserved, "unserved"}}};

template <typename E, std::size_t N>
std::string_view name_of(E value, const std::array<std::pair<E, std::string_view>, N>& names) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

}  // namespace

std::string_view to_string(job_kind k) { return name_of(k, kind_names); }
std::string_view to_string(job_state s) { return name_of(s, state_names); }
std::string_view to_string(worker_role r) { return name_of(r, role_names); }
std::string_view to_string(failure_kind f) { return name_of(f, failure_names); }
result<job_kind> parse_job_kind(std::string_view text) { return parse_name(text, kind_names, "job kind"); }
result<job_state> parse_job_state(std::string_view text) { return parse_name(text, state_names, "job state"); }
result<worker_role> parse_worker_role(std::string_view text) { return parse_name(text, role_names, "worker role"); }
result<failure_kind> parse_failure_kind(std::string_view text) {
  return parse_name(text, failure_names, "failure kind");
}

bool is_leased(job_state s) { return s == job_state::compiling || s == job_state::running; }
bool is_terminal(job_state s) { return s == job_state::done || s == job_state::failed; }

std::string environment_json(const run_environment& env) {
  nlohmann::ordered_json j;
  j["gpu_model"] = env.gpu_model;
  j["driver"] = env.driver;
  j["cuda"] = env.cuda;
  j["cublaslt"] = env.cublaslt;
  j["cudnn"] = env.cudnn;
  j["ptxbench"] = env.ptxbench;
  return j.dump();
}

std::string environment_key(const run_environment& env) {
  return sha256_builder().update("ptxbench-environment/1").update(environment_json(env)).hex_digest();
}

int64_t wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace ptxbench::queue
