#pragma once
// Just enough of an ELF64 reader for the link gate: the shared libraries a built object asks for
// (DT_NEEDED), the dynamic symbols it leaves undefined or defines, and the bytes of an exported
// constant (the kernel ABI's signature record). Written here (≈150 lines) rather than
// parsing readelf/nm text: libelf is not in our dependency set and text output varies by version;
// every offset is bounds-checked because the file came from untrusted source code.

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxbench::build {

struct elf_symbol {
  std::string name;
  bool weak = false;
};

struct elf_dynamic_info {
  std::vector<std::string> needed;        ///< DT_NEEDED entries, in order
  std::vector<std::string> runpath;       ///< DT_RUNPATH / DT_RPATH strings
  std::vector<elf_symbol> undefined;      ///< undefined dynamic symbols (weak ones flagged)
  std::vector<std::string> defined;       ///< defined global/weak dynamic symbols
};

/// Reads the dynamic section and dynamic symbol table of a 64-bit little-endian ELF file.
/// Fails with a one-line reason for anything that is not such a file or is malformed.
result<elf_dynamic_info> read_elf_dynamic(const std::filesystem::path& path);
result<elf_dynamic_info> parse_elf_dynamic(const std::string& bytes);

/// The initialised bytes of the exported data object `name` (a defined OBJECT in .dynsym), or
/// nullopt when the file exports no such object. Fails for a malformed file or an object larger
/// than max_size or outside the file.
result<std::optional<std::string>> read_exported_object(const std::string& elf_bytes, const std::string& name,
                                                        std::size_t max_size);

}  // namespace ptxbench::build
