#pragma once
// Reading disassembled SASS: `cuobjdump -sass` text and `nvdisasm -c [-g]` text into per-function
// instruction lists. Only executable instruction lines count (those that begin with an offset
// comment such as `/*0a30*/` followed by an opcode); function names, headers, labels, comments and
// the encoding-only continuation lines of cuobjdump never do, so the word "HGMMA" in a kernel name
// or a comment cannot make a kernel look like it uses wgmma.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxbench::sass {

/// Which tool printed a function.
enum class sass_format { cuobjdump, nvdisasm };

/// Returns "cuobjdump" or "nvdisasm".
std::string_view format_name(sass_format f);

struct sass_instruction {
  uint64_t offset = 0;          ///< bytes from the function start, from the `/*0a30*/` comment
  std::string guard;            ///< "@P0", "@!UP1", or empty
  std::string mnemonic;         ///< opcode with modifiers: "HGMMA.64x8x16.F32.BF16"
  std::string opcode;           ///< base opcode: "HGMMA"
  std::string operands;         ///< "R24, gdesc[UR4], RZ, !UPT, gsb0" (no trailing ';')
  std::string source_location;  ///< "./probe.cu:95" when nvdisasm -g printed line info, else empty

  bool operator==(const sass_instruction&) const = default;
};

struct sass_function {
  std::string name;    ///< mangled, as the tool printed it
  std::string arch;    ///< "sm_90a"; empty when the text did not say
  sass_format format = sass_format::cuobjdump;
  int first_line = 0;  ///< 1-based line of the function header in the parsed text
  std::vector<sass_instruction> instructions;
};

/// Splits one instruction's text ("@!P0 BRA 0x3b0", "NOP", "HGMMA.64x8x16.F32.BF16 R24, ...") into
/// guard, mnemonic, base opcode and operands; a trailing ';' and anything after it is dropped.
/// Returns nullopt when the text does not start with an uppercase SASS opcode.
std::optional<sass_instruction> split_instruction(std::string_view text);

/// Parses cuobjdump -sass and/or nvdisasm text (both may appear in one text, as when a .so and the
/// cubin extracted from it are disassembled one after the other). Functions repeated with the same
/// name, arch, format and instructions (the same cubin embedded twice) are kept once.
/// Fails on empty text, on text with neither format's markers, and on an instruction line that
/// appears before any function header (naming the line).
result<std::vector<sass_function>> parse_sass(std::string_view text);

}  // namespace ptxbench::sass
