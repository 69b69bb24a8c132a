#pragma once
// A hostile pxfer server, in the test process: it speaks TLS 1.3 and enough of the protocol
// (HELLO, AUTH, LIST) to answer every LIST with the entries a test chose, optionally GET_SMALL
// with the bytes a test chose, and refuses anything else. The client under test is the real pxfer binary; this is what a compromised or spoofed
// server could send it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wire/wire.hpp"

namespace pxfer::e2e {

class HostileServer {
 public:
  // Listens on 127.0.0.1 (an ephemeral port); its self-signed certificate lives in `state_dir`.
  HostileServer(const std::string& state_dir, std::vector<wire::ListEntry> listing);
  ~HostileServer();
  HostileServer(const HostileServer&) = delete;
  HostileServer& operator=(const HostileServer&) = delete;

  std::uint16_t port() const;
  std::string url(const std::string& path) const;
  const std::string& fingerprint() const;
  unsigned lists_answered() const;
  // From now on HELLO_OK offers cap_small_files and every GET_SMALL is answered "ok" with `data`
  // and the digest `value`, whatever the file: what a server that tampers with a small file sends.
  void answer_small_gets(std::vector<std::uint8_t> data, std::string value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

wire::ListEntry listed_file(const std::string& path, std::uint64_t size = 5);
wire::ListEntry listed_directory(const std::string& path);

}  // namespace pxfer::e2e
