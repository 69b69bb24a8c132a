#pragma once
// Transfers waiting for or running their data streams, found by their 128-bit session token.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "pxfer/wire.hpp"
#include "transfer/transfer.hpp"

namespace pxfer::server {

class TransferRegistry {
 public:
  // Registers a transfer under a fresh random token.
  wire::Token add(std::shared_ptr<transfer::Transfer> t);
  std::shared_ptr<transfer::Transfer> find(const wire::Token& token) const;
  void remove(const wire::Token& token);
  std::vector<std::shared_ptr<transfer::Transfer>> all() const;

 private:
  mutable std::mutex mutex_;
  std::map<wire::Token, std::weak_ptr<transfer::Transfer>> transfers_;
};

}  // namespace pxfer::server
