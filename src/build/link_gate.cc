#include "build/link_gate.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "build/measurement_rules.h"
#include "core/text.h"

namespace ptxbench::build {
namespace {

// Libraries a candidate may need at run time: the CUDA runtime and driver, and the C/C++ runtime.
constexpr std::array<std::string_view, 11> k_allowed_needed_prefixes = {
    "libcudart.so", "libcuda.so", "libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "libpthread.so",
    "librt.so",     "libdl.so",   "ld-linux-x86-64.so", "ld-linux-aarch64.so"};

constexpr std::array<std::string_view, 7> k_banned_dynamic_loading = {
    "dlopen", "dlmopen", "dlsym", "dlvsym", "__libc_dlopen_mode", "__libc_dlsym", "dlinfo"};
constexpr std::array<std::string_view, 16> k_banned_process = {
    "system", "popen",  "execl", "execle", "execlp", "execv",       "execve",       "execvp",
    "execvpe", "fexecve", "fork", "vfork", "clone",  "posix_spawn", "posix_spawnp", "syscall"};

}  // namespace

std::vector<gate_finding> check_linkage(const elf_dynamic_info& info, const std::string& object_name) {
  std::vector<gate_finding> out;
  auto add = [&](const char* rule, std::string excerpt, std::string message) {
    out.push_back({rule, object_name, 0, std::move(excerpt), std::move(message)});
  };
  for (const auto& lib : info.needed) {
    bool allowed = false;
    for (auto p : k_allowed_needed_prefixes) allowed = allowed || starts_with(lib, p);
    if (!allowed)
      add("needed-library", lib,
          fmt::format("the built object needs {}; only the CUDA runtime/driver and the C/C++ runtime are allowed",
                      lib));
  }
  for (const auto& sym : info.undefined) {
    std::string low = lower(sym.name);
    std::string kind = sym.weak ? "weak undefined symbol" : "undefined symbol";
    if (starts_with(low, "cublas") || starts_with(low, "cudnn")) {
      add("vendor-library", sym.name,
          fmt::format("the built object references the vendor library symbol {} ({}); cuBLAS, cuBLASLt and cuDNN "
                      "are not allowed", sym.name, kind));
    } else if (std::find(k_banned_dynamic_loading.begin(), k_banned_dynamic_loading.end(), sym.name) !=
               k_banned_dynamic_loading.end()) {
      add("dynamic-loading", sym.name,
          fmt::format("the built object references {} ({}); loading code at run time is not allowed", sym.name, kind));
    } else if (std::find(k_banned_process.begin(), k_banned_process.end(), sym.name) != k_banned_process.end()) {
      add("process-spawn", sym.name,
          fmt::format("the built object references {} ({}); starting processes is not allowed", sym.name, kind));
    } else if (auto why = measurement_symbol(sym.name)) {
      add("measurement-machinery", sym.name,
          fmt::format("the built object references {} ({}: {}); candidates may not touch the measurement machinery",
                      sym.name, kind, *why));
    }
  }
  for (const auto& rp : info.runpath)
    add("runpath", rp, fmt::format("the built object carries a library search path ({}), which is not allowed", rp));
  return out;
}

result<std::vector<gate_finding>> check_linkage_of(const std::filesystem::path& shared_object) {
  auto info = read_elf_dynamic(shared_object);
  if (!info) return info.err();
  return check_linkage(*info, shared_object.filename().string());
}

}  // namespace ptxbench::build
