#pragma once
// A scalar input (definition shape null, workload {"type": "scalar", "value": v}) as the harness
// stores it: the bytes of the value in the input's dtype, copied into a one-element device buffer.
// Pure (no CUDA calls), so the CPU tests check it.

#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/definition.h"

namespace ptxbench::gpu {

/// The bytes of `value` as a `t.type` scalar: float32 (any number), int32 and int64 (integers in
/// range), bool (true/false). Fails naming the input for another dtype or a value that does not fit.
result<std::vector<unsigned char>> scalar_bytes(const tensor_spec& t, const ordered_json& value);

}  // namespace ptxbench::gpu
