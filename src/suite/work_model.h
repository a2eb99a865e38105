#pragma once
// How much work a task is: its floating-point operations and the fewest bytes any implementation
// must move between memory and the chip, each written down per task as a formula over the
// definition's axes (suite/tasks.json, "work"). The coverage of a required instruction family
// (executed tensor-core FLOPs over the task's FLOPs) and the physical floor (no GPU can finish the
// task faster than FLOPs / peak rate or bytes / peak bandwidth) are both measured against these.
//
// The formulas live in tasks.json, not in the Definition: a Definition is FlashInfer-Trace's
// operator contract, read strictly by FlashInfer-Bench and upstream PTXBench, which would reject an
// unknown field; tasks.json is where PTXBench keeps what it adds per task.
//
// Formula language: integer literals, axis names, + - * / and parentheses, evaluated in double
// precision (every value in the suite is below 2^53, so products of axes are exact). Written here
// rather than taken from a library (muParser) because the grammar is four operators over named
// axes: a dependency would bring functions and constants a work formula must not have.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ptxbench {

/// The work formulas of one task, exactly as written in tasks.json.
struct work_formulas {
  std::string flops;          ///< e.g. "2*M*N*K"
  std::string bytes_read;     ///< the fewest bytes every implementation must read, e.g. "2*M*K + 2*N*K"
  std::string bytes_written;  ///< the bytes of every output, written once, e.g. "2*M*N"
  std::string note;           ///< what is counted and what is assumed (one or two sentences)
};

/// The work of one task at concrete axis values.
struct task_work {
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;
  [[nodiscard]] double bytes() const { return bytes_read + bytes_written; }
};

/// The fastest a target GPU can possibly go, for the physical floor (suite/targets.json, "peaks").
/// The floor uses bf16_dense_flops_per_s and memory_bytes_per_s; they are upper bounds, taken at
/// the highest clock the part can run, so no honest kernel is ever below the floor. The datasheet
/// figure is kept beside them for reference.
struct target_peaks {
  double bf16_dense_flops_per_s = 0;            ///< dense bf16 tensor-core FLOP/s, at the maximum SM clock
  double memory_bytes_per_s = 0;                ///< peak DRAM (HBM) bandwidth
  double datasheet_bf16_dense_flops_per_s = 0;  ///< as NVIDIA's datasheet states it (dense = sparse / 2)
  std::string source;                           ///< where the numbers come from
  std::string note;                             ///< how the floor's numbers follow from the datasheet
};

/// Evaluates one formula. Errors: an unknown axis, a malformed expression, division by zero, a
/// negative or non-finite result. `what` prefixes the message ("work.flops").
result<double> evaluate_work_formula(std::string_view formula, const std::map<std::string, int64_t>& axes,
                                     const std::string& what = "formula");

/// Evaluates all three formulas.
result<task_work> evaluate_work(const work_formulas& w, const std::map<std::string, int64_t>& axes);

}  // namespace ptxbench
