#include "gpu/harness/kernel_provenance.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/json_check.h"

namespace ptxbench::gpu {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_metadata_bytes = 4u << 20;

// CUPTI reports the symbol; a person reads the C++ name. Kept local (the harness's pure part links
// no SASS library): abi::__cxa_demangle is the C++ runtime's own demangler.
std::string readable(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string text = status == 0 && out ? out : name;
  std::free(out);
  return text.size() > 240 ? text.substr(0, 237) + "..." : text;
}

}  // namespace

result<std::vector<compiled_kernel>> read_triton_cache(const fs::path& cache_dir, std::size_t max_files) {
  std::vector<compiled_kernel> out;
  std::error_code ec;
  if (!fs::exists(cache_dir, ec)) return out;
  if (!fs::is_directory(cache_dir, ec))
    return make_error(fmt::format("Triton cache {} is not a folder", cache_dir.string()));
  std::size_t seen = 0;
  // Triton's layout: one folder per compilation key, holding <name>.json (metadata), <name>.cubin,
  // the IRs and __grp__<name>.json (the group listing). Nothing deeper is Triton's.
  for (fs::recursive_directory_iterator it(cache_dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it.depth() > 1) {
      it.disable_recursion_pending();
      continue;
    }
    if (++seen > max_files) return make_error(fmt::format("Triton cache {} holds more than {} files", cache_dir.string(), max_files));
    const fs::path& p = it->path();
    if (!it->is_regular_file(ec) || p.extension() != ".json" || p.filename().string().rfind("__grp__", 0) == 0) continue;
    fs::path cubin = p;
    cubin.replace_extension(".cubin");
    if (!fs::is_regular_file(cubin, ec)) continue;
    auto text = read_file(p, k_max_metadata_bytes);
    if (!text) continue;  // unreadable metadata names nothing
    auto doc = parse_json(*text, p.string());
    if (!doc || !doc->is_object() || !doc->contains("name") || !(*doc)["name"].is_string()) continue;
    std::string name = (*doc)["name"].get<std::string>();
    if (name.empty()) continue;
    out.push_back({name, cubin, p});
  }
  if (ec) return make_error(fmt::format("reading the Triton cache {}: {}", cache_dir.string(), ec.message()));
  std::sort(out.begin(), out.end(), [](const compiled_kernel& a, const compiled_kernel& b) {
    return a.name != b.name ? a.name < b.name : a.cubin < b.cubin;
  });
  return out;
}

bool is_allowed_torch_kernel(std::string_view name) {
  // Mangled names of at::native start "_ZN2at6native" (free functions) or name it inside a
  // template argument ("..._ZN2at6native..."); the identifiers below appear verbatim either way.
  if (name.find("2at6native") == std::string_view::npos) return false;
  for (std::string_view allowed : {"11FillFunctor", "23direct_copy_kernel_cuda", "23float8_copy_kernel_cuda"})
    if (name.find(allowed) != std::string_view::npos) return true;
  return false;
}

std::set<std::string> kernel_names(const std::vector<compiled_kernel>& kernels) {
  std::set<std::string> names;
  for (const auto& k : kernels) names.insert(k.name);
  return names;
}

provenance_decision check_kernel_provenance(const std::vector<std::string>& launched,
                                            const std::set<std::string>& compiled, bool cupti_ran) {
  provenance_decision d;
  if (!cupti_ran) return d;
  d.checked = true;
  for (const auto& name : launched) {
    if (compiled.count(name) || is_allowed_torch_kernel(name)) continue;
    if (std::find(d.foreign.begin(), d.foreign.end(), name) == d.foreign.end()) d.foreign.push_back(name);
  }
  if (!d.foreign.empty())
    d.message = fmt::format("a kernel the candidate did not compile ran: {}{}", readable(d.foreign.front()),
                            d.foreign.size() > 1 ? fmt::format(" (and {} more)", d.foreign.size() - 1) : "");
  return d;
}

}  // namespace ptxbench::gpu
