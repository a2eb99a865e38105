#include "prompts/prompt_renderer.h"

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/json_check.h"
#include "prompts/variant_manifest.h"
#include "suite/task_view.h"

namespace ptxbench::prompts {
namespace {

constexpr std::size_t kMaxPartBytes = 1u << 20;

/// Replaces every "{{key}}" in `text`; an unknown placeholder is an error naming the template.
result<std::string> fill(const std::string& text, const std::vector<std::pair<std::string, std::string>>& values,
                         const std::string& what) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open);
    if (close == std::string::npos) return make_error(what + ": unclosed {{ placeholder");
    const std::string key = text.substr(open + 2, close - open - 2);
    const std::string* value = nullptr;
    for (const auto& [k, v] : values)
      if (k == key) value = &v;
    if (!value) return make_error(what + ": unknown placeholder {{" + key + "}}");
    out += text.substr(pos, open - pos);
    out += *value;
    pos = close + 2;
  }
  out += text.substr(pos);
  return out;
}

std::string trim_trailing_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string abi_dtype(dtype t) {
  switch (t) {
    case dtype::float32:
      return "PTXBENCH_FLOAT32";
    case dtype::float16:
      return "PTXBENCH_FLOAT16";
    case dtype::bfloat16:
      return "PTXBENCH_BFLOAT16";
    case dtype::float8_e4m3fn:
      return "PTXBENCH_FLOAT8_E4M3FN";
    case dtype::float8_e5m2:
      return "PTXBENCH_FLOAT8_E5M2";
    case dtype::float4_e2m1:
      return "PTXBENCH_FLOAT4_E2M1";
    case dtype::int64:
      return "PTXBENCH_INT64";
    case dtype::int32:
      return "PTXBENCH_INT32";
    case dtype::int16:
      return "PTXBENCH_INT16";
    case dtype::int8:
      return "PTXBENCH_INT8";
    case dtype::boolean:
      return "PTXBENCH_BOOL";
  }
  return "PTXBENCH_FLOAT32";
}

/// Moves every markdown heading outside fenced code one level down, so pack documents nest under the
/// system message's "# Reference material".
std::string demote_headings(const std::string& text) {
  std::string out;
  bool in_fence = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.rfind("```", 0) == 0) in_fence = !in_fence;
    if (!in_fence && line.rfind("#", 0) == 0 && line.find_first_not_of('#') != std::string::npos &&
        line[line.find_first_not_of('#')] == ' ')
      out += "#";
    out += line + "\n";
  }
  return out;
}

/// A person-readable name for a baseline identifier from suite/tasks.json.
std::string baseline_name(const std::string& id) {
  if (id == "cublaslt_gemm") return "cuBLASLt (bf16 GEMM)";
  if (id == "cudnn_sdpa_fwd") return "cuDNN SDPA forward";
  if (id == "cudnn_sdpa_bwd") return "cuDNN SDPA backward";
  if (id == "cudnn_sdpa_gqa") return "cuDNN SDPA forward (paged/ragged, grouped KV heads)";
  return id.empty() ? std::string("the vendor library") : id;
}

/// Renders one pack file for the reference section: docs verbatim, headers in a cuda fence under
/// their include name.
prompt_part render_part(const std::string& rel_path, const std::string& content, bool code) {
  const std::size_t inc = rel_path.rfind("include/");
  if (inc != std::string::npos && rel_path.size() > 4 && rel_path.compare(rel_path.size() - 4, 4, ".cuh") == 0) {
    const std::string name = rel_path.substr(inc + 8);
    const std::string body = trim_trailing_newlines(code ? code_only(content) : content);
    return {name, "header",
            fmt::format("## Header <{}>{}\n\n```cuda\n{}\n```\n", name, code ? " (code only)" : "", body)};
  }
  return {rel_path, "doc", trim_trailing_newlines(demote_headings(code ? code_only(content) : content)) + "\n"};
}

}  // namespace

std::string code_only(const std::string& source) {
  std::string out;
  std::size_t pos = 0;
  bool last_blank = true;
  while (pos < source.size()) {
    std::size_t eol = source.find('\n', pos);
    if (eol == std::string::npos) eol = source.size();
    const std::string line = source.substr(pos, eol - pos);
    pos = eol + 1;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
    const bool blank = first == std::string::npos;
    if (blank && last_blank) continue;
    out += line + "\n";
    last_blank = blank;
  }
  return out;
}

std::string abi_signature(const definition& d) {
  std::string params, dtypes;
  auto add = [&](const tensor_spec& t) {
    params += fmt::format("ptxbench::tensor_view {}, ", t.name);
    dtypes += ", " + abi_dtype(t.type);
  };
  for (const auto& t : d.inputs) add(t);
  for (const auto& t : d.outputs) add(t);
  return fmt::format("void run({}cudaStream_t stream);\nPTXBENCH_EXPORT(run{})", params, dtypes);
}

std::string python_signature(const definition& d) {
  std::string params, notes;
  auto add = [&](const tensor_spec& t, bool output) {
    params += (params.empty() ? "" : ", ") + t.name + ": torch.Tensor";
    std::string shape;
    if (t.shape)
      for (const auto& a : *t.shape) shape += (shape.empty() ? "" : ", ") + a;
    notes += fmt::format("\n    # {}: {} [{}] {}{}", output ? "output" : "input", t.name, shape, dtype_name(t.type),
                         output ? " (write every element)" : "");
  };
  for (const auto& t : d.inputs) add(t, false);
  for (const auto& t : d.outputs) add(t, true);
  return fmt::format("def run({}) -> None:{}", params, notes);
}

result<rendered_prompt> render_prompt(const suite& s, const task& t, const std::string& variant,
                                      const target_info& target, const std::filesystem::path& packs_dir,
                                      const std::string& language) {
  if (!s.find_target(target.name)) return make_error("target '" + target.name + "' is not in suite/targets.json");
  bool targeted = false;
  for (const auto& name : t.targets) targeted = targeted || name == target.name;
  if (!targeted) return make_error("task '" + t.name + "' does not target '" + target.name + "'");
  auto manifest = load_variant_manifest(packs_dir);
  if (!manifest) return manifest.err();
  const bool triton = language == "triton";
  if (language != "cuda" && !triton) return make_error("unknown candidate language '" + language + "' (cuda or triton)");
  const pack_manifest* pack = manifest->pack_for(target.pack, language);
  if (!pack)
    return make_error(triton ? std::string("packs/variants.json has no pack with \"language\": \"triton\"")
                             : "packs/variants.json has no pack '" + target.pack + "' (target " + target.name + ")");
  auto v = find_variant(*pack, t.problem, variant);
  if (!v) return v.err();
  auto refs = expand_parts(*pack, v->parts);
  if (!refs) return refs.err();

  rendered_prompt out{t.name, target.name, pack->name, t.problem, v->name, "", "", {}};
  std::string reference;
  std::vector<prompt_part> ref_parts;
  for (const auto& r : *refs) {
    auto content = read_text_file(packs_dir / pack->name / r.path, kMaxPartBytes);
    if (!content) return content.err().with_context("variant '" + v->name + "'");
    prompt_part part = render_part(r.path, *content, r.code_only);
    reference += (reference.empty() ? "" : "\n") + part.text;
    ref_parts.push_back(std::move(part));
  }
  const std::string system_template = manifest->system_template_of(*pack);
  const std::string user_template = manifest->user_template_of(*pack);
  auto example = read_text_file(packs_dir / manifest->abi_example_of(*pack), kMaxPartBytes);
  if (!example) return example.err();
  auto sys_tpl = read_text_file(packs_dir / system_template, kMaxPartBytes);
  if (!sys_tpl) return sys_tpl.err();
  auto user_tpl = read_text_file(packs_dir / user_template, kMaxPartBytes);
  if (!user_tpl) return user_tpl.err();

  bool has_headers = false;
  for (const auto& part : ref_parts) has_headers = has_headers || part.kind == "header";
  const std::string headers_note =
      has_headers ? ", and the knowledge-pack wrappers `<ptxkit/...>` shown under Reference material: include those "
                    "headers instead of pasting them, and write your own inline PTX wherever they fall short"
                  : "";
  std::string families;
  for (const auto& f : target.required_families) families += (families.empty() ? "" : " or ") + f;
  const std::string example_block =
      std::string(triton ? "```python\n" : "```cuda\n") + trim_trailing_newlines(*example) + "\n```";
  const std::vector<std::pair<std::string, std::string>> values = {
      {"target_gpu", target.gpu_name},
      {"target", target.name},
      {"arch", target.arch},
      {"gencode", target.gencode},
      {"required_families", families},
      {"pack", pack->name},
      {"pack_title", pack->title},
      {"headers_note", headers_note},
      {"task_name", t.name},
      {"baseline", baseline_name(t.baseline)},
      {"atol", fmt::format("{:g}", t.tol.atol)},
      {"rtol", fmt::format("{:g}", t.tol.rtol)},
      {"abi_signature", triton ? python_signature(t.def) : abi_signature(t.def)},
      {"task_json", dump_pretty(task_view_json(t))},
      {"abi_example", example_block},
      {"reference", trim_trailing_newlines(reference)},
  };
  auto system = fill(*sys_tpl, values, "packs/" + system_template);
  if (!system) return system.err();
  auto user = fill(*user_tpl, values, "packs/" + user_template);
  if (!user) return user.err();
  out.system = trim_trailing_newlines(*system) + "\n";
  out.user = trim_trailing_newlines(*user) + "\n";

  // Parts in message order for the size report; "instructions" is the system template's own text.
  auto bare_values = values;
  for (auto& [k, val] : bare_values)
    if (k == "reference" || k == "abi_example") val.clear();
  auto instructions = fill(*sys_tpl, bare_values, "packs/" + system_template);
  if (!instructions) return instructions.err();
  out.parts.push_back({"instructions", "instructions", *instructions});
  for (auto& p : ref_parts) out.parts.push_back(std::move(p));
  out.parts.push_back({"abi_example", "example", example_block});
  out.parts.push_back({"task", "user", out.user});
  return out;
}

prompt_sizes measure_prompt(const rendered_prompt& p, const token_estimator& estimator) {
  prompt_sizes s;
  s.method = estimator.method();
  s.system_chars = p.system.size();
  s.user_chars = p.user.size();
  s.system_tokens = estimator.count(p.system);
  s.user_tokens = estimator.count(p.user);
  for (const auto& part : p.parts)
    s.parts.push_back({part.name, part.kind, part.text.size(), estimator.count(part.text)});
  return s;
}

}  // namespace ptxbench::prompts
