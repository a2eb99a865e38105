#include "suite/solution.h"

#include <set>

#include <fmt/format.h>

namespace ptxbench {

std::string solution::entry_file() const {
  auto p = spec.entry_point.find("::");
  return p == std::string::npos ? spec.entry_point : spec.entry_point.substr(0, p);
}

std::string solution::entry_symbol() const {
  auto p = spec.entry_point.find("::");
  return p == std::string::npos ? std::string() : spec.entry_point.substr(p + 2);
}

const source_file* solution::find_source(const std::string& p) const {
  for (const auto& s : sources)
    if (s.path == p) return &s;
  return nullptr;
}

std::optional<std::string> unsafe_source_path_reason(const std::string& path) {
  if (path.empty()) return "empty path";
  if (path.front() == '/') return "absolute path";
  if (path.find('\\') != std::string::npos) return "backslash in path";
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f) return "control character in path";
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") return "'..' in path";
    if (part.empty() || part == ".") return "empty or '.' component in path";
    start = end + 1;
  }
  return std::nullopt;
}

namespace {
const std::set<std::string> k_languages = {"python", "triton", "cpp", "cuda", "tilelang"};
}

result<solution> solution_from_json(const ordered_json& j, const std::string& path) {
  json_errors errs;
  if (!expect_object(j, path, errs)) return errs.to_error();
  reject_unknown_keys(j, {"name", "definition", "author", "spec", "sources", "description"}, path, errs);
  solution s;
  s.name = get_string(j, "name", path, errs).value_or("");
  s.definition = get_string(j, "definition", path, errs).value_or("");
  s.author = get_string(j, "author", path, errs).value_or("");
  s.description = get_string(j, "description", path, errs, false, false).value_or("");

  std::string spec_path = json_child(path, "spec");
  if (!j.contains("spec")) {
    errs.add(spec_path, "missing required field");
  } else if (expect_object(j["spec"], spec_path, errs)) {
    const auto& sj = j["spec"];
    reject_unknown_keys(sj, {"language", "target_hardware", "entry_point", "dependencies",
                             "destination_passing_style", "binding"}, spec_path, errs);
    s.spec.language = get_string(sj, "language", spec_path, errs).value_or("");
    if (!s.spec.language.empty() && !k_languages.count(s.spec.language))
      errs.add(json_child(spec_path, "language"),
               fmt::format("unknown language \"{}\" (expected python, triton, cpp, cuda or tilelang)", s.spec.language));
    s.spec.target_hardware = get_string_list(sj, "target_hardware", spec_path, errs).value_or(std::vector<std::string>{});
    if (sj.contains("target_hardware") && s.spec.target_hardware.empty())
      errs.add(json_child(spec_path, "target_hardware"), "expected at least one entry");
    s.spec.entry_point = get_string(sj, "entry_point", spec_path, errs).value_or("");
    if (!s.spec.entry_point.empty()) {
      auto first = s.spec.entry_point.find("::");
      if (first == std::string::npos || s.spec.entry_point.find("::", first + 2) != std::string::npos ||
          first == 0 || first + 2 == s.spec.entry_point.size())
        errs.add(json_child(spec_path, "entry_point"),
                 fmt::format("expected \"file::symbol\" with exactly one '::', got \"{}\"", s.spec.entry_point));
    }
    s.spec.dependencies = get_string_list(sj, "dependencies", spec_path, errs, false).value_or(std::vector<std::string>{});
    s.spec.destination_passing_style = get_bool(sj, "destination_passing_style", spec_path, errs, false).value_or(true);
    s.spec.binding = get_string(sj, "binding", spec_path, errs, false);
  }

  std::string src_path = json_child(path, "sources");
  if (!j.contains("sources")) {
    errs.add(src_path, "missing required field");
  } else if (expect_array(j["sources"], src_path, errs)) {
    if (j["sources"].empty()) errs.add(src_path, "expected at least one source file");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < j["sources"].size(); ++i) {
      std::string here = json_index(src_path, i);
      const auto& f = j["sources"][i];
      if (!expect_object(f, here, errs)) continue;
      reject_unknown_keys(f, {"path", "content"}, here, errs);
      auto p = get_string(f, "path", here, errs);
      auto c = get_string(f, "content", here, errs, true, false);
      if (!p || !c) continue;
      if (auto why = unsafe_source_path_reason(*p)) {
        errs.add(json_child(here, "path"), fmt::format("unsafe path \"{}\": {}", *p, *why));
        continue;
      }
      if (!seen.insert(*p).second) errs.add(json_child(here, "path"), fmt::format("duplicate path \"{}\"", *p));
      // The same rule as for a .cu file read from disk (core/file_io.h check_text): sources are text.
      if (auto nul = c->find('\0'); nul != std::string::npos)
        errs.add(json_child(here, "content"), fmt::format("binary content (NUL byte at offset {}), expected text", nul));
      s.sources.push_back({*p, *c});
    }
  }
  if (errs.empty() && !s.spec.entry_point.empty() && !s.find_source(s.entry_file()))
    errs.add(json_child(spec_path, "entry_point"),
             fmt::format("entry file \"{}\" is not among the sources", s.entry_file()));
  if (!errs.empty()) return errs.to_error();
  return s;
}

ordered_json to_json(const solution& s) {
  ordered_json j;
  j["name"] = s.name;
  j["definition"] = s.definition;
  j["author"] = s.author;
  if (!s.description.empty()) j["description"] = s.description;
  ordered_json spec;
  spec["language"] = s.spec.language;
  spec["target_hardware"] = s.spec.target_hardware;
  spec["entry_point"] = s.spec.entry_point;
  spec["dependencies"] = s.spec.dependencies;
  spec["destination_passing_style"] = s.spec.destination_passing_style;
  if (s.spec.binding) spec["binding"] = *s.spec.binding;
  j["spec"] = spec;
  ordered_json sources = ordered_json::array();
  for (const auto& f : s.sources) sources.push_back({{"path", f.path}, {"content", f.content}});
  j["sources"] = sources;
  return j;
}

}  // namespace ptxbench
