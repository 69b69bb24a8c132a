#include "transfer_registry.hpp"

#include <openssl/rand.h>

namespace pxfer::server {

wire::Token TransferRegistry::add(std::shared_ptr<transfer::Transfer> t) {
  wire::Token token{};
  std::lock_guard lock(mutex_);
  do {
    if (RAND_bytes(token.data(), static_cast<int>(token.size())) != 1)
      throw Error(Errc::internal, "cannot draw a random session token (OpenSSL RAND_bytes failed)");
  } while (transfers_.count(token));
  transfers_[token] = t;
  return token;
}

std::shared_ptr<transfer::Transfer> TransferRegistry::find(const wire::Token& token) const {
  std::lock_guard lock(mutex_);
  auto it = transfers_.find(token);
  return it == transfers_.end() ? nullptr : it->second.lock();
}

void TransferRegistry::remove(const wire::Token& token) {
  std::lock_guard lock(mutex_);
  transfers_.erase(token);
}

std::vector<std::shared_ptr<transfer::Transfer>> TransferRegistry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<transfer::Transfer>> out;
  for (auto& [token, weak] : transfers_)
    if (auto t = weak.lock()) out.push_back(std::move(t));
  return out;
}

}  // namespace pxfer::server
