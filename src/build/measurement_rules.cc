#include "build/measurement_rules.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/text.h"

namespace ptxbench::build {
namespace {

template <std::size_t N>
bool one_of(std::string_view s, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

constexpr std::string_view k_cupti = "CUPTI";
constexpr std::string_view k_profiler = "the CUDA profiler API";
constexpr std::string_view k_nvtx = "NVTX";
constexpr std::string_view k_export_tables = "the driver's internal export tables (what profilers hook into)";
constexpr std::string_view k_runner = "the runner's own code";
constexpr std::string_view k_images = "walking the loaded ELF images";

// Lower-case prefixes: every CUPTI name starts with cupti/CUpti_/CUPTI_, every NVTX name with
// nvtx/NVTX/nvToolsExt; profiler API names with cudaProfiler/cuProfiler.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> k_prefixes = {{
    {"cupti", k_cupti},
    {"cudaprofiler", k_profiler},
    {"cuprofiler", k_profiler},
    {"nvtx", k_nvtx},
    {"nvtoolsext", k_nvtx},
}};

constexpr std::array<std::string_view, 2> k_export_table_names = {"cuGetExportTable", "cudaGetExportTable"};

// Types and functions of ptxbench-runner, its CUPTI tracer and launch audit, and its channels to the
// harness (src/gpu/runner/, activity_tracer.h, core/sync_channel.h). Distinctive enough that a
// kernel has no reason to use the words.
constexpr std::array<std::string_view, 8> k_runner_names = {"activity_tracer", "gpu_span",      "runner_state",
                                                            "runner_client",   "message_channel", "sync_channel",
                                                            "launch_counter",  "launch_grouper"};

// How code finds other images in its process without naming their functions: the dynamic linker's
// list (dl_iterate_phdr, _r_debug, link_map), symbol lookup by address (dladdr), the auxiliary
// vector (getauxval(AT_PHDR)), and the linker-defined anchors of an image (_DYNAMIC, __ehdr_start).
constexpr std::array<std::string_view, 11> k_image_walk_names = {
    "dl_iterate_phdr", "dladdr",       "dladdr1",           "getauxval",       "_r_debug",        "r_debug",
    "link_map",        "_dl_debug_state", "_dl_find_object", "_DYNAMIC",        "__ehdr_start"};

std::optional<std::string> reason(std::string_view r) { return std::string(r); }

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

}  // namespace

std::optional<std::string> measurement_identifier(std::string_view id) {
  std::string low = lower(id);
  for (const auto& [prefix, why] : k_prefixes)
    if (starts_with(low, prefix)) return reason(why);
  if (one_of(id, k_export_table_names)) return reason(k_export_tables);
  if (one_of(id, k_runner_names)) return reason(k_runner);
  if (one_of(id, k_image_walk_names)) return reason(k_images);
  return std::nullopt;
}

std::optional<std::string> measurement_header(std::string_view header) {
  std::string low = lower(header);
  auto slash = low.find_last_of('/');
  std::string base = slash == std::string::npos ? low : low.substr(slash + 1);
  if (starts_with(base, "cupti") || starts_with(base, "generated_cupti")) return reason(k_cupti);
  if (base == "cuda_profiler_api.h" || starts_with(base, "cudaprofiler")) return reason(k_profiler);
  if (starts_with(low, "nvtx") || starts_with(base, "nvtx") || starts_with(base, "nvtoolsext")) return reason(k_nvtx);
  if (low == "link.h" || low == "sys/auxv.h" || low == "elf.h") return reason(k_images);
  return std::nullopt;
}

std::optional<std::string> measurement_symbol(std::string_view symbol) {
  auto at = symbol.find('@');  // a version suffix, when the reader kept one
  std::string_view name = symbol.substr(0, at);
  if (auto r = measurement_identifier(name)) return r;
  // The runner's C++ code: any ptxbench:: entity the object does not define itself (what the ABI
  // header defines is compiled into the object, so it is never undefined).
  if (starts_with(name, "_Z") && name.find("8ptxbench") != std::string_view::npos) return reason(k_runner);
  if (starts_with(name, "ptxbench_")) return reason(k_runner);
  return std::nullopt;
}

std::optional<std::string> measurement_string(std::string_view literal) {
  if (is_identifier(literal)) return measurement_identifier(literal);
  std::string low = lower(literal);
  bool proc = low.find("/proc") != std::string::npos;
  bool self = low.find("self/") != std::string::npos || low.find("thread-self") != std::string::npos;
  if (low == "/proc" || low == "/proc/") return reason("reading /proc (" + std::string(k_images) + ")");
  if (proc || self)
    for (std::string_view leaf : {"maps", "mem", "auxv", "exe", "pagemap", "map_files"})
      if (low.find(leaf) != std::string::npos) return reason("reading /proc (" + std::string(k_images) + ")");
  return std::nullopt;
}

}  // namespace ptxbench::build
