#pragma once
// Checks of output paths (`--out`), made before any work starts, so a typo costs nothing: an empty
// path, a folder where a file is expected (or the reverse), a parent that is a file, or a place
// this process cannot write into is refused with one line (exit 2). A path that passes can still
// fail later (a full disk): that is an infrastructure error.

#include <string>

#include "core/result.h"

namespace ptxbench::cli {

/// `path` will be written as a file (atomically: a temporary beside it, then a rename).
status check_output_file(const std::string& path, const std::string& option);

/// `path` is a folder that will be created if needed and written into.
status check_output_dir(const std::string& path, const std::string& option);

}  // namespace ptxbench::cli
