#pragma once
// An output directory that appears whole or not at all. The stages that are not resumable (mine,
// pairs, kernelgen collect, export) write into DIR.partial-<pid> beside the destination, record the
// sha256 of every file they write, and rename the folder into place as their last step. A failure or
// a kill leaves the destination untouched (and at worst a stale *.partial-* folder, which the next
// run does not read).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

class staged_dir {
 public:
  /// Refuses a destination that exists and is not an empty folder; creates the staging folder.
  static result<staged_dir> create(const std::filesystem::path& destination);

  /// Writes `content` at `relative` (folders created) and records its sha256. Returns the hash.
  /// `executable`: also executable by everyone who may read it (a script).
  result<std::string> write(const std::string& relative, const std::string& content, bool executable = false);
  /// Writes a content-addressed copy under `folder`/<sha256>.<ext> once; returns its relative path.
  result<std::string> write_deduplicated(const std::string& folder, const std::string& content, const std::string& ext);

  /// path → sha256 of every file written so far.
  [[nodiscard]] const std::map<std::string, std::string>& files() const { return m_files; }
  [[nodiscard]] const std::filesystem::path& destination() const { return m_destination; }

  /// Writes manifest.json (with "files" set to files()) and renames the folder into place.
  status commit(ordered_json manifest);
  /// Removes the staging folder (called by the destructor when commit() did not run).
  void abandon();

  staged_dir(staged_dir&& other) noexcept;
  staged_dir& operator=(staged_dir&&) = delete;
  staged_dir(const staged_dir&) = delete;
  ~staged_dir();

 private:
  staged_dir(std::filesystem::path destination, std::filesystem::path staging);
  std::filesystem::path m_destination, m_staging;
  std::map<std::string, std::string> m_files;
  bool m_done = false;
};

/// Reads DIR/relative and checks its sha256 (when `sha256` is not empty); errors name `what`.
result<std::string> read_verified(const std::filesystem::path& dir, const std::string& relative,
                                  const std::string& sha256, const std::string& what);

/// The text of a file a row of a staged folder lists: row[key] is its path inside `dir`, checked
/// against the sha256 in row[hash_key] — or, without a hash key, against the sha256 its name is
/// (prompts/<sha256>.txt: such a file checks itself). A missing or mistyped field is added to `errs`
/// (under `path`, "" for the row itself) and returned in context `where`; `what` names the row in
/// the other errors.
result<std::string> read_listed_file(const std::filesystem::path& dir, const ordered_json& row, const std::string& path,
                                     const char* key, const char* hash_key, const std::string& what,
                                     const std::string& where, json_errors& errs);

/// Reads DIR/manifest.json and checks its "format"; `kind` names the expected producer in errors.
result<ordered_json> read_manifest(const std::filesystem::path& dir, const std::string& format, const std::string& kind);

/// A finished staged folder's manifest and the JSON objects of one rows file it lists.
struct staged_rows {
  ordered_json manifest;
  std::vector<ordered_json> rows;
};

/// read_manifest, then DIR/rows_file checked against the sha256 the manifest records for it under
/// "files" (when it records one) and read as JSON Lines objects: the one way adapt's loaders read a
/// folder another stage wrote.
result<staged_rows> read_staged_rows(const std::filesystem::path& dir, const std::string& format,
                                     const std::string& kind, const std::string& rows_file);

/// True when `relative` is a plain relative path inside its folder (no "..", not absolute).
bool is_safe_relative(const std::string& relative);

}  // namespace ptxbench::adapt
