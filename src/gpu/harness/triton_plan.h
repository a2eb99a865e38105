#pragma once
// From a Triton candidate's capture to a launch plan the C++ runner replays (gpu/common/launch_plan.h).
//
// The capture is made by the candidate's own, sandboxed process (the Triton runner in capture mode):
// it runs run() once to let Triton compile, then twice more under CUDA stream capture, each time on
// another set of the harness's buffers, and writes what the driver recorded (every kernel and memset
// node: function, grid, block, shared memory, cluster, the exact parameter bytes) and what Triton
// compiled (each kernel's cubin, its parameter types, and the hints a recompile needs). All of it is
// untrusted data. Here it becomes a plan only if it holds up: every launched function is a kernel the
// capture says Triton compiled, every pointer parameter points into one of the call's tensors (or is
// null), Triton's scratch pointers are null, and both captures give the same plan. Then the trusted
// recompile must reproduce each cubin byte for byte (eval/.. harness: triton_recompile.py), so the
// kernels that run are the ones the candidate's source compiles to — whatever the capture claimed.
// Pure: no CUDA, no Python (tests/harness).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "gpu/common/launch_plan.h"

namespace ptxbench::gpu {

/// A kernel the capture says Triton compiled, with what the trusted recompile needs.
struct captured_kernel {
  std::string function;                 ///< the CUfunction handle in the capture process (an opaque key)
  std::string name;                     ///< the cubin's entry function
  std::string jit;                      ///< the @triton.jit function's name in kernel.py
  std::filesystem::path cubin;          ///< where the capture wrote the cubin (inside its scratch)
  std::vector<std::string> param_types; ///< per cubin parameter: "*bf16", "i32", "fp32", ..., or "scratch"
  ordered_json hints;                   ///< signature, constexprs, attrs, options (passed to the recompile)
};

struct triton_capture {
  std::vector<uint64_t> tensor_ptrs;    ///< where the call's tensors were mapped in the capture process
  ordered_json nodes;                   ///< the recorded graph nodes, in launch order
  std::vector<captured_kernel> kernels;
};

/// Reads a capture file's JSON strictly (sizes capped; cubin paths must stay inside `scratch`).
result<triton_capture> triton_capture_from_json(const ordered_json& j, const std::filesystem::path& scratch);

/// The plan a capture describes. `tensor_bytes` are the sizes of the call's tensors (the harness's
/// own, inputs then outputs); `cubin_sha256` maps each captured cubin path to the hash the harness
/// computed of it. An error says, in one line, why the capture cannot be replayed.
result<launch_plan> plan_from_capture(const triton_capture& c, const std::vector<uint64_t>& tensor_bytes,
                                      const std::map<std::filesystem::path, std::string>& cubin_sha256);

/// The distinct kernels a plan's capture named, by cubin hash: what the trusted recompile must
/// reproduce (one entry per hash; the first captured kernel with it).
std::vector<const captured_kernel*> kernels_to_recompile(const triton_capture& c, const launch_plan& p,
                                                         const std::map<std::filesystem::path, std::string>& cubin_sha256);

/// Why a kernel with these launch parameter types (captured_kernel::param_types) cannot be
/// replayed — the first type that is neither a pointer nor a scalar: a host tensor descriptor
/// ("tensordesc<...>", "nvTmaDesc"), a tuple — or "" when every one can.
std::string unreplayable_parameter(const std::vector<std::string>& param_types);

/// The byte size of a Triton scalar type ("i32" → 4); 0 when unknown.
int triton_scalar_bytes(const std::string& type);

}  // namespace ptxbench::gpu
