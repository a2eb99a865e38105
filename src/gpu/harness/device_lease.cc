#include "gpu/harness/device_lease.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace ptxbench::gpu {
namespace fs = std::filesystem;
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// A device name becomes part of a file name: keep letters, digits, '-' and '_'.
std::string file_stem(const std::string& device) {
  std::string out;
  for (char c : device) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out.empty() ? std::string("unnamed") : out;
}

}  // namespace

fs::path default_lease_dir() {
  const char* dir = std::getenv("PTXBENCH_GPU_LOCK_DIR");
  return dir && *dir ? fs::path(dir) : fs::path("/tmp/ptxbench-gpu-locks");
}

result<device_lease> device_lease::acquire(const fs::path& dir, const std::string& device, lock_mode mode, double wait_s) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);
    // Every user's harnesses share the folder (like /tmp itself): world-writable and sticky.
    if (!ec) ::chmod(dir.c_str(), 01777);
  }
  if (!fs::is_directory(dir, ec))
    return make_error(fmt::format("GPU lease folder {} cannot be created ({})", dir.string(), ec.message()));
  const std::string stem = file_stem(device);
  const fs::path lease_path = dir / (stem + ".lease"), turnstile_path = dir / (stem + ".turnstile");
  const auto t0 = std::chrono::steady_clock::now();
  auto busy = [&] {
    return make_error(fmt::format("GPU {} stayed busy for {:g} s: another PTXBench harness held it (lease {})", device,
                                  wait_s, lease_path.string()));
  };
  std::optional<file_lock> turnstile;
  {
    auto entered = file_lock::acquire(turnstile_path, wait_s);
    if (!entered) {
      if (!file_lock::held(turnstile_path) && !fs::exists(turnstile_path, ec))
        return make_error(fmt::format("GPU lease {} cannot be created in {}: {}", turnstile_path.filename().string(),
                                      dir.string(), entered.err().message));
      return busy();
    }
    // A shared holder passes through (no measurer waits behind it) and lets the next one in.
    if (mode == lock_mode::exclusive) turnstile = std::move(*entered);
  }
  double left = std::max(0.0, wait_s - ms_since(t0) / 1000);
  auto lease = file_lock::acquire(lease_path, left, mode);
  if (!lease) return busy();
  // A measurer keeps the turnstile only while it waits; holding the lease is enough from here.
  return device_lease(std::move(*lease), mode, ms_since(t0));
}

namespace {

/// This process's shared leases, per lease file: held while any stage of the process holds one
/// (stage_lease's comment says why). Taking one waits on the mutex; dropping one never does (the
/// last shared_ptr closes the lock), so a thread that ends a hold never waits for a thread that is
/// queueing for one.
struct shared_leases {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<device_lease>> held;
};

shared_leases& process_shared_leases() {
  static shared_leases leases;
  return leases;
}

}  // namespace

result<stage_lease> stage_lease::take(const fs::path& dir, const std::string& device, std::string stage, bool measuring,
                                      double wait_s, measurement_lease& record) {
  if (measuring) {
    auto lease = device_lease::acquire(dir, device, lock_mode::exclusive, wait_s);
    if (!lease) return lease.err().with_context(stage);
    double waited = lease->waited_ms();
    return stage_lease(std::make_shared<device_lease>(std::move(*lease)), waited, std::move(stage), record);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto& leases = process_shared_leases();
  std::lock_guard<std::mutex> guard(leases.mutex);
  auto& slot = leases.held[(dir / file_stem(device)).string()];
  std::shared_ptr<device_lease> held = slot.lock();
  if (!held) {
    auto lease = device_lease::acquire(dir, device, lock_mode::shared, wait_s);
    if (!lease) return lease.err().with_context(stage);
    held = std::make_shared<device_lease>(std::move(*lease));
    slot = held;
  }
  return stage_lease(std::move(held), ms_since(t0), std::move(stage), record);
}

stage_lease::stage_lease(stage_lease&& other) noexcept
    : m_lease(std::move(other.m_lease)), m_waited_ms(other.m_waited_ms), m_granted(other.m_granted),
      m_granted_wall(other.m_granted_wall), m_stage(std::move(other.m_stage)), m_record(other.m_record) {
  other.m_lease.reset();
  other.m_record = nullptr;
}

void stage_lease::release() {
  if (!m_lease) return;
  if (m_record)
    m_record->holds.push_back(
        {m_stage, m_lease->mode() == lock_mode::exclusive, m_waited_ms, ms_since(m_granted),
         std::chrono::duration<double, std::milli>(m_granted_wall.time_since_epoch()).count()});
  m_lease.reset();  // the lock is dropped here, or by the process's last shared stage
}

}  // namespace ptxbench::gpu
