#pragma once
// Exclusive measurement per physical GPU. Every harness on a host — started by `ptxbench eval`, by
// the agent's evaluator or by a GPU worker of the service — takes this lease whenever it uses a GPU:
// shared for work whose result does not depend on having the GPU alone (setting a task up, sanitize,
// correctness), exclusive for work whose numbers do (timing, the dynamic check's profiled call).
// Measuring therefore never overlaps any other PTXBench work on that device (and two Nsight Compute
// sessions never meet on it), while the non-measuring stages of several harnesses overlap freely.
//
// The lease is two flock files per device in a folder every process on the host shares
// (core/file_lock.h; the kernel drops a dead holder's locks, kill -9 included, so a lease never goes
// stale): the lease itself, held shared or exclusive, and a turnstile that a waiting measurer holds
// while it waits, so that a stream of shared holders cannot starve it — a shared holder passes the
// turnstile only when no measurer is waiting. The device is named by its UUID, so two processes that
// see one GPU under different indices (CUDA_VISIBLE_DEVICES) still share one lease.

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/file_lock.h"
#include "core/result.h"
#include "verdict/verdict.h"

namespace ptxbench::gpu {

/// Where the leases of a host's GPUs live: $PTXBENCH_GPU_LOCK_DIR, else /tmp/ptxbench-gpu-locks.
std::filesystem::path default_lease_dir();

class device_lease {
 public:
  /// Takes the lease on `device` (a stable name such as "GPU-<uuid>") in `dir`, waiting at most
  /// wait_s seconds. An error says the folder is unusable or the GPU stayed busy that long.
  static result<device_lease> acquire(const std::filesystem::path& dir, const std::string& device, lock_mode mode,
                                      double wait_s);

  [[nodiscard]] lock_mode mode() const { return m_mode; }
  [[nodiscard]] double waited_ms() const { return m_waited_ms; }

 private:
  device_lease(file_lock lease, lock_mode mode, double waited_ms)
      : m_lease(std::move(lease)), m_mode(mode), m_waited_ms(waited_ms) {}
  file_lock m_lease;
  lock_mode m_mode;
  double m_waited_ms;
};

/// A stage's hold on the lease: released (and recorded in `record` as a lease_hold of `stage`)
/// when it goes out of scope or release() is called, whichever comes first.
///
/// Shared stage holds of one process share one shared lease: the first takes it (through the
/// turnstile), a stage that starts while another of this process holds it joins that hold, and the
/// last to end drops it. A harness asks for a second shared hold while it holds one (correctness
/// while its memory check runs, the profiled runner's start-up beside both); had the second gone
/// through the turnstile, it could wait behind a measurer of another harness that itself waits for
/// the first hold to end, which only this harness's blocked thread would end: a cycle broken only
/// by the lease timeout (session 8: four GPU workers on one GPU did not finish).
class stage_lease {
 public:
  /// Takes the lease for `stage`, exclusive when `measuring`.
  static result<stage_lease> take(const std::filesystem::path& dir, const std::string& device, std::string stage,
                                  bool measuring, double wait_s, measurement_lease& record);
  stage_lease(stage_lease&& other) noexcept;
  stage_lease& operator=(stage_lease&&) = delete;
  stage_lease(const stage_lease&) = delete;
  ~stage_lease() { release(); }
  void release();

 private:
  stage_lease(std::shared_ptr<device_lease> lease, double waited_ms, std::string stage, measurement_lease& record)
      : m_lease(std::move(lease)), m_waited_ms(waited_ms), m_granted(std::chrono::steady_clock::now()),
        m_granted_wall(std::chrono::system_clock::now()), m_stage(std::move(stage)), m_record(&record) {}
  std::shared_ptr<device_lease> m_lease;  ///< exclusive: this stage's own; shared: the process's
  double m_waited_ms;
  std::chrono::steady_clock::time_point m_granted;      ///< for the hold's length
  std::chrono::system_clock::time_point m_granted_wall;  ///< for lease_hold::granted_unix_ms
  std::string m_stage;
  measurement_lease* m_record;
};

}  // namespace ptxbench::gpu
