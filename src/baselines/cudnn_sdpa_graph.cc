#include "baselines/cudnn_sdpa_graph.h"

#include <fmt/format.h>

#include <limits>

namespace ptxbench::gpu::cudnn {
namespace {

// Shapes shared by the graphs. K and V enter the composite graphs transposed ({b,h,d,s} with swapped
// strides): the backend's matmul takes B as [.., k, n], so Q K^T is matmul(Q, K^T view).
struct shapes {
  std::vector<int64_t> bhsd, bhsd_strides, bhds, bhds_strides, scores, scores_strides, scores_t_strides,
      stats, stats_strides;
};

shapes make_shapes(const sdpa_problem& p) {
  shapes s;
  s.bhsd = {p.b, p.h, p.s, p.d};
  s.bhsd_strides = packed_strides(s.bhsd);
  s.bhds = {p.b, p.h, p.d, p.s};
  s.bhds_strides = {p.h * p.s * p.d, p.s * p.d, 1, p.d};
  s.scores = {p.b, p.h, p.s, p.s};
  s.scores_strides = packed_strides(s.scores);
  s.scores_t_strides = {p.h * p.s * p.s, p.s * p.s, 1, p.s};  // the same memory read transposed
  s.stats = {p.b, p.h, p.s, 1};
  s.stats_strides = {p.h * p.s, p.s, 1, 1};
  return s;
}

// -inf from cuDNN 9.10 on; older fused kernels expect the lowest finite float in masked positions.
float mask_fill_value(version runtime) {
  return runtime.code >= 91000 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::lowest();
}

// Keeps x where row >= col (query i sees keys j <= i), else the fill value: GEN_INDEX on the row and
// column axes, CMP_GE, BINARY_SELECT(x, fill, keep).
tensor_ref causal_mask(graph_builder& g, tensor_ref x, const shapes& s, sdpa_graph& out, version runtime) {
  tensor_ref row = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, row, CUDNN_DATA_FLOAT, std::nullopt, std::nullopt, 2);
  tensor_ref col = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, col, CUDNN_DATA_FLOAT, std::nullopt, std::nullopt, 3);
  tensor_ref keep = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, keep, CUDNN_DATA_BOOLEAN, col);
  tensor_ref fill = g.scalar_f32(sdpa_uid::neg_inf);
  out.by_value.emplace_back(sdpa_uid::neg_inf, mask_fill_value(runtime));
  tensor_ref y = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, y, CUDNN_DATA_FLOAT, fill, keep);
  return y;
}

tensor_ref softmax_with_stats(graph_builder& g, tensor_ref x, tensor_ref stats, const shapes&) {
  return softmax_with_lse(g, x, stats);
}

void build_composite_fwd(graph_builder& g, const sdpa_problem& p, sdpa_graph& out, version runtime) {
  const shapes s = make_shapes(p);
  tensor_ref q = g.tensor(sdpa_uid::q, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref kt = g.tensor(sdpa_uid::k, s.bhds, s.bhds_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref v = g.tensor(sdpa_uid::v, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref o = g.tensor(sdpa_uid::o, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref stats = g.tensor(sdpa_uid::stats, s.stats, s.stats_strides, CUDNN_DATA_FLOAT);
  tensor_ref scale = g.scalar_f32(sdpa_uid::scale);
  out.by_value.emplace_back(sdpa_uid::scale, p.scale);

  tensor_ref logits = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.matmul(q, kt, logits);
  tensor_ref scaled = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, logits, scaled, CUDNN_DATA_FLOAT, scale);
  tensor_ref masked = p.causal ? causal_mask(g, scaled, s, out, runtime) : scaled;
  tensor_ref probs = softmax_with_stats(g, masked, stats, s);
  g.matmul(probs, v, o);
  out.io_uids = {sdpa_uid::q, sdpa_uid::k, sdpa_uid::v, sdpa_uid::o, sdpa_uid::stats};
}

void build_composite_bwd(graph_builder& g, const sdpa_problem& p, sdpa_graph& out, version runtime) {
  const shapes s = make_shapes(p);
  tensor_ref q = g.tensor(sdpa_uid::q, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref kt = g.tensor(sdpa_uid::k, s.bhds, s.bhds_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref vt = g.tensor(sdpa_uid::v, s.bhds, s.bhds_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref o = g.tensor(sdpa_uid::o, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref d_o = g.tensor(sdpa_uid::d_o, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref stats = g.tensor(sdpa_uid::stats, s.stats, s.stats_strides, CUDNN_DATA_FLOAT);
  tensor_ref dq = g.tensor(sdpa_uid::dq, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref dk = g.tensor(sdpa_uid::dk, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref dv = g.tensor(sdpa_uid::dv, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref scale = g.scalar_f32(sdpa_uid::scale);
  out.by_value.emplace_back(sdpa_uid::scale, p.scale);
  tensor_ref one = g.scalar_f32(sdpa_uid::one);
  out.by_value.emplace_back(sdpa_uid::one, 1.0F);

  // Delta_i = sum_d dO[i,d] * O[i,d], kept as a real fp32 [b,h,s,1] tensor in our scratch memory.
  // The virtual product's strides copy what the frontend declares for it (the engine matches them).
  tensor_ref do_o = g.virtual_tensor(s.bhsd, {p.h * p.s * p.d, p.s * p.d, p.h * p.d, 1}, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, do_o, CUDNN_DATA_FLOAT, o);
  tensor_ref row_dot = g.virtual_tensor(s.stats, s.stats_strides, CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, row_dot);
  tensor_ref delta = g.tensor(sdpa_uid::softmax_sum, s.stats, s.stats_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, row_dot, delta, CUDNN_DATA_FLOAT, one);
  out.scratch.push_back(scratch_tensor{sdpa_uid::softmax_sum, p.b * p.h * p.s * 4, false});

  // P = exp(scale * Q K^T [masked] - LSE), recomputed from the forward's stats.
  tensor_ref logits = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.matmul(q, kt, logits);
  tensor_ref scaled = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, logits, scaled, CUDNN_DATA_FLOAT, scale);
  tensor_ref shifted = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, scaled, shifted, CUDNN_DATA_FLOAT, stats);
  tensor_ref masked = p.causal ? causal_mask(g, shifted, s, out, runtime) : shifted;
  tensor_ref probs = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, masked, probs, CUDNN_DATA_FLOAT);

  // dV = P^T dO
  tensor_ref probs_t = g.virtual_tensor(s.scores, s.scores_t_strides, CUDNN_DATA_BFLOAT16);
  g.reshape(probs, probs_t);
  g.matmul(probs_t, d_o, dv);

  // dS = scale * P * (dO V^T - Delta)
  tensor_ref dp = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.matmul(d_o, vt, dp);
  tensor_ref dp_centered = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, dp, dp_centered, CUDNN_DATA_FLOAT, delta);
  tensor_ref ds_unscaled = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centered, ds_unscaled, CUDNN_DATA_FLOAT, probs);
  tensor_ref ds = g.virtual_tensor(s.scores, s.scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, ds, CUDNN_DATA_FLOAT, scale);

  // dK = dS^T Q
  tensor_ref ds_t = g.virtual_tensor(s.scores, s.scores_t_strides, CUDNN_DATA_BFLOAT16);
  g.reshape(ds, ds_t);
  g.matmul(ds_t, q, dk);

  // dQ = dS K, accumulated in fp32 scratch and converted to bf16 by an identity op.
  tensor_ref k_view = g.virtual_tensor(s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  g.reshape(kt, k_view);
  tensor_ref dq_accum = g.tensor(sdpa_uid::dq_accum, s.bhsd, s.bhsd_strides, CUDNN_DATA_FLOAT);
  g.matmul(ds, k_view, dq_accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, dq, CUDNN_DATA_FLOAT);
  out.scratch.push_back(scratch_tensor{sdpa_uid::dq_accum, p.b * p.h * p.s * p.d * 4, runtime.code < 90600});

  out.io_uids = {sdpa_uid::q,  sdpa_uid::k,  sdpa_uid::v,  sdpa_uid::o, sdpa_uid::d_o,
                 sdpa_uid::stats, sdpa_uid::dq, sdpa_uid::dk, sdpa_uid::dv};
}

void build_unified_fwd(graph_builder& g, const sdpa_problem& p, sdpa_graph& out, version runtime) {
#if CUDNN_VERSION >= 91301
  if (runtime.code < 91301) throw_not_available("the unified SDPA_FWD operation", "cuDNN >= 9.13.1", runtime);
  if (p.causal) throw_not_available("a causal mask on the unified SDPA_FWD operation", "cuDNN >= 9.21", runtime);
  const shapes s = make_shapes(p);
  tensor_ref q = g.tensor(sdpa_uid::q, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref k = g.tensor(sdpa_uid::k, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref v = g.tensor(sdpa_uid::v, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref o = g.tensor(sdpa_uid::o, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref stats = g.tensor(sdpa_uid::stats, s.stats, s.stats_strides, CUDNN_DATA_FLOAT);
  tensor_ref scale = g.scalar_f32(sdpa_uid::scale);
  out.by_value.emplace_back(sdpa_uid::scale, p.scale);

  descriptor op = descriptor::create(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, "OPERATION_SDPA_FWD");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, g.desc(q), "SDPA_FWD_QDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, g.desc(k), "SDPA_FWD_KDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, g.desc(v), "SDPA_FWD_VDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, g.desc(o), "SDPA_FWD_ODESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, g.desc(stats), "SDPA_FWD_STATSDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, g.desc(scale), "SDPA_FWD_SCALEDESC");
  op.finalize("SDPA_FWD operation");
  g.add_operation(std::move(op));
  out.io_uids = {sdpa_uid::q, sdpa_uid::k, sdpa_uid::v, sdpa_uid::o, sdpa_uid::stats};
#else
  (void)g, (void)p, (void)out;
  throw_not_available("the unified SDPA_FWD operation", "cuDNN >= 9.13.1 headers at build time", runtime);
#endif
}

void build_unified_bwd(graph_builder& g, const sdpa_problem& p, sdpa_graph& out, version runtime) {
#if CUDNN_VERSION >= 91900
  if (p.causal)
    throw_not_available("a causal mask on the unified SDPA_BWD operation", "a mask attribute cuDNN 9.19 lacks", runtime);
  const shapes s = make_shapes(p);
  tensor_ref q = g.tensor(sdpa_uid::q, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref k = g.tensor(sdpa_uid::k, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref v = g.tensor(sdpa_uid::v, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref o = g.tensor(sdpa_uid::o, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref d_o = g.tensor(sdpa_uid::d_o, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref stats = g.tensor(sdpa_uid::stats, s.stats, s.stats_strides, CUDNN_DATA_FLOAT);
  tensor_ref dq = g.tensor(sdpa_uid::dq, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref dk = g.tensor(sdpa_uid::dk, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref dv = g.tensor(sdpa_uid::dv, s.bhsd, s.bhsd_strides, CUDNN_DATA_BFLOAT16);
  tensor_ref scale = g.scalar_f32(sdpa_uid::scale);
  out.by_value.emplace_back(sdpa_uid::scale, p.scale);

  descriptor op = descriptor::create(CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, "OPERATION_SDPA_BWD");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, g.desc(q), "SDPA_BWD_QDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, g.desc(k), "SDPA_BWD_KDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, g.desc(v), "SDPA_BWD_VDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, g.desc(o), "SDPA_BWD_ODESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, g.desc(d_o), "SDPA_BWD_DODDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, g.desc(stats), "SDPA_BWD_STATSDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, g.desc(scale), "SDPA_BWD_SCALEDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, g.desc(dq), "SDPA_BWD_DQDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, g.desc(dk), "SDPA_BWD_DKDESC");
  op.set_desc(CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, g.desc(dv), "SDPA_BWD_DVDESC");
  op.finalize("SDPA_BWD operation");
  g.add_operation(std::move(op));
  out.io_uids = {sdpa_uid::q,  sdpa_uid::k,  sdpa_uid::v,  sdpa_uid::o, sdpa_uid::d_o,
                 sdpa_uid::stats, sdpa_uid::dq, sdpa_uid::dk, sdpa_uid::dv};
#else
  (void)g, (void)p, (void)out;
  throw_not_available("the unified SDPA_BWD operation", "cuDNN >= 9.19 headers at build time", runtime);
#endif
}

}  // namespace

// Softmax over the key axis, emitting the natural-log row log-sum-exp into `stats`:
// m = max(x), e = exp(x - m), l = sum(e), stats = m + log(l), probabilities = e / l (bf16 for bmm2).
tensor_ref softmax_with_lse(graph_builder& g, tensor_ref x, tensor_ref stats) {
  const std::vector<int64_t> scores = g.dims(x), scores_strides = g.strides(x);
  const std::vector<int64_t> rows = g.dims(stats), rows_strides = packed_strides(rows);
  tensor_ref row_max = g.virtual_tensor(rows, rows_strides, CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, x, row_max);
  tensor_ref centered = g.virtual_tensor(scores, scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, x, centered, CUDNN_DATA_FLOAT, row_max);
  tensor_ref exps = g.virtual_tensor(scores, scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, centered, exps, CUDNN_DATA_FLOAT);
  tensor_ref row_sum = g.virtual_tensor(rows, rows_strides, CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, exps, row_sum);
  tensor_ref log_sum = g.virtual_tensor(rows, rows_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_LOG, row_sum, log_sum, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_ADD, row_max, stats, CUDNN_DATA_FLOAT, log_sum);
  // bf16: the second matmul takes its A operand in the I/O type (as the frontend declares it).
  tensor_ref probs = g.virtual_tensor(scores, scores_strides, CUDNN_DATA_BFLOAT16);
  g.pointwise(CUDNN_POINTWISE_DIV, exps, probs, CUDNN_DATA_FLOAT, row_sum);
  return probs;
}

const char* graph_kind_name(sdpa_graph_kind kind) {
  switch (kind) {
    case sdpa_graph_kind::unified_fwd: return "unified_fwd";
    case sdpa_graph_kind::composite_fwd: return "composite_fwd";
    case sdpa_graph_kind::composite_bwd: return "composite_bwd";
    case sdpa_graph_kind::unified_bwd: return "unified_bwd";
  }
  return "unknown";
}

bool is_forward(sdpa_graph_kind kind) {
  return kind == sdpa_graph_kind::unified_fwd || kind == sdpa_graph_kind::composite_fwd;
}

std::unique_ptr<sdpa_graph> build_sdpa_graph(sdpa_graph_kind kind, const sdpa_problem& problem,
                                             cudnnHandle_t handle, version runtime) {
  auto graph = std::make_unique<sdpa_graph>();
  graph->kind = kind;
  switch (kind) {
    case sdpa_graph_kind::unified_fwd: build_unified_fwd(graph->builder, problem, *graph, runtime); break;
    case sdpa_graph_kind::composite_fwd: build_composite_fwd(graph->builder, problem, *graph, runtime); break;
    case sdpa_graph_kind::composite_bwd: build_composite_bwd(graph->builder, problem, *graph, runtime); break;
    case sdpa_graph_kind::unified_bwd: build_unified_bwd(graph->builder, problem, *graph, runtime); break;
  }
  graph->op_graph = graph->builder.finalize_graph(handle);
  return graph;
}

}  // namespace ptxbench::gpu::cudnn
