// CPU check of the example kernels' index math (no GPU needed).
//
// bench/eval/kernel_selftest.sh extracts the "layout helpers" region of each example into
// layout_helpers.gen.h (one namespace per example), so this program tests the very functions the
// kernels call. It checks them against models of the hardware written from the PTX ISA:
//  - ldmatrix.x4 (with and without .trans): lane 8*m + i supplies the address of row i of matrix m;
//    without .trans lane l receives row l/4, elements 2*(l%4) and +1 of each matrix; with .trans it
//    receives rows 2*(l%4) and +1 of column l/4;
//  - mma.m16n8k16 bf16 fragments (A 16x16 row, B 16x8 col, C 16x8 f32);
//  - wgmma m64nNk16: accumulator D and register-A fragments (warp w of the warpgroup holds rows
//    16w..16w+15 in the mma.m16n8k16 pattern);
//  - the 128-byte swizzle: byte address bits [4:6] are XORed with bits [7:9], both for TMA
//    (CU_TENSOR_MAP_SWIZZLE_128B, 128-byte inner box) and for wgmma descriptors with swizzle mode 1,
//    K-major: operand element (row, k) is read at start + (row/8)*SBO + (row%8)*128 + 2k, then swizzled.
// Exit status 0 when every check holds.
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "layout_helpers.gen.h"

namespace {

int g_checks = 0;
int g_failures = 0;

#define CHECK(cond, ...)                                  \
  do {                                                    \
    ++g_checks;                                           \
    if (!(cond)) {                                        \
      if (g_failures < 25) {                              \
        std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
        std::printf(__VA_ARGS__);                         \
        std::printf("\n");                                \
      }                                                   \
      ++g_failures;                                       \
    }                                                     \
  } while (0)

struct rc {
  int r, c;
};

// ---- hardware models (PTX ISA) ----

rc mma_a_elem(int lane, int reg, int half) { return {lane / 4 + 8 * (reg % 2), 2 * (lane % 4) + 8 * (reg / 2) + half}; }
rc mma_b_elem(int lane, int reg, int half) { return {2 * (lane % 4) + 8 * reg + half, lane / 4}; }  // (k, n)
rc mma_c_elem(int lane, int i) { return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + (i % 2)}; }
rc wgmma_a_elem(int t, int reg, int half) {
  const rc e = mma_a_elem(t % 32, reg, half);
  return {16 * (t / 32) + e.r, e.c};
}
rc wgmma_d_elem(int t, int i) { return {16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (t % 4) + (i % 2)}; }

// Element offset (16-bit units) that `lane` receives in register `reg`, half `half`, of an ldmatrix.x4
// whose lanes supplied the row addresses addr[0..31] (also in 16-bit units).
long ldsm_elem(const long (&addr)[32], int lane, int reg, int half, bool trans) {
  if (!trans) return addr[8 * reg + lane / 4] + 2 * (lane % 4) + half;
  return addr[8 * reg + 2 * (lane % 4) + half] + lane / 4;
}

uint32_t swizzle128(uint32_t a) { return a ^ (((a >> 7) & 7u) << 4); }
uint32_t tma_sw128_write(uint32_t dst, int r, int c) { return swizzle128(dst + uint32_t(r) * 128u + 2u * uint32_t(c)); }
uint32_t desc_sw128_read(uint32_t start, int row, int k) {
  return swizzle128(start + uint32_t(row / 8) * 1024u + uint32_t(row % 8) * 128u + 2u * uint32_t(k));
}

// ldmatrix reads 8 rows of 16 bytes per matrix; all 32 banks distinct means no bank conflict.
bool conflict_free(const long (&addr)[32], int m) {
  std::set<long> banks;
  for (int i = 0; i < 8; ++i)
    for (int w = 0; w < 4; ++w) banks.insert((addr[8 * m + i] * 2 / 4 + w) % 32);
  return banks.size() == 32;
}

// ---- mma.sync-based kernels: one set of helpers, used as A [m][k], B [n][k], B [k][n] ----

template <typename H>
void check_mma_helpers(const char* name, int ld, H) {
  using namespace std;
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      CHECK(H::c_row(lane, i) == mma_c_elem(lane, i).r && H::c_col(lane, i) == mma_c_elem(lane, i).c,
            "%s: accumulator helper lane %d elem %d", name, lane, i);
      // Rows depend on the quad only: the softmax reduces a row with shuffles xor 1 and 2.
      CHECK(H::c_row(lane, i) == H::c_row(lane ^ 1, i) && H::c_row(lane, i) == H::c_row(lane ^ 2, i),
            "%s: a row is not owned by one quad", name);
    }
  for (int row0 : {0, 16, 48})
    for (int k0 : {0, 16, 112}) {
      if (k0 + 16 > ld - 8) continue;
      long addr[32];
      // A stored [m][k].
      for (int l = 0; l < 32; ++l) addr[l] = long(row0 + H::a_row(l)) * ld + k0 + H::a_col(l);
      for (int m = 0; m < 4; ++m) CHECK(conflict_free(addr, m), "%s: A ldmatrix bank conflict (ld %d)", name, ld);
      for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < 4; ++reg)
          for (int h = 0; h < 2; ++h) {
            const long off = ldsm_elem(addr, lane, reg, h, false);
            const rc want = mma_a_elem(lane, reg, h);
            CHECK(off / ld == row0 + want.r && off % ld == k0 + want.c, "%s: A fragment lane %d reg %d", name, lane, reg);
          }
      // B stored [n][k] (no .trans): registers 0,1 -> n8 tile 0; 2,3 -> n8 tile 1.
      for (int l = 0; l < 32; ++l) addr[l] = long(row0 + H::b_row(l)) * ld + k0 + H::b_col(l);
      for (int m = 0; m < 4; ++m) CHECK(conflict_free(addr, m), "%s: B ldmatrix bank conflict (ld %d)", name, ld);
      for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < 4; ++reg)
          for (int h = 0; h < 2; ++h) {
            const long off = ldsm_elem(addr, lane, reg, h, false);
            const rc kn = mma_b_elem(lane, reg % 2, h);
            CHECK(off / ld == row0 + 8 * (reg / 2) + kn.c && off % ld == k0 + kn.r, "%s: B[n][k] fragment lane %d reg %d",
                  name, lane, reg);
          }
      // B stored [k][n] (.trans): rows are k (row0 here), columns n (k0 here).
      if (H::has_trans) {
        for (int l = 0; l < 32; ++l) addr[l] = long(row0 + H::bt_row(l)) * ld + k0 + H::bt_col(l);
        for (int m = 0; m < 4; ++m) CHECK(conflict_free(addr, m), "%s: B^T ldmatrix bank conflict (ld %d)", name, ld);
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < 4; ++reg)
            for (int h = 0; h < 2; ++h) {
              const long off = ldsm_elem(addr, lane, reg, h, true);
              const rc kn = mma_b_elem(lane, reg % 2, h);
              CHECK(off / ld == row0 + kn.r && off % ld == k0 + 8 * (reg / 2) + kn.c,
                    "%s: B[k][n] fragment lane %d reg %d", name, lane, reg);
            }
      }
    }
  if (H::has_trans) {
    // Accumulators of n8 tiles (2c, 2c+1) reused as the A operand of k16 chunk c.
    for (int lane = 0; lane < 32; ++lane)
      for (int c = 0; c < 4; ++c)
        for (int reg = 0; reg < 4; ++reg)
          for (int h = 0; h < 2; ++h) {
            const int f = H::acc_for_a(c, reg) + h;
            const rc got = mma_c_elem(lane, f % 4);
            const rc want = mma_a_elem(lane, reg, h);
            CHECK(got.r == want.r && 8 * (f / 4) + got.c == 16 * c + want.c, "%s: accumulator->A lane %d chunk %d reg %d",
                  name, lane, c, reg);
          }
  }
}

struct plain_tiled_h {
  static constexpr bool has_trans = false;
  static int a_row(int l) { return plain_tiled::ldsm_a_row(l); }
  static int a_col(int l) { return plain_tiled::ldsm_a_col(l); }
  static int b_row(int l) { return plain_tiled::ldsm_b_row(l); }
  static int b_col(int l) { return plain_tiled::ldsm_b_col(l); }
  static int bt_row(int) { return 0; }
  static int bt_col(int) { return 0; }
  static int c_row(int l, int i) { return plain_tiled::mma_c_row(l, i); }
  static int c_col(int l, int i) { return plain_tiled::mma_c_col(l, i); }
  static int acc_for_a(int, int) { return 0; }
};
#define ATTN_HELPERS(NAME, NS)                                           \
  struct NAME {                                                          \
    static constexpr bool has_trans = true;                              \
    static int a_row(int l) { return NS::ldsm_a_row(l); }                \
    static int a_col(int l) { return NS::ldsm_a_col(l); }                \
    static int b_row(int l) { return NS::ldsm_b_row(l); }                \
    static int b_col(int l) { return NS::ldsm_b_col(l); }                \
    static int bt_row(int l) { return NS::ldsm_bt_row(l); }              \
    static int bt_col(int l) { return NS::ldsm_bt_col(l); }              \
    static int c_row(int l, int i) { return NS::mma_c_row(l, i); }       \
    static int c_col(int l, int i) { return NS::mma_c_col(l, i); }       \
    static int acc_for_a(int c, int r) { return NS::acc_for_a(c, r); }   \
  };
ATTN_HELPERS(plain_fwd_h, plain_fwd)
ATTN_HELPERS(plain_bwd_h, plain_bwd)

// ---- wgmma ----

void check_desc_encoding(const char* name, uint64_t (*make)(uint32_t)) {
  for (uint32_t addr : {0u, 1024u, 3072u + 32u, 65536u + 96u, 200704u + 16u}) {
    const uint64_t d = make(addr);
    CHECK(((d & 0x3FFFull) << 4) == addr, "%s: descriptor start address field for %u", name, addr);
    CHECK(((d >> 16) & 0x3FFFull) == 1, "%s: LBO field", name);
    CHECK(((d >> 32) & 0x3FFFull) == 1024 / 16, "%s: SBO field", name);
    CHECK(((d >> 49) & 7ull) == 0, "%s: base offset field", name);
    CHECK((d >> 62) == 1, "%s: swizzle mode field (1 = 128B)", name);
    CHECK(((d >> 14) & 3ull) == 0 && ((d >> 30) & 3ull) == 0 && ((d >> 46) & 7ull) == 0 && ((d >> 52) & 0x3FFull) == 0,
          "%s: reserved bits set", name);
  }
}

template <typename RowFn, typename ColFn>
void check_wg_acc(const char* name, RowFn row, ColFn col) {
  for (int n : {64, 128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const rc want = wgmma_d_elem(t, i);
        CHECK(row(t, i) == want.r && col(t, i) == want.c, "%s: wgmma accumulator t %d i %d", name, t, i);
        seen.insert({row(t, i), col(t, i)});
        // The epilogues address element 4j + 2h + e as (row of element 2h, column of element 4j plus e).
        CHECK(row(t, i) == row(t, 2 * ((i / 2) % 2)) && col(t, i) == col(t, 4 * (i / 4)) + i % 2,
              "%s: epilogue addressing t %d i %d", name, t, i);
        CHECK(row(t, i) == row(t ^ 1, i) && row(t, i) == row(t ^ 2, i), "%s: a row is not owned by one quad", name);
      }
    CHECK(int(seen.size()) == 64 * n, "%s: accumulator m64n%d is not a bijection", name, n);
  }
}

// tag = which tile, row, column; maps a physical smem byte address (relative to a 1024-aligned base)
// to the logical bf16 element stored there.
using smem_map = std::map<uint32_t, std::tuple<int, int, int>>;
void put(smem_map& m, uint32_t addr, int tile, int r, int c, const char* name) {
  CHECK(addr % 2 == 0, "%s: odd address", name);
  const bool fresh = m.emplace(addr, std::make_tuple(tile, r, c)).second;
  CHECK(fresh, "%s: two elements stored at byte %u", name, addr);
}
bool holds(const smem_map& m, uint32_t addr, int tile, int r, int c) {
  const auto it = m.find(addr);
  return it != m.end() && it->second == std::make_tuple(tile, r, c);
}

void check_wgmma_gemm() {
  const char* name = "wgmma.cu";
  check_desc_encoding(name, wgmma_gemm::make_sw128_desc);
  check_wg_acc(name, wgmma_gemm::wg_acc_row, wgmma_gemm::wg_acc_col);
  smem_map m;
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < 64; ++c) {
      CHECK(wgmma_gemm::sw128_offset(r, c) == tma_sw128_write(0, r, c), "%s: manual swizzle differs from TMA's", name);
      put(m, wgmma_gemm::sw128_offset(r, c), 0, r, c, name);           // A tile
      put(m, 16384u + wgmma_gemm::sw128_offset(r, c), 1, r, c, name);  // B tile
    }
  for (int kk = 0; kk < 4; ++kk) {
    for (int wg = 0; wg < 2; ++wg)
      for (int row = 0; row < 64; ++row)
        for (int k = 0; k < 16; ++k)
          CHECK(holds(m, desc_sw128_read(wgmma_gemm::a_desc_offset(wg, kk), row, k), 0, 64 * wg + row, 16 * kk + k),
                "%s: A operand wg %d kk %d row %d k %d", name, wg, kk, row, k);
    for (int row = 0; row < 128; ++row)
      for (int k = 0; k < 16; ++k)
        CHECK(holds(m, desc_sw128_read(wgmma_gemm::b_desc_offset(kk), row, k), 1, row, 16 * kk + k),
              "%s: B operand kk %d row %d k %d", name, kk, row, k);
  }
}

void check_tma_pipelined() {
  const char* name = "wgmma_tma_pipelined.cu";
  namespace h = tma_pipelined;
  check_desc_encoding(name, h::make_sw128_desc);
  check_wg_acc(name, h::wg_acc_row, h::wg_acc_col);
  smem_map m;
  for (int s = 0; s < 4; ++s) {
    CHECK(h::stage_a_offset(s) % 1024 == 0 && h::stage_b_offset(s) % 1024 == 0, "%s: stage not 1024-aligned", name);
    for (int c = 0; c < 64; ++c) {
      for (int r = 0; r < 128; ++r) put(m, tma_sw128_write(h::stage_a_offset(s), r, c), s, r, c, name);
      for (int r = 0; r < 256; ++r) put(m, tma_sw128_write(h::stage_b_offset(s), r, c), 4 + s, r, c, name);
    }
  }
  CHECK(m.rbegin()->first < 196608u, "%s: stages overlap the barriers at 192 KiB", name);
  for (int s = 0; s < 4; ++s)
    for (int kk = 0; kk < 4; ++kk) {
      for (int cw = 0; cw < 2; ++cw)
        for (int row = 0; row < 64; ++row)
          for (int k = 0; k < 16; ++k)
            CHECK(holds(m, desc_sw128_read(h::a_desc_offset(s, cw, kk), row, k), s, 64 * cw + row, 16 * kk + k),
                  "%s: A operand stage %d cw %d kk %d row %d", name, s, cw, kk, row);
      for (int row = 0; row < 256; ++row)
        for (int k = 0; k < 16; ++k)
          CHECK(holds(m, desc_sw128_read(h::b_desc_offset(s, kk), row, k), 4 + s, row, 16 * kk + k),
                "%s: B operand stage %d kk %d row %d", name, s, kk, row);
    }
  for (auto [tm, tn, g] : {std::tuple{64, 28, 8}, {10, 3, 8}, {1, 1, 8}, {9, 5, 4}, {16, 7, 8}}) {
    std::set<std::pair<int, int>> seen;
    for (int bid = 0; bid < tm * tn; ++bid) {
      const int mt = h::grouped_tile_m(bid, tm, tn, g), nt = h::grouped_tile_n(bid, tm, tn, g);
      CHECK(mt >= 0 && mt < tm && nt >= 0 && nt < tn, "%s: tile (%d, %d) out of range", name, mt, nt);
      seen.insert({mt, nt});
    }
    CHECK(int(seen.size()) == tm * tn, "%s: grouped rasterisation %dx%d/%d is not a bijection", name, tm, tn, g);
  }
}

void check_wgmma_fwd() {
  const char* name = "wgmma_fwd.cu";
  namespace h = wgmma_fwd;
  check_desc_encoding(name, h::make_sw128_desc);
  check_wg_acc(name, h::wg_acc_row, h::wg_acc_col);
  smem_map q, vt;
  for (int row = 0; row < 64; ++row)
    for (int d = 0; d < 128; ++d) {
      put(q, h::qk_smem_offset(row, d), 0, row, d, name);
      put(vt, h::vt_smem_offset(row, d), 0, row, d, name);  // row = key
      if (d % 64 < 64) CHECK(h::sw128_offset(row, d % 64) == tma_sw128_write(0, row, d % 64), "%s: swizzle", name);
    }
  CHECK(q.rbegin()->first < 16384u && vt.rbegin()->first < 16384u, "%s: tile larger than 16 KiB", name);
  // S = Q K^T: A = Q (64 rows), B = K (64 rows, same layout as Q), k16 step kk over the head dimension.
  for (int kk = 0; kk < 8; ++kk)
    for (int row = 0; row < 64; ++row)
      for (int k = 0; k < 16; ++k)
        CHECK(holds(q, desc_sw128_read(h::qk_k_step_offset(kk), row, k), 0, row, 16 * kk + k),
              "%s: Q/K operand kk %d row %d k %d", name, kk, row, k);
  // O += P V: B operand element (n = d, k = key within chunk c) must be V[16c + k][d].
  for (int c = 0; c < 4; ++c)
    for (int d = 0; d < 128; ++d)
      for (int k = 0; k < 16; ++k)
        CHECK(holds(vt, desc_sw128_read(h::vt_k_step_offset(c), d, k), 0, 16 * c + k, d), "%s: V operand c %d d %d k %d",
              name, c, d, k);
  // P accumulators -> register A operand of chunk c.
  for (int t = 0; t < 128; ++t)
    for (int c = 0; c < 4; ++c)
      for (int reg = 0; reg < 4; ++reg)
        for (int hf = 0; hf < 2; ++hf) {
          const int f = h::acc_for_a(c, reg) + hf;
          const rc want = wgmma_a_elem(t, reg, hf);
          CHECK(h::wg_acc_row(t, f) == want.r && h::wg_acc_col(t, f) == 16 * c + want.c,
                "%s: accumulator->A t %d chunk %d reg %d", name, t, c, reg);
        }
}

// examples/reference/mha_fwd.cu (and its causal copy): TMA boxes -> wgmma descriptors of Q, K and
// V (V as the MN-major B of P V), and the tile scheduler's order.
void check_mha_fwd_ref() {
  const char* name = "reference/mha_fwd.cu";
  namespace h = mha_fwd_ref;
  // Q: box (c, b) = rows 64c.., d 64b.. lands at q_box_offset(c, b); consumer c's A operand of k-step
  // kk starts at q_box_offset(c, 0) + kmajor_step_offset(kk, 8192).
  smem_map q, k, v;
  for (int row = 0; row < 128; ++row)
    for (int d = 0; d < 128; ++d) {
      put(q, tma_sw128_write(h::q_box_offset(row / 64, d / 64), row % 64, d % 64), 0, row, d, name);
      put(k, tma_sw128_write(uint32_t(d / 64) * 16384u, row, d % 64), 0, row, d, name);  // row = key
      put(v, tma_sw128_write(uint32_t(d / 64) * 16384u, row, d % 64), 0, row, d, name);
    }
  CHECK(q.rbegin()->first < 32768u && k.rbegin()->first < 32768u, "%s: tile larger than 32 KiB", name);
  for (int c = 0; c < 2; ++c)
    for (int kk = 0; kk < 8; ++kk)
      for (int row = 0; row < 64; ++row)
        for (int e = 0; e < 16; ++e)
          CHECK(holds(q, desc_sw128_read(h::q_box_offset(c, 0) + h::kmajor_step_offset(kk, 8192), row, e), 0, 64 * c + row,
                      16 * kk + e),
                "%s: Q operand c %d kk %d row %d k %d", name, c, kk, row, e);
  // K: B operand of S = Q K^T, N = 128 keys, K-major, SBO 1024 over all 16 8-row groups.
  for (int kk = 0; kk < 8; ++kk)
    for (int key = 0; key < 128; ++key)
      for (int e = 0; e < 16; ++e)
        CHECK(holds(k, desc_sw128_read(h::kmajor_step_offset(kk, 16384), key, e), 0, key, 16 * kk + e),
              "%s: K operand kk %d key %d k %d", name, kk, key, e);
  // V: MN-major B of O += P V (TransB = 1, 128-byte swizzle): element (k = key, n = d) is read at
  // start + (n / 64) * LBO + (k / 8) * SBO + (k % 8) * 128 + 2 * (n % 64), swizzled; LBO = 16384 (the
  // distance of the two 64-wide d blocks), SBO = 1024.
  for (int kk = 0; kk < 8; ++kk)
    for (int e = 0; e < 16; ++e)
      for (int d = 0; d < 128; ++d) {
        const uint32_t a = h::v_step_offset(kk) + uint32_t(d / 64) * 16384u + uint32_t(e / 8) * 1024u +
                           uint32_t(e % 8) * 128u + 2u * uint32_t(d % 64);
        CHECK(holds(v, swizzle128(a), 0, 16 * kk + e, d), "%s: V operand kk %d key %d d %d", name, kk, e, d);
      }
  // Scheduler: every (query tile, head) exactly once; causal: longest first inside a head group.
  for (int n_q : {1, 2, 5, 32})
    for (int bh : {1, 3, 4, 6, 13, 192})
      for (bool causal : {false, true}) {
        std::set<std::pair<int, int>> seen;
        int last_group = -1, last_qt = 1 << 30;
        for (int t = 0; t < n_q * bh; ++t) {
          const h::tile_coord tc = h::tile_of(t, n_q, bh, causal);
          CHECK(tc.qt >= 0 && tc.qt < n_q && tc.bh >= 0 && tc.bh < bh, "%s: tile %d -> (%d, %d) out of range", name, t,
                tc.qt, tc.bh);
          seen.insert({tc.qt, tc.bh});
          const int group = tc.bh / h::kHeadGroup;
          if (group != last_group) last_qt = 1 << 30;
          if (causal) CHECK(tc.qt <= last_qt, "%s: causal order not longest first at t %d", name, t);
          last_group = group;
          last_qt = tc.qt;
          CHECK(h::kv_tiles_of(tc.qt, n_q, causal) == (causal ? tc.qt + 1 : n_q), "%s: kv tiles", name);
        }
        CHECK(int(seen.size()) == n_q * bh, "%s: scheduler n_q %d bh %d causal %d is not a bijection", name, n_q, bh,
              causal ? 1 : 0);
      }
}

// examples/reference/mha_bwd.cu (and its causal copy): TMA boxes -> wgmma descriptors of K, V (A of
// S^T = K Q^T, dP^T = V dO^T, per consumer c the keys 64c..), Q, dO (K-major B of those, MN-major B of
// dK += dS^T Q, dV += P^T dO), the dS^T tile (stmatrix writes, MN-major A of dQ = dS K), K as the
// MN-major B of dQ, the dQ accumulator's register order, and the query-tile order and masking.
void check_mha_bwd_ref() {
  const char* name = "reference/mha_bwd.cu";
  namespace h = mha_bwd_ref;
  smem_map k, q, ds;
  for (int key = 0; key < 128; ++key)
    for (int d = 0; d < 128; ++d) put(k, tma_sw128_write(uint32_t(d / 64) * 16384u, key, d % 64), 0, key, d, name);
  for (int row = 0; row < 64; ++row)
    for (int d = 0; d < 128; ++d) put(q, tma_sw128_write(uint32_t(d / 64) * 8192u, row, d % 64), 0, row, d, name);
  // S^T = K_c Q^T: A = keys 64c + m (K-major over d) at c * 8192 + kmajor_step_offset(kk, 16384).
  for (int c = 0; c < 2; ++c)
    for (int kk = 0; kk < 8; ++kk)
      for (int m = 0; m < 64; ++m)
        for (int e = 0; e < 16; ++e)
          CHECK(holds(k, desc_sw128_read(uint32_t(c) * 8192u + h::kmajor_step_offset(kk, 16384), m, e), 0, 64 * c + m,
                      16 * kk + e),
                "%s: K operand c %d kk %d row %d k %d", name, c, kk, m, e);
  // B = Q (N = 64 queries, K-major over d) at kmajor_step_offset(kk, 8192).
  for (int kk = 0; kk < 8; ++kk)
    for (int n = 0; n < 64; ++n)
      for (int e = 0; e < 16; ++e)
        CHECK(holds(q, desc_sw128_read(h::kmajor_step_offset(kk, 8192), n, e), 0, n, 16 * kk + e),
              "%s: Q operand kk %d q %d k %d", name, kk, n, e);
  // dK += dS^T Q: MN-major B (k = query, n = d), LBO 8192 (the two d blocks), SBO 1024.
  for (int kk = 0; kk < 4; ++kk)
    for (int e = 0; e < 16; ++e)
      for (int d = 0; d < 128; ++d) {
        const uint32_t a = h::mn_step_offset(kk) + uint32_t(d / 64) * 8192u + uint32_t(e / 8) * 1024u +
                           uint32_t(e % 8) * 128u + 2u * uint32_t(d % 64);
        CHECK(holds(q, swizzle128(a), 0, 16 * kk + e, d), "%s: Q as MN-major B kk %d q %d d %d", name, kk, e, d);
      }
  // dS^T: consumer c's accumulator (row = key 64c + r, col = query) written by stmatrix_acc_bf16<64, b128>
  // at c * 8192 + swizzle(row * 128 + 2 * col); read as the MN-major A of dQ (m = query, k = key).
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < 32; ++r) {
        const int row = h::acc_row_of(t, r), col = h::acc_col_of(t, r);
        const rc want = wgmma_d_elem(t, r);
        CHECK(row == want.r && col == want.c, "%s: acc_row_of/acc_col_of t %d r %d", name, t, r);
        put(ds, swizzle128(uint32_t(c) * 8192u + uint32_t(row) * 128u + 2u * uint32_t(col)), 0, 64 * c + row, col, name);
      }
  for (int kk = 0; kk < 8; ++kk)
    for (int e = 0; e < 16; ++e)
      for (int m = 0; m < 64; ++m) {
        const uint32_t a = h::mn_step_offset(kk) + uint32_t(e / 8) * 1024u + uint32_t(e % 8) * 128u + 2u * uint32_t(m);
        CHECK(holds(ds, swizzle128(a), 0, 16 * kk + e, m), "%s: dS^T as MN-major A kk %d key %d q %d", name, kk, e, m);
        // K's d block c as the MN-major B of dQ (k = key, n = d - 64c).
        for (int c = 0; c < 2; ++c)
          CHECK(holds(k, swizzle128(uint32_t(c) * 16384u + a), 0, 16 * kk + e, 64 * c + m),
                "%s: K as MN-major B c %d kk %d key %d d %d", name, c, kk, e, m);
      }
  // dQ accumulator: register order is a bijection onto the 4096 floats of a chunk, float4-aligned per
  // thread, and each warp's k-th float4s are 512 contiguous bytes; chunks tile the [rows][128] view.
  {
    std::set<int> seen;
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < 32; ++r) {
        const int f = h::dq_float(t, r);
        CHECK(f >= 0 && f < h::kDqChunk && (r % 4 != 0 || f % 4 == 0), "%s: dq_float(%d, %d) = %d", name, t, r, f);
        if (r % 4 == 0) CHECK(f == h::dq_float(t - t % 32, r) + 4 * (t % 32), "%s: warp float4s not contiguous", name);
        seen.insert(f);
      }
    CHECK(int(seen.size()) == h::kDqChunk, "%s: dq_float is not a bijection", name);
    CHECK(h::kDqBoxRows * 128 == h::kDqChunk, "%s: box rows", name);
    for (int n_q : {4, 10, 64})
      for (int bh = 0; bh < 3; ++bh)
        for (int qt = 0; qt < n_q; ++qt)
          for (int c = 0; c < 2; ++c) {
            const int64_t ch = h::dq_chunk(bh, qt, c, n_q);
            // the convert kernel's inverse, and rows (chunk * box rows) == the query rows' 128-float rows
            CHECK(ch % 2 == c && (ch / 2) % n_q == qt && ch / (2 * n_q) == bh, "%s: dq_chunk inverse", name);
            CHECK(ch * h::kDqBoxRows == (int64_t(bh) * n_q * 64 + qt * 64) + c * 32, "%s: dq chunk rows", name);
          }
  }
  // Query tiles: every KV tile visits each needed tile once; causal skips exactly the fully masked
  // tiles and masks exactly the tiles that cut the diagonal.
  for (int n_kv : {1, 2, 5, 32})
    for (bool causal : {false, true}) {
      const int n_q = n_kv * 2;
      for (int j = 0; j < n_kv; ++j) {
        std::set<int> seen;
        const int n_it = h::q_tiles_of(j, n_q, causal);
        for (int it = 0; it < n_it; ++it) {
          const int qt = h::q_tile_of(j, it, n_q, causal);
          CHECK(qt >= 0 && qt < n_q, "%s: q tile out of range", name);
          seen.insert(qt);
          bool any_masked = false;
          for (int key = 128 * j; key < 128 * j + 128; ++key)
            for (int qr = 64 * qt; qr < 64 * qt + 64; ++qr) any_masked |= causal && key > qr;
          CHECK(any_masked == h::needs_mask(it, causal), "%s: mask flag j %d qt %d", name, j, qt);
        }
        CHECK(int(seen.size()) == n_it, "%s: repeated query tile", name);
        for (int qt = 0; qt < n_q; ++qt) {
          bool visible = !causal;
          for (int qr = 64 * qt; qr < 64 * qt + 64 && !visible; ++qr) visible = qr >= 128 * j;
          CHECK(visible == (seen.count(qt) == 1), "%s: j %d qt %d visited %d, visible %d", name, j, qt,
                int(seen.count(qt)), visible ? 1 : 0);
        }
      }
    }
}

}  // namespace

int main() {
  check_mma_helpers("plain_tiled.cu", 40, plain_tiled_h{});
  check_mma_helpers("plain_fwd.cu", 136, plain_fwd_h{});
  check_mma_helpers("plain_bwd.cu", 136, plain_bwd_h{});
  check_wgmma_gemm();
  check_tma_pipelined();
  check_wgmma_fwd();
  check_mha_fwd_ref();
  check_mha_bwd_ref();
  std::printf("layout_check: %d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
