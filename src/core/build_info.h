#pragma once
// Which PTXBench produced a result: recorded in every GPU verdict's environment so a committed number
// can be traced back to the code that measured it.
#include <string>

namespace ptxbench {

struct build_info {
  std::string version;     // the project version from CMake
  std::string git_commit;  // HEAD when CMake last configured, "+dirty" if tracked files differed; "unknown" outside git
};

build_info this_build();

}  // namespace ptxbench
