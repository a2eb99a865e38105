#include "prompts/variant_manifest.h"

#include <set>
#include <system_error>

#include "core/file_io.h"

namespace ptxbench::prompts {
namespace {

std::vector<prompt_variant> parse_variant_map(const ordered_json& j, const std::string& path, json_errors& errs) {
  std::vector<prompt_variant> out;
  if (!expect_object(j, path, errs)) return out;
  for (const auto& [name, v] : j.items()) {
    const std::string vp = json_child(path, name);
    if (!expect_object(v, vp, errs)) continue;
    reject_unknown_keys(v, {"description", "parts"}, vp, errs);
    prompt_variant pv;
    pv.name = name;
    pv.description = get_string(v, "description", vp, errs).value_or("");
    pv.parts = get_string_list(v, "parts", vp, errs).value_or(std::vector<std::string>{});
    if (pv.parts.empty()) errs.add(json_child(vp, "parts"), "a variant needs at least one part");
    out.push_back(std::move(pv));
  }
  return out;
}

pack_manifest parse_pack(const std::string& name, const ordered_json& j, const std::string& path, json_errors& errs) {
  pack_manifest p;
  p.name = name;
  if (!expect_object(j, path, errs)) return p;
  reject_unknown_keys(j, {"title", "language", "system_template", "user_template", "abi_example", "lists", "variants",
                          "ablations"},
                      path, errs);
  p.title = get_string(j, "title", path, errs).value_or("");
  p.language = get_string(j, "language", path, errs, false).value_or("cuda");
  if (p.language != "cuda" && p.language != "triton")
    errs.add(json_child(path, "language"), "expected \"cuda\" or \"triton\", got \"" + p.language + "\"");
  p.system_template = get_string(j, "system_template", path, errs, false).value_or("");
  p.user_template = get_string(j, "user_template", path, errs, false).value_or("");
  p.abi_example = get_string(j, "abi_example", path, errs, false).value_or("");
  if (j.contains("lists") && expect_object(j["lists"], json_child(path, "lists"), errs))
    for (const auto& [lname, l] : j["lists"].items())
      p.lists[lname] =
          get_string_list(j["lists"], lname, json_child(path, "lists"), errs).value_or(std::vector<std::string>{});
  const std::string fp = json_child(path, "variants");
  if (!j.contains("variants"))
    errs.add(fp, "missing (problem family -> variants)");
  else if (expect_object(j["variants"], fp, errs))
    for (const auto& [family, vs] : j["variants"].items())
      p.families.emplace_back(family, parse_variant_map(vs, json_child(fp, family), errs));
  if (j.contains("ablations")) p.ablations = parse_variant_map(j["ablations"], json_child(path, "ablations"), errs);
  return p;
}

/// Expands one part string into `out`, following "@list" references (depth-first, cycle-checked).
status expand_one(const pack_manifest& pack, const std::string& part, bool code_only, std::vector<std::string>& stack,
                  std::vector<part_ref>& out) {
  std::string body = part;
  if (body.size() > 5 && body.compare(body.size() - 5, 5, "#code") == 0) {
    body.resize(body.size() - 5);
    code_only = true;
  }
  if (body.empty()) return make_error("empty part name");
  if (body[0] != '@') {
    out.push_back({body, code_only});
    return ok();
  }
  const std::string list = body.substr(1);
  auto it = pack.lists.find(list);
  if (it == pack.lists.end()) return make_error("pack '" + pack.name + "' has no list '" + list + "'");
  for (const auto& s : stack)
    if (s == list) return make_error("pack '" + pack.name + "': list '" + list + "' includes itself");
  stack.push_back(list);
  for (const auto& p : it->second)
    if (auto st = expand_one(pack, p, code_only, stack, out); !st) return st;
  stack.pop_back();
  return ok();
}

}  // namespace

const std::vector<prompt_variant>* pack_manifest::family(const std::string& problem) const {
  for (const auto& [name, vs] : families)
    if (name == problem) return &vs;
  return nullptr;
}

const pack_manifest* variant_manifest::find_pack(const std::string& name) const {
  for (const auto& p : packs)
    if (p.name == name) return &p;
  return nullptr;
}

const pack_manifest* variant_manifest::pack_for(const std::string& target_pack, const std::string& language) const {
  if (language == "cuda") {
    const pack_manifest* p = find_pack(target_pack);
    return p && p->language == "cuda" ? p : nullptr;
  }
  for (const auto& p : packs)
    if (p.language == language) return &p;
  return nullptr;
}

result<variant_manifest> parse_variant_manifest(const ordered_json& j, const std::string& what) {
  json_errors errs;
  variant_manifest m;
  if (!expect_object(j, "", errs)) return errs.to_error().with_context(what);
  reject_unknown_keys(j, {"format", "description", "system_template", "user_template", "abi_example", "packs"}, "",
                      errs);
  if (auto f = get_string(j, "format", "", errs); f && *f != "ptxbench.variants/1")
    errs.add("format", "expected \"ptxbench.variants/1\", got \"" + *f + "\"");
  get_string(j, "description", "", errs, false);
  m.system_template = get_string(j, "system_template", "", errs).value_or("");
  m.user_template = get_string(j, "user_template", "", errs).value_or("");
  m.abi_example = get_string(j, "abi_example", "", errs).value_or("");
  if (!j.contains("packs"))
    errs.add("packs", "missing");
  else if (expect_object(j["packs"], "packs", errs))
    for (const auto& [name, pj] : j["packs"].items())
      m.packs.push_back(parse_pack(name, pj, json_child("packs", name), errs));
  if (!errs.empty()) return errs.to_error().with_context(what);
  for (const auto& p : m.packs) {  // names must be unambiguous, lists must expand
    std::set<std::string> ablation_names;
    for (const auto& a : p.ablations) ablation_names.insert(a.name);
    for (const auto& [family, vs] : p.families)
      for (const auto& v : vs) {
        if (ablation_names.count(v.name))
          return make_error(what + ": packs." + p.name + ".variants." + family + "." + v.name +
                            ": the name is also an ablation arm");
        if (auto e = expand_parts(p, v.parts); !e)
          return e.err().with_context(what + ": packs." + p.name + ".variants." + family + "." + v.name);
      }
    for (const auto& a : p.ablations)
      if (auto e = expand_parts(p, a.parts); !e)
        return e.err().with_context(what + ": packs." + p.name + ".ablations." + a.name);
  }
  return m;
}

result<variant_manifest> load_variant_manifest(const std::filesystem::path& packs_dir) {
  const auto path = packs_dir / "variants.json";
  auto text = read_text_file(path, 1u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, path.string());
  if (!j) return j.err();
  return parse_variant_manifest(*j, path.string());
}

result<prompt_variant> find_variant(const pack_manifest& pack, const std::string& problem, const std::string& name) {
  const auto* vs = pack.family(problem);
  std::string names;
  if (vs) {
    for (std::size_t i = 0; i < vs->size(); ++i) {
      if ((*vs)[i].name == name || std::to_string(i) == name) return (*vs)[i];
      names += (names.empty() ? "" : ", ") + (*vs)[i].name;
    }
  }
  for (const auto& a : pack.ablations) {
    if (a.name == name) return a;
    names += (names.empty() ? "" : ", ") + a.name;
  }
  if (!vs) return make_error("pack '" + pack.name + "' has no variants for problem family '" + problem + "'");
  return make_error("no variant '" + name + "' for problem family '" + problem + "' in pack '" + pack.name +
                    "' (choose one of: " + names + ")");
}

result<std::vector<part_ref>> expand_parts(const pack_manifest& pack, const std::vector<std::string>& parts) {
  std::vector<part_ref> out;
  std::vector<std::string> stack;
  for (const auto& p : parts)
    if (auto st = expand_one(pack, p, false, stack, out); !st) return st.err();
  return out;
}

status check_manifest_files(const variant_manifest& m, const std::filesystem::path& packs_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(packs_dir, ec);
  auto inside = [&](const fs::path& p) {
    const fs::path c = fs::weakly_canonical(p, ec);
    const auto rel = c.lexically_relative(root);
    return !rel.empty() && *rel.begin() != "..";
  };
  for (const auto* t : {&m.system_template, &m.user_template, &m.abi_example})
    if (!fs::is_regular_file(packs_dir / *t, ec)) return make_error("packs/" + *t + ": file not found");
  for (const auto& p : m.packs) {
    for (const auto* t : {&p.system_template, &p.user_template, &p.abi_example})
      if (!t->empty() && !fs::is_regular_file(packs_dir / *t, ec))
        return make_error("packs/" + *t + ": file not found (pack " + p.name + ")");
    auto check = [&](const std::string& where, const std::vector<std::string>& parts) -> status {
      auto refs = expand_parts(p, parts);
      if (!refs) return refs.err().with_context(where);
      for (const auto& r : *refs) {
        const fs::path f = packs_dir / p.name / r.path;
        if (!inside(f)) return make_error(where + ": part '" + r.path + "' leaves the packs folder");
        if (!fs::is_regular_file(f, ec))
          return make_error(where + ": part '" + r.path + "' not found (" + f.string() + ")");
      }
      return ok();
    };
    for (const auto& [family, vs] : p.families)
      for (const auto& v : vs)
        if (auto st = check("packs." + p.name + ".variants." + family + "." + v.name, v.parts); !st) return st;
    for (const auto& a : p.ablations)
      if (auto st = check("packs." + p.name + ".ablations." + a.name, a.parts); !st) return st;
  }
  return ok();
}

}  // namespace ptxbench::prompts
