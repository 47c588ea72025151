// Streaming SHA-256 (OpenSSL EVP), for hashing inputs while they are read once.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace parity::logs {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view bytes);
  // Lower-case hex of the digest; the object cannot be updated afterwards.
  std::string HexDigest();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parity::logs
