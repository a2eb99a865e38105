#include "adapt/staged_dir.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/jsonl_file.h"
#include "core/sha256.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

staged_dir::staged_dir(fs::path destination, fs::path staging)
    : m_destination(std::move(destination)), m_staging(std::move(staging)) {}

staged_dir::staged_dir(staged_dir&& other) noexcept
    : m_destination(std::move(other.m_destination)),
      m_staging(std::move(other.m_staging)),
      m_files(std::move(other.m_files)),
      m_done(other.m_done) {
  other.m_done = true;
}

staged_dir::~staged_dir() {
  if (!m_done) abandon();
}

result<staged_dir> staged_dir::create(const fs::path& destination) {
  std::error_code ec;
  if (destination.empty()) return make_error("--out: empty path");
  if (fs::exists(destination, ec)) {
    if (!fs::is_directory(destination, ec) || !fs::is_empty(destination, ec))
      return make_error(fmt::format("{} already exists; choose a new --out (this stage never overwrites)",
                                    destination.string()));
  }
  fs::path parent = destination.has_parent_path() ? destination.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  fs::path staging = destination;
  staging += fmt::format(".partial-{}", ::getpid());
  fs::remove_all(staging, ec);
  if (!fs::create_directories(staging, ec) || ec)
    return make_error(fmt::format("{}: cannot create: {}", staging.string(), ec ? ec.message() : "exists"));
  return staged_dir(destination, staging);
}

result<std::string> staged_dir::write(const std::string& relative, const std::string& content, bool executable) {
  if (!is_safe_relative(relative)) return make_error(fmt::format("internal: unsafe output path '{}'", relative));
  if (auto w = write_file_atomic(m_staging / relative, content); !w) return w.err();
  if (executable) {
    std::error_code ec;
    fs::permissions(m_staging / relative, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add, ec);
    if (ec) return make_error(fmt::format("{}: cannot make it executable: {}", (m_staging / relative).string(), ec.message()));
  }
  std::string hash = sha256_hex(content);
  m_files[relative] = hash;
  return hash;
}

result<std::string> staged_dir::write_deduplicated(const std::string& folder, const std::string& content,
                                                   const std::string& ext) {
  std::string hash = sha256_hex(content);
  std::string relative = folder + "/" + hash + ext;
  if (m_files.count(relative)) return relative;
  auto w = write(relative, content);
  if (!w) return w.err();
  return relative;
}

status staged_dir::commit(ordered_json manifest) {
  ordered_json files = ordered_json::object();
  for (const auto& [path, hash] : m_files) files[path] = hash;
  manifest["files"] = std::move(files);
  if (auto w = write_file_atomic(m_staging / "manifest.json", dump_pretty(manifest) + "\n"); !w) return w.err();
  std::error_code ec;
  if (fs::exists(m_destination, ec)) fs::remove(m_destination, ec);  // an empty folder (checked in create)
  if (std::rename(m_staging.c_str(), m_destination.c_str()) != 0)
    return make_error(fmt::format("{}: cannot move the finished output into place", m_destination.string()));
  m_done = true;
  return ok();
}

void staged_dir::abandon() {
  std::error_code ec;
  if (!m_staging.empty()) fs::remove_all(m_staging, ec);
  m_done = true;
}

bool is_safe_relative(const std::string& relative) {
  if (relative.empty() || relative.front() == '/') return false;
  for (const auto& part : fs::path(relative))
    if (part == ".." || part == ".") return false;
  return true;
}

result<std::string> read_verified(const fs::path& dir, const std::string& relative, const std::string& sha256,
                                  const std::string& what) {
  if (!is_safe_relative(relative))
    return make_error(fmt::format("{}: path '{}' is not a relative path inside {}", what, relative, dir.string()));
  fs::path file = dir / relative;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return make_error(fmt::format("{}: {} is missing", what, file.string()));
  auto text = read_file(file, std::size_t{1} << 30);
  if (!text) return text.err().with_context(what);
  if (!sha256.empty() && sha256_hex(*text) != sha256)
    return make_error(fmt::format("{}: {} does not match its recorded sha256 (changed after it was written)", what,
                                  file.string()));
  return text;
}

result<std::string> read_listed_file(const fs::path& dir, const ordered_json& row, const std::string& path,
                                     const char* key, const char* hash_key, const std::string& what,
                                     const std::string& where, json_errors& errs) {
  auto rel = get_string(row, key, path, errs);
  std::string sha = hash_key ? get_string(row, hash_key, path, errs).value_or("") : "";
  if (!errs.empty()) return errs.to_error().with_context(where);
  if (!hash_key) sha = fs::path(*rel).stem().string();
  return read_verified(dir, *rel, sha, what);
}

result<ordered_json> read_manifest(const fs::path& dir, const std::string& format, const std::string& kind) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error(fmt::format("{}: no such directory", dir.string()));
  fs::path file = dir / "manifest.json";
  if (!fs::is_regular_file(file, ec))
    return make_error(fmt::format("{}: not a {} directory (no manifest.json)", dir.string(), kind));
  auto text = read_text_file(file, 256u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, file.string());
  if (!j) return j.err();
  if (!j->is_object() || j->value("format", "") != format)
    return make_error(fmt::format("{}: not a {} directory (manifest format is {}, expected \"{}\")", dir.string(), kind,
                                  j->is_object() && j->contains("format") ? (*j)["format"].dump() : "missing",
                                  format));
  return j;
}

result<staged_rows> read_staged_rows(const fs::path& dir, const std::string& format, const std::string& kind,
                                     const std::string& rows_file) {
  auto manifest = read_manifest(dir, format, kind);
  if (!manifest) return manifest.err();
  std::string recorded;
  const ordered_json& m = *manifest;
  if (auto files = m.find("files"); files != m.end() && files->is_object())
    if (auto f = files->find(rows_file); f != files->end() && f->is_string()) recorded = f->get<std::string>();
  auto text = read_verified(dir, rows_file, recorded, dir.string());
  if (!text) return text.err();
  // The bytes whose hash was checked are the ones parsed (one read, nothing swapped in between).
  auto rows = parse_jsonl_objects(*text, (dir / rows_file).string());
  if (!rows) return rows.err();
  return staged_rows{std::move(*manifest), std::move(*rows)};
}

}  // namespace ptxbench::adapt
