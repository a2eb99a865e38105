// PLACEHOLDER, not a kernel: the second reply of examples/agent/gemm_replay.json must be a correct,
// target-correct wgmma GEMM. Regenerate the replay from the lead's kernel:
//   examples/agent/make_gemm_replay.sh examples/gemm/<wgmma kernel>.cu
// Until then this file fails to build on purpose, so a replay run cannot pass by accident.
#include <ptxbench/abi.h>

#error "placeholder: regenerate examples/agent/gemm_replay.json from examples/gemm/wgmma*.cu"

__global__ void gemm_kernel() {}
void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t stream) {}
PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
