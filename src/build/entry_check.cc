#include "build/entry_check.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "build/elf_reader.h"
#include "core/file_io.h"

namespace ptxbench::build {
namespace {

// The layout of ptxbench_signature (include/ptxbench/abi.h): magic, abi_version, count, dtypes[32].
constexpr uint32_t k_signature_magic = 0x50544253u;
constexpr std::size_t k_max_args = 32;
constexpr std::size_t k_signature_bytes = 12 + 4 * k_max_args;

int32_t le32(const std::string& b, std::size_t at) {
  int32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

std::string dtype_label(int32_t code) {
  if (code < 0 || code > static_cast<int32_t>(dtype::boolean)) return fmt::format("dtype #{}", code);
  return std::string(dtype_name(static_cast<dtype>(code)));
}

}  // namespace

result<entry_export> read_entry_export(const std::filesystem::path& so, const std::string& symbol) {
  auto bytes = read_file(so, 1u << 30);
  if (!bytes) return bytes.err();
  auto dyn = parse_elf_dynamic(*bytes);
  if (!dyn) return dyn.err().with_context(so.string());
  entry_export e;
  const auto& defined = dyn->defined;
  auto exported = [&](const std::string& name) { return std::find(defined.begin(), defined.end(), name) != defined.end(); };
  e.entry = exported("ptxbench_entry_" + symbol);
  e.abi_version = exported("ptxbench_abi_version_" + symbol);
  auto sig = read_exported_object(*bytes, "ptxbench_signature_" + symbol, k_signature_bytes);
  if (!sig) return sig.err().with_context(so.string());
  if (*sig && (*sig)->size() == k_signature_bytes && static_cast<uint32_t>(le32(**sig, 0)) == k_signature_magic) {
    const std::string& s = **sig;
    int32_t count = le32(s, 8);
    if (count < 0 || count > static_cast<int32_t>(k_max_args))
      return make_error(fmt::format("{}: ptxbench_signature_{} is malformed (count {})", so.string(), symbol, count));
    e.has_signature = true;
    e.signature_abi = le32(s, 4);
    for (int32_t i = 0; i < count; ++i) e.dtypes.push_back(le32(s, 12 + 4 * static_cast<std::size_t>(i)));
  }
  return e;
}

std::optional<entry_problem> check_entry_export(const entry_export& e, const std::string& symbol, const definition& def) {
  std::vector<const tensor_spec*> tensors;
  for (const auto& t : def.inputs) tensors.push_back(&t);
  for (const auto& t : def.outputs) tensors.push_back(&t);
  std::string names;
  for (const auto* t : tensors) names += (names.empty() ? "" : ", ") + t->name;
  if (!e.entry || !e.abi_version)
    return entry_problem{eval_outcome::compile_error,
                         fmt::format("the built object does not export {}: end the file with PTXBENCH_EXPORT({}, <one "
                                     "dtype per tensor: {}>) after defining void {}(ptxbench::tensor_view..., "
                                     "cudaStream_t)",
                                     e.entry ? "ptxbench_abi_version_" + symbol : "ptxbench_entry_" + symbol, symbol,
                                     names, symbol)};
  if (!e.has_signature) return std::nullopt;  // ABI version 1 or a hand-written entry: checked when called
  if (e.dtypes.size() != tensors.size())
    return entry_problem{eval_outcome::incorrect_shape,
                         fmt::format("{} is exported for {} tensor(s) but the task passes {} ({}: inputs, then outputs)",
                                     symbol, e.dtypes.size(), tensors.size(), names)};
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    int32_t want = static_cast<int32_t>(tensors[i]->type);
    if (e.dtypes[i] >= 0 && e.dtypes[i] != want)
      return entry_problem{eval_outcome::incorrect_dtype,
                           fmt::format("{}: argument {} ({}) is exported as {} but the task passes {}", symbol, i,
                                       tensors[i]->name, dtype_label(e.dtypes[i]), dtype_label(want))};
  }
  return std::nullopt;
}

}  // namespace ptxbench::build
