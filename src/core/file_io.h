#pragma once
// Reading and writing files with the checks every input path needs: size caps, a clear message for
// a missing file or a directory, and atomic writes so a crash never leaves half a result behind.

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/result.h"

namespace ptxbench {

/// Reads a whole file. Fails (naming the path) when it is missing, a directory, unreadable, or
/// larger than max_bytes.
result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes);

/// Checks that content is non-empty text: no NUL bytes and valid UTF-8. `what` names it in errors.
status check_text(const std::string& content, const std::string& what);

/// Reads a file and checks it is text (read_file + check_text).
result<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes);

/// Writes content to a temporary file beside `path`, flushes it and renames it into place, so a
/// reader sees either the old or the new file, never a torn one. Creates parent folders.
status write_file_atomic(const std::filesystem::path& path, const std::string& content);

/// Returns a human size such as "512 KiB".
std::string human_bytes(std::size_t bytes);

}  // namespace ptxbench
