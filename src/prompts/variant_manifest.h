#pragma once
// The prompt-variant manifest (packs/variants.json): for each knowledge pack, named part lists and,
// per problem family, the variants (ordered part lists) a model can be shown, plus the ablation
// arms that apply to every family. Variants are data: adding one needs no code change.
//
// A part is a path relative to the pack folder ("docs/params.md", "include/ptxkit/tma.cuh", or
// "../common/include/ptxkit/mbarrier.cuh" for a header every pack shares), "@name" for a
// named list, and either may end in "#code" to keep only code (comment lines dropped).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::prompts {

struct prompt_variant {
  std::string name;
  std::string description;
  std::vector<std::string> parts;  ///< unexpanded ("@base", "patterns/x.md", ...)
};

struct pack_manifest {
  std::string name;  ///< folder under packs/, e.g. "sm90a"
  std::string title;
  std::string language = "cuda";  ///< the candidates this pack teaches: "cuda" or "triton"
  /// Per-pack message templates and ABI example (relative to packs/); empty: the manifest's.
  std::string system_template, user_template, abi_example;
  std::map<std::string, std::vector<std::string>> lists;
  std::vector<std::pair<std::string, std::vector<prompt_variant>>> families;  ///< file order
  std::vector<prompt_variant> ablations;                                      ///< valid for every family

  [[nodiscard]] const std::vector<prompt_variant>* family(const std::string& problem) const;
};

struct variant_manifest {
  std::string system_template;  ///< relative to packs/
  std::string user_template;
  std::string abi_example;
  std::vector<pack_manifest> packs;

  [[nodiscard]] const pack_manifest* find_pack(const std::string& name) const;
  /// The pack for a target and candidate language: the target's own pack (targets.json "pack") for
  /// CUDA, the pack whose "language" is "triton" for Triton (one pack serves every target). Null
  /// when there is none.
  [[nodiscard]] const pack_manifest* pack_for(const std::string& target_pack, const std::string& language) const;
  [[nodiscard]] std::string system_template_of(const pack_manifest& p) const {
    return p.system_template.empty() ? system_template : p.system_template;
  }
  [[nodiscard]] std::string user_template_of(const pack_manifest& p) const {
    return p.user_template.empty() ? user_template : p.user_template;
  }
  [[nodiscard]] std::string abi_example_of(const pack_manifest& p) const {
    return p.abi_example.empty() ? abi_example : p.abi_example;
  }
};

/// One resolved part: the file and whether to keep only its code.
struct part_ref {
  std::string path;  ///< relative to the pack folder, as written
  bool code_only = false;
};

/// Parses and validates packs/variants.json (structure, unique names, list references that exist
/// and have no cycles). Errors name the JSON path.
result<variant_manifest> parse_variant_manifest(const ordered_json& j, const std::string& what = "variants.json");
/// Reads <packs_dir>/variants.json and parses it.
result<variant_manifest> load_variant_manifest(const std::filesystem::path& packs_dir);

/// Finds a variant of `problem` by name, by its index in the family ("0" = the first), or among
/// the ablation arms. The error lists the names that exist.
result<prompt_variant> find_variant(const pack_manifest& pack, const std::string& problem, const std::string& name);

/// Expands "@list" references and "#code" suffixes into the ordered file list.
result<std::vector<part_ref>> expand_parts(const pack_manifest& pack, const std::vector<std::string>& parts);

/// Checks that every part of every variant and ablation of every pack names an existing file inside
/// packs_dir, and that the templates exist. Returns the first problem.
status check_manifest_files(const variant_manifest& m, const std::filesystem::path& packs_dir);

}  // namespace ptxbench::prompts
