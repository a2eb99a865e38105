#pragma once
// SHA-1, only for compatibility with upstream's names: FlashInfer-Bench's Solution.hash() is SHA-1,
// and the service's normalized solution name carries its first 8 hex digits (docs/service.md).
// Never use it for content addressing: that is SHA-256 (core/sha256.h).

#include <string>
#include <string_view>

namespace ptxbench {

/// Returns the lowercase hex SHA-1 of data.
std::string sha1_hex(std::string_view data);

}  // namespace ptxbench
