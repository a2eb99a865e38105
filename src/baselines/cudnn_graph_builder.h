#pragma once
// Builds a cuDNN backend operation graph op by op: tensors (real, virtual, by-value scalars) and the
// primitive operations the fused-attention engines pattern-match (matmul, pointwise, reduction,
// reshape) or a single dedicated operation (SDPA_FWD / SDPA_BWD). It owns every descriptor, so the
// finished graph stays valid as long as the builder lives. All methods throw cudnn_error.

#include <cstdint>
#include <optional>
#include <vector>

#include "baselines/cudnn_backend.h"

namespace ptxbench::gpu::cudnn {

/// Index of a tensor inside a graph_builder.
struct tensor_ref {
  int index = -1;
};

/// Row-major (packed) strides for dims: {d1*d2*d3, d2*d3, d3, 1}.
std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims);

class graph_builder {
 public:
  /// A real tensor: data comes from the variant pack under `uid`.
  tensor_ref tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t type);
  /// A virtual tensor (never materialised): the engine fuses through it.
  tensor_ref virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t type);
  /// A real tensor whose batch entries start at the element offsets in `ragged_offset` (a real
  /// [b+1,1,1,1] integer tensor): the packed ("THD") layout of variable-length sequences.
  tensor_ref ragged_tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t type,
                           tensor_ref ragged_offset);
  /// A by-value fp32 scalar {1,1,1,1}: its host address goes into the variant pack under `uid`.
  tensor_ref scalar_f32(int64_t uid);

  /// y = mode(x [, b [, t]]); `math_precision` is the pointwise compute type; `axis` only for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, tensor_ref x, tensor_ref y, cudnnDataType_t math_precision,
                 std::optional<tensor_ref> b = std::nullopt, std::optional<tensor_ref> t = std::nullopt,
                 std::optional<int64_t> axis = std::nullopt);
  /// Per-batch GEMM extents read from [b,1,1,1] int32 tensors (variable sequence lengths): rows of
  /// a (m), columns of b (n), the reduced dimension (k). Unset ones use the tensor dims.
  struct gemm_overrides {
    std::optional<tensor_ref> m, n, k;
  };
  /// c = a @ b over the two innermost dims, batched over the outer ones; fp32 compute.
  void matmul(tensor_ref a, tensor_ref b, tensor_ref c, const gemm_overrides& overrides = {});
  /// y = the rows of a paged cache `container` ([pages, h, page_size, d]) that `page_table`
  /// ([b,1,pages_per_sequence,1] int32, optionally packed with a ragged offset) lists for each batch
  /// entry, up to `seq_len` ([b,1,1,1] int32) rows; y is virtual, [b,h,s,d] or its transpose.
  void paged_cache_load(tensor_ref container, tensor_ref page_table, tensor_ref seq_len, tensor_ref y);
  /// y = reduce(x) over the dims where y has extent 1; fp32 compute.
  void reduction(cudnnReduceTensorOp_t op, tensor_ref x, tensor_ref y);
  /// y = x viewed with y's dims and strides (how cuDNN expresses a transpose inside a graph).
  void reshape(tensor_ref x, tensor_ref y);
  /// Adds an operation built by the caller (e.g. OPERATION_SDPA_FWD), already finalized.
  void add_operation(descriptor op);

  [[nodiscard]] const descriptor& desc(tensor_ref t) const { return m_tensors.at(t.index).desc; }
  [[nodiscard]] const std::vector<int64_t>& dims(tensor_ref t) const { return m_tensors.at(t.index).dims; }
  [[nodiscard]] const std::vector<int64_t>& strides(tensor_ref t) const { return m_tensors.at(t.index).strides; }
  [[nodiscard]] std::size_t operation_count() const { return m_ops.size(); }

  /// Finalizes the OPERATIONGRAPH over all operations in the order they were added (`handle` may be
  /// null from cuDNN 9.8 on).
  descriptor finalize_graph(cudnnHandle_t handle) const;

 private:
  struct tensor_entry {
    descriptor desc;
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;
  };
  tensor_ref add(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t type,
                 bool is_virtual, bool by_value, const descriptor* ragged_offset = nullptr);

  std::vector<tensor_entry> m_tensors;
  std::vector<descriptor> m_ops;
  std::vector<descriptor> m_helpers;  // pointwise/matmul/reduction descriptors the ops point to
  int64_t m_next_virtual_uid = 1000;
};

}  // namespace ptxbench::gpu::cudnn
