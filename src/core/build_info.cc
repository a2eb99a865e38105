#include "core/build_info.h"

#ifndef PTXBENCH_GIT_COMMIT
#define PTXBENCH_GIT_COMMIT "unknown"
#endif

namespace ptxbench {

build_info this_build() { return {PTXBENCH_VERSION, PTXBENCH_GIT_COMMIT}; }

}  // namespace ptxbench
