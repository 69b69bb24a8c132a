#pragma once
// Transfers waiting for or running their data streams, found by their 128-bit session token,
// with what their data streams must be (TLS for --encrypt): one lock for both.
#include "pxfer/server/layer.hpp"
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "wire/wire.hpp"
#include "engine/transfer.hpp"

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

  // Transfer ids (OPEN's transfer_id, kept by a client across its retries and reruns of the same
  // command). `owner` is who wrote where (identity and path): an id only counts for the same one.
  struct Committed {
    std::string owner;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint8_t checksum_algo = 0;
    std::string checksum;
    // The file as the commit left it: a file replaced or rewritten since is not this transfer's.
    std::uint64_t inode = 0;
    std::int64_t file_mtime_ns = 0;
  };
  // A put running under `id`, weakly held: the entry lasts as long as the Transfer itself, not
  // only its control exchange, so a retry that takes it over also waits for the streams that
  // still hold it (and with it the file's journal lock). Expired entries go at the next add.
  void add_running(const wire::Token& id, const std::string& owner, std::weak_ptr<transfer::Transfer> t);
  // The put still alive under `id` for the same owner, if any (may have expired meanwhile).
  std::weak_ptr<transfer::Transfer> running(const wire::Token& id, const std::string& owner) const;
  // A PUT_SMALL being written under `id` (it has no Transfer): a retry of it through OPEN waits
  // for it to end, then finds its commit record, instead of racing it to the final name.
  void add_small(const wire::Token& id, const std::string& owner);
  void remove_small(const wire::Token& id, const std::string& owner);
  bool small_running(const wire::Token& id, const std::string& owner) const;
  // The most recent puts that committed, by id (bounded: the oldest are forgotten).
  void add_committed(const wire::Token& id, Committed c);
  std::optional<Committed> committed(const wire::Token& id) const;

 private:
  struct Running {
    std::string owner;
    std::weak_ptr<transfer::Transfer> transfer;
  };
  std::map<wire::Token, Running> running_;
  std::map<wire::Token, Committed> committed_;
  std::multimap<wire::Token, std::string> small_;  // PUT_SMALLs being written: id -> owner
  std::deque<wire::Token> committed_order_;
  mutable std::mutex mutex_;
  struct Entry {
    std::weak_ptr<transfer::Transfer> transfer;
    bool encrypted = false;
  };
  std::map<wire::Token, Entry> transfers_;
};

}  // namespace pxfer::server
