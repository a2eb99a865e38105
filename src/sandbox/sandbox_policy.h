#pragma once
// What the sandbox of one candidate process allows: the only writable folder, what may be read,
// resource limits, and how strict the process-level filters are. The harness fills it in (it knows
// the scratch folder, the candidate's shared object and the CUDA installation) and sends it to the
// runner, which applies it before the candidate's code is loaded. See docs/sandbox.md.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ptxbench::sandbox {

/// Whether a violation is refused or only recorded. Audit is a diagnostic for a new GPU host or tool
/// version: every system call the filter would refuse goes through and the kernel logs it (seccomp's
/// SECCOMP_RET_LOG, visible in `dmesg` as `audit: type=1326 ... syscall=N`). Landlock has no
/// log-only mode; in audit mode it still refuses, and kernels with Landlock ABI >= 7 log each
/// refusal (`type=1423`). Never used for an evaluation.
enum class enforcement { enforce, audit };

/// The tool the runner runs under, if any. The tools inject a library into the runner that talks to
/// their front-end process, so some rules are relaxed there (docs/sandbox.md, "Under the tools").
enum class tool_mode { none, compute_sanitizer, nsight_compute };

struct resource_limits {
  uint64_t open_files = 1024;                ///< RLIMIT_NOFILE (raised to what is already open + 64 when lower)
  uint64_t file_size_bytes = 256ull << 20;   ///< RLIMIT_FSIZE: also caps the runner's log (its stdout)
  bool no_core_dumps = true;                 ///< RLIMIT_CORE = 0
  /// RLIMIT_CPU in seconds of CPU time (0: not set). For a process that only computes, such as the
  /// trusted Triton recompile; the runner's calls have the harness's deadlines instead.
  uint64_t cpu_seconds = 0;
  /// RLIMIT_DATA in bytes (0: not set): the process's writable private memory (heap, anonymous
  /// mappings). Not RLIMIT_AS, which would count the CUDA driver's large PROT_NONE reservations.
  uint64_t data_bytes = 0;
};

struct sandbox_policy {
  enforcement mode = enforcement::enforce;
  tool_mode tool = tool_mode::none;

  /// The only folder the candidate may create, write, rename or delete files in. Must exist.
  std::filesystem::path scratch_dir;
  /// Read-only (and, for shared objects, mappable) paths; a folder grants everything beneath it.
  /// Paths that do not exist are skipped and listed in the report.
  std::vector<std::filesystem::path> read_paths;
  /// Devices the CUDA driver opens read-write and controls with ioctl (/dev/nvidia*, found at apply
  /// time when empty).
  std::vector<std::filesystem::path> device_paths;
  /// Further writable folders, for a tool that needs one (empty by default; each is listed in the
  /// report as a weakening).
  std::vector<std::filesystem::path> extra_write_paths;

  bool allow_network = false;  ///< never true for a candidate; exists so the tests can show the difference
  resource_limits limits;

  /// Where the violation handler writes its one-line message ("ptxbench-sandbox: attempted execve"):
  /// a file descriptor the harness reads (the runner's stderr, which is the runner's log).
  int violation_fd = 2;

  /// Which protections must be active; apply_sandbox() fails (and the runner must not load the
  /// candidate) when one of these is unavailable. Names as in the report: "no_new_privs",
  /// "seccomp", "landlock", "network_namespace", "capabilities", "rlimits".
  std::vector<std::string> required = {"no_new_privs", "seccomp", "rlimits"};

  /// Protections switched off on purpose, to find which one a GPU host or tool trips over
  /// (bench/eval/sandbox_probe.sh): "seccomp", "landlock", "network_namespace", "capabilities".
  /// Never for an evaluation; the report lists each as off and as a weakening.
  std::vector<std::string> disabled;
};

/// The read paths a CUDA runner needs after its context exists: the candidate's shared object, the
/// system and CUDA libraries (/usr, /lib, /lib64, /etc for ld.so.cache, /opt, cuda_root),
/// /proc/self (as /proc/<pid>), the runner's own binary (/proc/self/exe), /proc/driver/nvidia, and
/// /sys (the driver reads PCI and NUMA data).
/// Found by reading the CUDA driver's file accesses; bench/eval/sandbox_probe.sh re-checks them on
/// a GPU host.
std::vector<std::filesystem::path> default_read_paths(const std::filesystem::path& candidate_so,
                                                      const std::filesystem::path& cuda_root);

/// A policy for a candidate runner with the defaults above.
sandbox_policy runner_policy(const std::filesystem::path& scratch_dir, const std::filesystem::path& candidate_so,
                             const std::filesystem::path& cuda_root, tool_mode tool);

std::string to_string(enforcement e);
std::string to_string(tool_mode t);

/// JSON form, for the harness's "setup" message to the runner.
nlohmann::ordered_json to_json(const sandbox_policy& p);
/// Strict reading: unknown fields, wrong types and a missing scratch_dir are errors.
result<sandbox_policy> policy_from_json(const nlohmann::ordered_json& j);

}  // namespace ptxbench::sandbox
