#include "domain/logs/sha256.h"

#include <openssl/evp.h>

namespace parity::logs {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  // Only allocation can fail here; a null context then hashes nothing and yields "".
  if (impl_->ctx && EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(impl_->ctx);
    impl_->ctx = nullptr;
  }
}

Sha256::~Sha256() {
  if (impl_->ctx) EVP_MD_CTX_free(impl_->ctx);
}

void Sha256::Update(std::string_view bytes) {
  if (impl_->ctx) EVP_DigestUpdate(impl_->ctx, bytes.data(), bytes.size());
}

std::string Sha256::HexDigest() {
  if (!impl_->ctx) return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, md, &len);
  EVP_MD_CTX_free(impl_->ctx);
  impl_->ctx = nullptr;
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kDigits[md[i] >> 4];
    out += kDigits[md[i] & 15];
  }
  return out;
}

}  // namespace parity::logs
