#include "cli/output_paths.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace ptxbench::cli {
namespace fs = std::filesystem;
namespace {

// The folder that would hold `path` once its missing parents are created: the nearest ancestor
// that exists must be a folder this process may create entries in.
status check_writable_ancestor(const fs::path& path, const std::string& option, const std::string& shown) {
  fs::path at = fs::absolute(path).parent_path();
  std::error_code ec;
  while (!at.empty() && !fs::exists(fs::symlink_status(at, ec)) && at != at.parent_path()) at = at.parent_path();
  auto st = fs::status(at, ec);
  if (ec || !fs::exists(st)) return make_error(fmt::format("{} {}: {} does not exist", option, shown, at.string()));
  if (!fs::is_directory(st))
    return make_error(fmt::format("{} {}: {} is not a folder", option, shown, at.string()));
  if (::access(at.c_str(), W_OK | X_OK) != 0)
    return make_error(fmt::format("{} {}: cannot write in {} ({})", option, shown, at.string(), std::strerror(errno)));
  return ok();
}

}  // namespace

status check_output_file(const std::string& path, const std::string& option) {
  if (path.empty()) return make_error(fmt::format("{}: empty path; give the file to write", option));
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (fs::is_directory(st)) return make_error(fmt::format("{} {}: is a folder, expected a file name", option, path));
  if (fs::exists(st) && !fs::is_regular_file(st))
    return make_error(fmt::format("{} {}: is not a regular file", option, path));
  if (path.back() == '/') return make_error(fmt::format("{} {}: ends in '/', expected a file name", option, path));
  return check_writable_ancestor(fs::path(path), option, path);
}

status check_output_dir(const std::string& path, const std::string& option) {
  if (path.empty()) return make_error(fmt::format("{}: empty path; give the folder to write into", option));
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) return make_error(fmt::format("{} {}: is a file, expected a folder", option, path));
    if (::access(path.c_str(), W_OK | X_OK) != 0)
      return make_error(fmt::format("{} {}: cannot write in it ({})", option, path, std::strerror(errno)));
    return ok();
  }
  return check_writable_ancestor(fs::path(path) / "x", option, path);
}

}  // namespace ptxbench::cli
