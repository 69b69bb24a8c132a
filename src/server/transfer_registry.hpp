#pragma once
// Transfers waiting for or running their data streams, found by their 128-bit session token,
// with what their data streams must be (TLS for --encrypt): one lock for both.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "pxfer/wire.hpp"
#include "transfer/transfer.hpp"

namespace pxfer::server {

class TransferRegistry {
 public:
  struct Found {
    std::shared_ptr<transfer::Transfer> transfer;  // null when unknown or finished
    bool encrypted = false;                        // its data streams must use TLS
  };
  // Registers a transfer under a fresh random token.
  wire::Token add(std::shared_ptr<transfer::Transfer> t, bool encrypted);
  Found find(const wire::Token& token) const;
  void remove(const wire::Token& token);
  std::vector<std::shared_ptr<transfer::Transfer>> all() const;

 private:
  mutable std::mutex mutex_;
  struct Entry {
    std::weak_ptr<transfer::Transfer> transfer;
    bool encrypted = false;
  };
  std::map<wire::Token, Entry> transfers_;
};

}  // namespace pxfer::server
