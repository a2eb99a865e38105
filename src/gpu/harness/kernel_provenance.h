#pragma once
// Kernel provenance for Triton candidates: only kernels compiled from the candidate's own Triton
// code may run during a call. The Python gate (src/triton_gate) refuses torch compute by name; what
// slips past it (a tensor passed through a container, a method added to torch later) still launches
// torch's or a vendor library's kernels, whose names CUPTI records in the runner. This compares the
// kernels a call launched with the kernels Triton compiled for this candidate, read from its
// TRITON_CACHE_DIR (docs/gpu-evaluation.md, "Triton candidates"). Pure functions over file contents
// and names: no CUDA, so the CPU tests (tests/harness) check every decision.

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxbench::gpu {

/// The folder under a runner's scratch that the Triton runner uses as TRITON_CACHE_DIR for the
/// candidate's kernels (src/gpu/runner_py/ptxbench_triton_runner.py uses the same name).
inline constexpr const char* k_triton_cache_folder = "triton-cache";

/// One kernel Triton compiled for the candidate: the name its metadata gives (the function the
/// runtime launches) and the cubin beside that metadata.
struct compiled_kernel {
  std::string name;
  std::filesystem::path cubin;
  std::filesystem::path metadata;
};

/// Reads a Triton cache folder: every <key>/<file>.json whose object has a string "name" and whose
/// <key>/<file>.cubin exists (group files "__grp__*.json" and metadata without a cubin are skipped:
/// a name only counts when Triton wrote the binary for it). A missing folder is an empty list (the
/// candidate compiled nothing yet); an unreadable one an error. At most max_files files are read.
result<std::vector<compiled_kernel>> read_triton_cache(const std::filesystem::path& cache_dir,
                                                       std::size_t max_files = 4096);

/// Torch kernels that the Python gate's allowed operations launch (torch.zeros, zero_, fill_:
/// FillFunctor; copy_, clone, contiguous, to(): direct_copy_kernel_cuda, float8_copy_kernel_cuda),
/// recognised in CUPTI's (mangled) names under at::native. Everything else of torch is compute.
bool is_allowed_torch_kernel(std::string_view launched_name);

struct provenance_decision {
  bool checked = false;                ///< false: no kernel names to judge (no CUPTI records)
  std::vector<std::string> foreign;    ///< launched kernels neither compiled by the candidate nor allowed
  std::string message;                 ///< one line for the verdict when foreign is non-empty
};

/// Compares the kernels one call launched (CUPTI names, in launch order) with the candidate's
/// compiled kernels. cupti_ran says whether the runner recorded kernels at all (method "cupti");
/// without it nothing is checked. The message names the first foreign kernel, demangled when it
/// can be: "a kernel the candidate did not compile ran: at::native::... (and 2 more)".
provenance_decision check_kernel_provenance(const std::vector<std::string>& launched,
                                            const std::set<std::string>& compiled, bool cupti_ran);

/// The names of compiled kernels, for check_kernel_provenance.
std::set<std::string> kernel_names(const std::vector<compiled_kernel>& kernels);

}  // namespace ptxbench::gpu
