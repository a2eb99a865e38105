#include "core/sha256.h"

#include <openssl/evp.h>

#include <cstdint>
#include <stdexcept>

namespace ptxbench {

static std::string to_hex(const unsigned char* p, unsigned n) {
  static const char* digits = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (unsigned i = 0; i < n; ++i) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  return out;
}

sha256_builder::sha256_builder() : m_ctx(EVP_MD_CTX_new()) {
  if (!m_ctx || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(m_ctx), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

sha256_builder::~sha256_builder() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(m_ctx)); }

sha256_builder& sha256_builder::update(std::string_view part) {
  uint64_t len = part.size();
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(len >> (8 * i));
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(m_ctx), prefix, sizeof prefix);
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(m_ctx), part.data(), part.size());
  return *this;
}

std::string sha256_builder::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(m_ctx), md, &n);
  return to_hex(md, n);
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  return to_hex(md, n);
}

}  // namespace ptxbench
