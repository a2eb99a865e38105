#include "baselines/cudnn_graph_builder.h"

#include <utility>

namespace ptxbench::gpu::cudnn {

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

tensor_ref graph_builder::add(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                              cudnnDataType_t type, bool is_virtual, bool by_value, const descriptor* ragged_offset) {
  descriptor t = descriptor::create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "TENSOR_DESCRIPTOR");
  t.set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, type, "TENSOR_DATA_TYPE");
  t.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims, "TENSOR_DIMENSIONS");
  t.set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides, "TENSOR_STRIDES");
  t.set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid, "TENSOR_UNIQUE_ID");
  // 16 bytes is what cudaMalloc'd buffers (and the frontend's default) guarantee.
  t.set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16, "TENSOR_BYTE_ALIGNMENT");
  if (is_virtual) t.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true, "TENSOR_IS_VIRTUAL");
  if (by_value) t.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true, "TENSOR_IS_BY_VALUE");
  if (ragged_offset != nullptr) t.set_desc(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, *ragged_offset, "TENSOR_RAGGED_OFFSET_DESC");
  t.finalize("tensor");
  m_tensors.push_back(tensor_entry{std::move(t), std::move(dims), std::move(strides)});
  return tensor_ref{static_cast<int>(m_tensors.size()) - 1};
}

tensor_ref graph_builder::tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                                 cudnnDataType_t type) {
  return add(uid, std::move(dims), std::move(strides), type, false, false);
}

tensor_ref graph_builder::ragged_tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                                        cudnnDataType_t type, tensor_ref ragged_offset) {
  return add(uid, std::move(dims), std::move(strides), type, false, false, &desc(ragged_offset));
}

tensor_ref graph_builder::virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                                         cudnnDataType_t type) {
  return add(m_next_virtual_uid++, std::move(dims), std::move(strides), type, true, false);
}

tensor_ref graph_builder::scalar_f32(int64_t uid) {
  return add(uid, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
}

void graph_builder::pointwise(cudnnPointwiseMode_t mode, tensor_ref x, tensor_ref y, cudnnDataType_t math_precision,
                              std::optional<tensor_ref> b, std::optional<tensor_ref> t,
                              std::optional<int64_t> axis) {
  descriptor pw = descriptor::create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "POINTWISE_DESCRIPTOR");
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "POINTWISE_MODE");
  pw.set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, math_precision, "POINTWISE_MATH_PREC");
  if (axis) pw.set_int64(CUDNN_ATTR_POINTWISE_AXIS, *axis, "POINTWISE_AXIS");
  pw.finalize("pointwise descriptor");

  descriptor op = descriptor::create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "OPERATION_POINTWISE");
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw, "OPERATION_POINTWISE_PW_DESCRIPTOR");
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, desc(x), "OPERATION_POINTWISE_XDESC");
  if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, desc(*b), "OPERATION_POINTWISE_BDESC");
  if (t) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, desc(*t), "OPERATION_POINTWISE_TDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, desc(y), "OPERATION_POINTWISE_YDESC");
  op.set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0F, "OPERATION_POINTWISE_ALPHA1");
  op.set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0F, "OPERATION_POINTWISE_ALPHA2");
  op.finalize("pointwise operation");
  m_helpers.push_back(std::move(pw));
  m_ops.push_back(std::move(op));
}

void graph_builder::matmul(tensor_ref a, tensor_ref b, tensor_ref c, const gemm_overrides& overrides) {
  descriptor mm = descriptor::create(CUDNN_BACKEND_MATMUL_DESCRIPTOR, "MATMUL_DESCRIPTOR");
  mm.set_data_type(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT, "MATMUL_COMP_TYPE");
  mm.finalize("matmul descriptor");

  descriptor op = descriptor::create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "OPERATION_MATMUL");
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, desc(a), "OPERATION_MATMUL_ADESC");
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, desc(b), "OPERATION_MATMUL_BDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, desc(c), "OPERATION_MATMUL_CDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm, "OPERATION_MATMUL_DESC");
  if (overrides.m) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, desc(*overrides.m), "MATMUL_GEMM_M_OVERRIDE_DESC");
  if (overrides.n) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, desc(*overrides.n), "MATMUL_GEMM_N_OVERRIDE_DESC");
  if (overrides.k) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, desc(*overrides.k), "MATMUL_GEMM_K_OVERRIDE_DESC");
  op.finalize("matmul operation");
  m_helpers.push_back(std::move(mm));
  m_ops.push_back(std::move(op));
}

void graph_builder::paged_cache_load(tensor_ref container, tensor_ref page_table, tensor_ref seq_len, tensor_ref y) {
#if CUDNN_VERSION >= 90500
  descriptor op = descriptor::create(CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, "OPERATION_PAGED_CACHE_LOAD");
  op.set_desc(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, desc(container), "PAGED_CACHE_LOAD_CONTAINER_DESC");
  op.set_desc(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, desc(page_table), "PAGED_CACHE_LOAD_PAGE_TABLE_DESC");
  op.set_desc(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, desc(seq_len), "PAGED_CACHE_LOAD_SEQUENCE_DESC");
  op.set_desc(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, desc(y), "PAGED_CACHE_LOAD_YDESC");
  op.finalize("paged cache load operation");
  m_ops.push_back(std::move(op));
#else
  (void)container, (void)page_table, (void)seq_len, (void)y;
  throw cudnn_error(CUDNN_STATUS_NOT_SUPPORTED, "the paged cache load operation needs cuDNN >= 9.5 headers at build time");
#endif
}

void graph_builder::reduction(cudnnReduceTensorOp_t reduce_op, tensor_ref x, tensor_ref y) {
  descriptor red = descriptor::create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, "REDUCTION_DESCRIPTOR");
  red.set_data_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT, "REDUCTION_COMP_TYPE");
  red.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce_op, "REDUCTION_OPERATOR");
  red.finalize("reduction descriptor");

  descriptor op = descriptor::create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "OPERATION_REDUCTION");
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, desc(x), "OPERATION_REDUCTION_XDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, desc(y), "OPERATION_REDUCTION_YDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, red, "OPERATION_REDUCTION_DESC");
  op.finalize("reduction operation");
  m_helpers.push_back(std::move(red));
  m_ops.push_back(std::move(op));
}

void graph_builder::reshape(tensor_ref x, tensor_ref y) {
  descriptor op = descriptor::create(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "OPERATION_RESHAPE");
  op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, desc(x), "OPERATION_RESHAPE_XDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, desc(y), "OPERATION_RESHAPE_YDESC");
  op.finalize("reshape operation");
  m_ops.push_back(std::move(op));
}

void graph_builder::add_operation(descriptor op) { m_ops.push_back(std::move(op)); }

descriptor graph_builder::finalize_graph(cudnnHandle_t handle) const {
  std::vector<cudnnBackendDescriptor_t> raw;
  raw.reserve(m_ops.size());
  for (const descriptor& op : m_ops) raw.push_back(op.get());
  descriptor graph = descriptor::create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "OPERATIONGRAPH");
  graph.set_descs(CUDNN_ATTR_OPERATIONGRAPH_OPS, raw, "OPERATIONGRAPH_OPS");
  // Deprecated from cuDNN 9.8 but required before it; a null handle (9.8+) builds the graph without
  // a device, which the device-less graph tests use.
  if (handle != nullptr) {
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "OPERATIONGRAPH_HANDLE");
  }
  graph.finalize("operation graph");
  return graph;
}

}  // namespace ptxbench::gpu::cudnn
