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

void TransferRegistry::add_running(const wire::Token& id, const std::string& owner, std::weak_ptr<transfer::Transfer> t) {
  std::lock_guard lock(mutex_);
  std::erase_if(running_, [](const auto& entry) { return entry.second.transfer.expired(); });
  running_[id] = Running{owner, std::move(t)};  // a retry that took the id over replaces the old
}

void TransferRegistry::add_small(const wire::Token& id, const std::string& owner) {
  std::lock_guard lock(mutex_);
  small_.emplace(id, owner);
}

void TransferRegistry::remove_small(const wire::Token& id, const std::string& owner) {
  std::lock_guard lock(mutex_);
  auto [first, last] = small_.equal_range(id);
  for (auto it = first; it != last; ++it)
    if (it->second == owner) {
      small_.erase(it);
      return;
    }
}

bool TransferRegistry::small_running(const wire::Token& id, const std::string& owner) const {
  std::lock_guard lock(mutex_);
  auto [first, last] = small_.equal_range(id);
  for (auto it = first; it != last; ++it)
    if (it->second == owner) return true;
  return false;
}

std::weak_ptr<transfer::Transfer> TransferRegistry::running(const wire::Token& id, const std::string& owner) const {
  std::lock_guard lock(mutex_);
  auto it = running_.find(id);
  if (it == running_.end() || it->second.owner != owner) return {};
  return it->second.transfer;
}

// Enough to answer the retries of every put of the last minutes on a busy server; a few MB at most.
constexpr std::size_t committed_kept = 4096;

void TransferRegistry::add_committed(const wire::Token& id, Committed c) {
  std::lock_guard lock(mutex_);
  if (committed_.insert_or_assign(id, std::move(c)).second) committed_order_.push_back(id);
  while (committed_order_.size() > committed_kept) {
    committed_.erase(committed_order_.front());
    committed_order_.pop_front();
  }
}

std::optional<TransferRegistry::Committed> TransferRegistry::committed(const wire::Token& id) const {
  std::lock_guard lock(mutex_);
  auto it = committed_.find(id);
  if (it == committed_.end()) return std::nullopt;
  return it->second;
}

}  // namespace pxfer::server
