#pragma once
// What a result depends on besides the candidate: the GPU, its clocks, the driver and every library
// version. Recorded in every verdict so a number can be reproduced or explained.

#include <string>

#include "core/json_check.h"

namespace ptxbench::gpu {

/// GPU name, compute capability, SM count, L2 and memory sizes, driver, CUDA runtime, cuBLASLt,
/// cuDNN (when linked), CUPTI versions, and the nvidia-smi clock/power/temperature reading.
ordered_json collect_environment(int device);

/// The device's UUID as nvidia-smi prints it ("GPU-xxxxxxxx-xxxx-..."): the one name of a physical
/// GPU that does not depend on CUDA_VISIBLE_DEVICES or device ordering. "" when unknown.
std::string device_uuid(int device);

/// One nvidia-smi reading: {"sm_mhz", "max_sm_mhz", "power_w", "temperature_c"} (empty on failure).
ordered_json read_clocks(int device);

}  // namespace ptxbench::gpu
