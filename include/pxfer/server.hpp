#pragma once
// pxferd as a library: one listening port carries control connections and data streams; data
// streams join their transfer with the session token handed out on the control connection.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "pxfer/url.hpp"

namespace pxfer {

struct ServerOptions {
  std::string root;                               // export root; every path is confined below it
  Endpoint listen{"127.0.0.1", default_port};
  unsigned threads = 0;                           // 0 = one per core
  std::chrono::milliseconds hello_timeout{10'000};  // first frame of any connection
  std::chrono::milliseconds attach_timeout{30'000}; // every data stream of a transfer
  bool handle_signals = false;                    // stop on SIGINT/SIGTERM (pxferd)
  unsigned max_active = 0;                        // transfers moving data at once; 0 = no limit
  std::chrono::milliseconds queue_timeout{600'000};  // how long a transfer may wait for a slot
};

class Server {
 public:
  explicit Server(ServerOptions options);  // binds the port (throws Error on failure)
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const;        // the bound port (useful with port 0)
  std::string listen_address() const;
  // Serves until stop(); aborts every transfer in progress before returning (their temporary
  // files are removed; nothing partial appears under a final name).
  void run();
  void stop();  // thread-safe

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pxfer
