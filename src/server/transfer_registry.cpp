#include "transfer_registry.hpp"

#include <openssl/rand.h>

namespace pxfer::server {

wire::Token TransferRegistry::add(std::shared_ptr<transfer::Transfer> t, bool encrypted) {
  wire::Token token{};
  std::lock_guard lock(mutex_);
  do {
    if (RAND_bytes(token.data(), static_cast<int>(token.size())) != 1)
      throw Error(Errc::internal, "cannot draw a random session token (OpenSSL RAND_bytes failed)");
  } while (transfers_.count(token));
  transfers_[token] = Entry{t, encrypted};
  return token;
}

TransferRegistry::Found TransferRegistry::find(const wire::Token& token) const {
  std::lock_guard lock(mutex_);
  auto it = transfers_.find(token);
  if (it == transfers_.end()) return {};
  return Found{it->second.transfer.lock(), it->second.encrypted};
}

void TransferRegistry::remove(const wire::Token& token) {
  std::lock_guard lock(mutex_);
  transfers_.erase(token);
}

std::vector<std::shared_ptr<transfer::Transfer>> TransferRegistry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<transfer::Transfer>> out;
  for (auto& [token, entry] : transfers_)
    if (auto t = entry.transfer.lock()) out.push_back(std::move(t));
  return out;
}

}  // namespace pxfer::server
