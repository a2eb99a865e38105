#include "sass/static_check.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::sass {

std::string demangle(const std::string& mangled) {
  if (!starts_with(mangled, "_Z")) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

std::string kernel_base_name(std::string_view name) {
  constexpr std::string_view anon = "(anonymous namespace)";
  int angle = 0;
  std::size_t end = name.size();
  std::size_t last_space = std::string_view::npos;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<') ++angle;
    else if (c == '>') angle = std::max(0, angle - 1);
    else if (c == '(' && angle == 0) {
      if (name.substr(i, anon.size()) == anon) { i += anon.size() - 1; continue; }
      end = i;
      break;
    } else if (c == ' ' && angle == 0) last_space = i;
  }
  std::string_view base = name.substr(0, end);
  if (last_space != std::string_view::npos && last_space < end) base = base.substr(last_space + 1);
  // The demangler spells an anonymous namespace "(anonymous namespace)", Nsight Compute "<unnamed>":
  // one spelling, so a kernel in an anonymous namespace matches itself.
  std::string out(trim(base));
  for (auto at = out.find(anon); at != std::string::npos; at = out.find(anon, at)) out.replace(at, anon.size(), "<unnamed>");
  return out;
}

bool same_kernel(const std::string& mangled, std::string_view printed) {
  auto a = kernel_base_name(demangle(mangled));
  return !a.empty() && a == kernel_base_name(demangle(std::string(printed)));
}

namespace {

// Functions to count: of each (name, arch) printed by both tools, the cuobjdump view only (the
// nvdisasm listing is usually of the same cubin; counting both would double every count).
std::vector<const sass_function*> pick_views(const std::vector<sass_function>& functions) {
  std::set<std::pair<std::string, std::string>> from_cuobjdump;
  for (const auto& f : functions)
    if (f.format == sass_format::cuobjdump) from_cuobjdump.insert({f.name, f.arch});
  std::vector<const sass_function*> picked;
  for (const auto& f : functions)
    if (f.format == sass_format::cuobjdump || !from_cuobjdump.count({f.name, f.arch})) picked.push_back(&f);
  return picked;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

std::string explain(const static_check_result& r, const std::string& arch) {
  std::string wanted = join(r.required_families, " or ");
  std::string where = arch.empty() ? "" : " (" + arch + ")";
  if (r.kernels.empty())
    return fmt::format("no SASS functions{} to check for {}", where, wanted);
  if (!r.required_present)
    return fmt::format("no {} instruction in any of {} SASS function(s){}", wanted, r.kernels.size(), where);
  std::vector<std::string> parts;
  for (const auto& fam : r.present_required) {
    std::vector<std::string> names;
    for (const auto& k : r.kernels)
      if (k.families.count(fam)) names.push_back(kernel_base_name(k.demangled));
    parts.push_back(fmt::format("{} x{} in {}", fam, r.total.at(fam), join(names, ", ")));
  }
  return "found " + join(parts, "; ");
}

}  // namespace

result<static_check_result> static_check(const std::vector<sass_function>& functions,
                                         const static_check_options& options) {
  if (options.required_families.empty()) return make_error("static SASS check: no required family given");
  for (const auto& fam : options.required_families)
    if (!is_known_family(fam))
      return make_error(fmt::format("static SASS check: unknown instruction family '{}' (known: {})", fam,
                                    join(family_names(), ", ")));
  static_check_result r;
  r.required_families = options.required_families;
  for (const auto* f : pick_views(functions)) {
    if (!options.arch.empty() && !f->arch.empty() && f->arch != options.arch) {
      ++r.skipped_other_arch;
      continue;
    }
    kernel_static_counts k{f->name, demangle(f->name), f->arch, f->format,
                           static_cast<int64_t>(f->instructions.size()), count_families(f->instructions)};
    for (const auto& [fam, n] : k.families) r.total[fam] += n;
    r.kernels.push_back(std::move(k));
  }
  for (const auto& fam : r.required_families) {
    auto n = r.total[fam];  // inserts 0 so a reader sees "GMMA: 0", not a missing key
    if (n > 0) r.present_required.push_back(fam);
  }
  r.required_present = !r.present_required.empty();
  r.reason = explain(r, options.arch);
  return r;
}

}  // namespace ptxbench::sass
