#include "core/record_name.h"

#include <fmt/format.h>

namespace ptxbench {

status check_record_name(const std::string& name, const std::string& what) {
  if (name.empty()) return make_error(fmt::format("{}: empty name; a run records it and the metrics need one", what));
  for (std::size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f)
      return make_error(fmt::format("{}: control character (0x{:02x}) at offset {} in the name; names must be one line "
                                    "of printable text",
                                    what, c, i));
  }
  return ok();
}

}  // namespace ptxbench
