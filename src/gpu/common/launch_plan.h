#pragma once
// A launch plan: what a Triton candidate's run() does on the GPU, as data — which compiled kernels
// it launches in which order, with which grid, block, shared memory and arguments, each argument
// either literal bytes or a pointer into one of the task's tensors. The trusted side builds it from
// what a sandboxed capture of the candidate recorded (gpu/harness/triton_plan.h), after recompiling
// every kernel itself; the C++ runner replays it (gpu/runner/plan_launcher.h) for sanitize,
// correctness, timing and profiling, so no candidate Python is in the process that is measured.
// Pure data and its JSON ("format": "ptxbench.launch-plan/1"); no CUDA calls.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::gpu {

/// One kernel parameter as the launch passes it.
struct plan_param {
  enum class kind { bytes, tensor };
  kind k = kind::bytes;
  std::vector<uint8_t> bytes;  ///< kind bytes: the parameter's exact bytes (scalars, null pointers)
  int tensor = -1;             ///< kind tensor: index into the call's tensors (inputs then outputs)
  int64_t offset = 0;          ///< bytes from that tensor's start; the parameter is the 8-byte pointer
};

/// One compiled kernel: its machine code and how every launch of it is configured.
struct plan_kernel {
  std::string name;                  ///< the cubin's entry function
  std::filesystem::path cubin;       ///< the verified cubin (absolute, or relative to the plan file)
  std::string cubin_sha256;
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared_bytes = 0;         ///< dynamic shared memory per block
  std::array<unsigned, 3> cluster{1, 1, 1};
  bool cooperative = false;
};

/// One step of run(): a kernel launch, or a memset of a tensor range (torch fills).
struct plan_step {
  enum class kind { launch, memset };
  kind k = kind::launch;
  int kernel = -1;                   ///< launch: index into kernels
  std::array<unsigned, 3> grid{1, 1, 1};
  std::vector<plan_param> params;
  // memset: value repeated over `count` elements of element_size bytes, from tensor + offset
  int tensor = -1;
  int64_t offset = 0;
  uint32_t value = 0;
  int element_size = 1;
  uint64_t count = 0;
};

struct launch_plan {
  std::vector<plan_kernel> kernels;
  std::vector<plan_step> steps;
  int tensors = 0;  ///< how many tensors a call passes (inputs then outputs, the harness's order)
};

ordered_json to_json(const launch_plan& p);
/// Strict: any missing or malformed field, an index out of range, a parameter over 4 KiB or a plan
/// of more than 4096 steps is an error naming where.
result<launch_plan> launch_plan_from_json(const ordered_json& j);

/// A parameter's bytes from lower-case hex (at most 4 KiB); the error names `where`.
result<std::vector<uint8_t>> plan_bytes_from_hex(const std::string& hex, const std::string& where);
/// Three launch dimensions, each 1..2^31; the error names `where`.
result<std::array<unsigned, 3>> plan_dims_from_json(const ordered_json& j, const std::string& where);

/// Two plans do the same thing: the same kernels (by cubin hash and configuration), steps, grids and
/// parameters. Returns "" or what differs first, in one line.
std::string plan_difference(const launch_plan& a, const launch_plan& b);

}  // namespace ptxbench::gpu
