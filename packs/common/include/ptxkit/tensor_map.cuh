// ptxkit/tensor_map.cuh (host): encoding TMA tensor maps (CUtensorMap, 128 bytes).
//
// The driver function cuTensorMapEncodeTiled is fetched through the runtime's
// cudaGetDriverEntryPointByVersion, so a kernel file needs no -lcuda (it links either way).
// Pass the map to the kernel as `const __grid_constant__ CUtensorMap` so it lives in parameter
// space with a stable address; never copy it into a local variable on the device.
//
// Coordinates: dimension 0 is the contiguous (innermost) one. For a row-major [rows][cols]
// matrix: dims = {cols, rows}, stride[0] = cols * sizeof(T) bytes, box = {box_cols, box_rows},
// and a load at coordinates {c0, r0} fills a box_rows x box_cols tile (rows of box_cols elements).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda.h>
#include <cuda_runtime.h>
#include "common.cuh"

namespace ptxkit {

namespace detail {
using encode_tiled_fn = decltype(&cuTensorMapEncodeTiled);

inline encode_tiled_fn encode_tiled() {
  static encode_tiled_fn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<encode_tiled_fn>(p);
  }();
  return fn;
}

inline CUtensorMapSwizzle to_cu(swizzle s) {
  switch (s) {
    case swizzle::b32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case swizzle::b64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case swizzle::b128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}
}  // namespace detail

/// Host. The first TMA rule the arguments break, or "" when they are valid.
inline std::string tensor_map_problem(const void* gaddr, uint32_t elem_bytes, uint32_t rank, const uint64_t* strides_bytes,
                                      const uint32_t* box, swizzle sw) {
  if (reinterpret_cast<uintptr_t>(gaddr) % 16 != 0) return "global address must be 16-byte aligned";
  if ((box[0] * elem_bytes) % 16 != 0) return "box[0] * element size must be a multiple of 16 bytes";
  if (sw != swizzle::none && box[0] * elem_bytes > static_cast<uint32_t>(sw))
    return "box[0] * element size (" + std::to_string(box[0] * elem_bytes) + " B) exceeds the swizzle span";
  for (uint32_t i = 0; i < rank; ++i)
    if (box[i] == 0 || box[i] > 256) return "box extents must be in 1..256";
  for (uint32_t i = 0; i + 1 < rank; ++i)
    if (strides_bytes[i] % 16 != 0) return "global strides must be multiples of 16 bytes";
  return "";
}

/// Host. Encodes a tiled tensor map of rank 1..5. dims/box are innermost-first; strides_bytes has
/// rank-1 entries (stride of dims 1..rank-1), each a multiple of 16. Throws std::runtime_error
/// naming the violated rule; the ABI turns that into a readable RUNTIME_ERROR.
inline CUtensorMap make_tensor_map(const void* gaddr, CUtensorMapDataType type, uint32_t elem_bytes, uint32_t rank,
                                   const uint64_t* dims, const uint64_t* strides_bytes, const uint32_t* box,
                                   swizzle sw, CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  std::string why = tensor_map_problem(gaddr, elem_bytes, rank, strides_bytes, box, sw);
  auto fn = detail::encode_tiled();
  if (why.empty() && !fn) why = "cuTensorMapEncodeTiled is unavailable (driver too old?)";
  if (!why.empty()) throw std::runtime_error("ptxkit::make_tensor_map: " + why);
  CUtensorMap map;
  const uint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = fn(&map, type, rank, const_cast<void*>(gaddr), dims, strides_bytes, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, detail::to_cu(sw), l2, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("ptxkit::make_tensor_map: cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(r)));
  return map;
}

/// Host. 2D bf16 map over a row-major [rows][cols] matrix with row pitch `ld` elements; a TMA
/// box is box_rows x box_cols. Out-of-bounds box elements load as zero and are not stored.
inline CUtensorMap make_tma_2d_bf16(const void* gaddr, uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_rows,
                                    uint32_t box_cols, swizzle sw) {
  const uint64_t dims[2] = {cols, rows};
  const uint64_t strides[1] = {ld * 2};
  const uint32_t box[2] = {box_cols, box_rows};
  return make_tensor_map(gaddr, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, dims, strides, box, sw);
}

/// Host. 3D bf16 map over a row-major [d2][d1][d0] tensor with strides (in elements) s1 for dim 1
/// and s2 for dim 2; a box is b2 x b1 x b0. Use it for [batch*heads][seq][head_dim] views.
inline CUtensorMap make_tma_3d_bf16(const void* gaddr, uint64_t d2, uint64_t d1, uint64_t d0, uint64_t s1,
                                    uint64_t s2, uint32_t b2, uint32_t b1, uint32_t b0, swizzle sw) {
  const uint64_t dims[3] = {d0, d1, d2};
  const uint64_t strides[2] = {s1 * 2, s2 * 2};
  const uint32_t box[3] = {b0, b1, b2};
  return make_tensor_map(gaddr, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 3, dims, strides, box, sw);
}

/// Host. 2D fp32 map (for LSE, row statistics or fp32 accumulators such as dQ).
inline CUtensorMap make_tma_2d_f32(const void* gaddr, uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_rows,
                                   uint32_t box_cols, swizzle sw) {
  const uint64_t dims[2] = {cols, rows};
  const uint64_t strides[1] = {ld * 4};
  const uint32_t box[2] = {box_cols, box_rows};
  return make_tensor_map(gaddr, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 2, dims, strides, box, sw);
}

}  // namespace ptxkit
