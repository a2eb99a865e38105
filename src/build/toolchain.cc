#include "build/toolchain.h"

#include <sstream>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/process.h"
#include "core/sha256.h"

namespace ptxbench::build {

result<toolchain> find_toolchain(const std::filesystem::path& cuda_root, const std::filesystem::path& cache_dir) {
  namespace fs = std::filesystem;
  auto nvcc = find_executable("nvcc", {cuda_root / "bin"});
  if (!nvcc)
    return make_error(fmt::format("nvcc not found (looked in {} and on PATH); install the CUDA toolkit or set CUDA_HOME",
                                  (cuda_root / "bin").string()));
  fs::path memo;
  if (!cache_dir.empty()) {
    std::error_code ec;
    auto canonical = fs::canonical(*nvcc, ec);
    auto size = fs::file_size(canonical, ec);
    auto mtime = fs::last_write_time(canonical, ec).time_since_epoch().count();
    memo = cache_dir / "toolchain" /
           sha256_hex(fmt::format("{}\n{}\n{}", canonical.string(), size, static_cast<long long>(mtime)));
    if (auto v = read_file(memo, 4096); v && !v->empty()) {
      toolchain tc;
      tc.nvcc = *nvcc;
      tc.cuda_root = nvcc->parent_path().parent_path();
      tc.nvcc_version = *v;
      return tc;
    }
  }
  auto r = run_process({.argv = {nvcc->string(), "--version"}, .timeout_s = 30});
  if (!r.succeeded()) return make_error(fmt::format("{} --version {}", nvcc->string(), describe_exit(r, 30)));
  toolchain tc;
  tc.nvcc = *nvcc;
  tc.cuda_root = nvcc->parent_path().parent_path();
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.find("release") != std::string::npos) tc.nvcc_version = line;
  if (tc.nvcc_version.empty()) tc.nvcc_version = r.out;
  if (!memo.empty()) (void)write_file_atomic(memo, tc.nvcc_version);
  return tc;
}

}  // namespace ptxbench::build
