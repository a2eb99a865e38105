#include "cli/context.h"

#include <cstdio>
#include <cstdlib>

namespace ptxbench::cli {
namespace fs = std::filesystem;

static std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

context make_context() {
  context ctx;
  ctx.root = env_or("PTXBENCH_ROOT", PTXBENCH_SOURCE_ROOT);
  std::string home = env_or("HOME", "/tmp");
  ctx.cache_dir = env_or("PTXBENCH_CACHE", env_or("XDG_CACHE_HOME", home + "/.cache") + "/ptxbench");
  const char* cache_env = std::getenv("PTXBENCH_CACHE");
  ctx.cache_dir_named_by = cache_env && *cache_env ? "PTXBENCH_CACHE" : "cache folder";
#ifdef PTXBENCH_CUDA_ROOT
  ctx.cuda_root = env_or("CUDA_HOME", PTXBENCH_CUDA_ROOT);
#else
  ctx.cuda_root = env_or("CUDA_HOME", "/usr/local/cuda");
#endif
  return ctx;
}

exit_status report_error(const std::string& message, exit_status code) {
  std::fprintf(stderr, "ptxbench: %s\n", message.c_str());
  return code;
}

}  // namespace ptxbench::cli
