#pragma once
// SHA-256 through OpenSSL, for content addressing (build cache keys, artifact fingerprints).

#include <string>
#include <string_view>

namespace ptxbench {

/// Incremental SHA-256. Feed parts with update(); each part is length-prefixed so that
/// ("ab","c") and ("a","bc") hash differently.
class sha256_builder {
 public:
  sha256_builder();
  ~sha256_builder();
  sha256_builder(const sha256_builder&) = delete;
  sha256_builder& operator=(const sha256_builder&) = delete;

  sha256_builder& update(std::string_view part);
  /// Returns the lowercase hex digest; the builder cannot be used afterwards.
  std::string hex_digest();

 private:
  void* m_ctx;  // EVP_MD_CTX*, kept opaque so callers need no OpenSSL headers
};

/// Returns the lowercase hex SHA-256 of data (not length-prefixed).
std::string sha256_hex(std::string_view data);

}  // namespace ptxbench
