#pragma once
// pxferd as a library: one listening port carries control connections and data streams; data
// streams join their transfer with the session token handed out on the control connection.
#include "pxfer/server/layer.hpp"
#include <chrono>
#include <vector>
#include <cstdint>
#include <memory>
#include <string>

#include "pxfer/engine/peer_copy.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer {

// One WLCG token issuer a site trusts: an [[issuer]] table of pxferd.toml or of the
// --token-issuers file (docs/grid.md).
struct TokenIssuerConfig {
  std::string url;                     // the tokens' `iss` claim, exactly
  std::string base_path = "/";         // the export subpath its scopes' paths are below
  std::vector<std::string> audiences;  // the `aud` values its tokens for this server carry
  bool accept_any_audience = false;    // also "https://wlcg.cern.ch/jwt/v1/any"
  // Its public keys (PEM) for sites without outbound HTTPS; "" = fetched over HTTPS from the
  // issuer's /.well-known/openid-configuration -> jwks_uri (JWKS), verified with `https_ca_file`
  // ("" = the system's CA store).
  std::string key_file;
  std::string https_ca_file;
  std::string where;  // "FILE:LINE:COL [[issuer]] #N", for messages
};

struct ServerOptions {
  std::string root;                               // export root; every path is confined below it
  Endpoint listen{"127.0.0.1", default_port};
  unsigned threads = 0;                           // 0 = one per core
  std::chrono::milliseconds hello_timeout{10'000};  // first frame of any connection
  std::chrono::milliseconds attach_timeout{30'000}; // every data stream of a transfer
  // A control session with no request this long is closed (between requests; a transfer in
  // progress has its own stall timeout).
  std::chrono::milliseconds idle_timeout{300'000};
  // Connections (control and data, TLS or clear) open at once, in total and per source address;
  // an extra one is closed at accept. 0 = no limit. The total should stay under RLIMIT_NOFILE
  // (pxferd raises its soft limit to the hard one at start).
  unsigned max_connections = 4096;
  unsigned max_connections_per_address = 1024;
  bool handle_signals = false;                    // stop on SIGINT/SIGTERM (pxferd)
  unsigned max_active = 0;                        // transfers moving data at once; 0 = no limit
  std::chrono::milliseconds queue_timeout{600'000};  // how long a transfer may wait for a slot
  // Partial files of interrupted puts are kept for a resume; abandoned ones older than this are
  // removed (looked for once per directory, when a put first writes into it).
  std::chrono::seconds partial_max_age{7 * 24 * 3600};
  // SIGTERM (Server::drain): new transfers are refused while those running may finish for this
  // long; then the rest are aborted (their partial files kept for a resume). 0 = abort at once.
  std::chrono::milliseconds drain_timeout{30'000};

  // Security (docs/security.md). TLS 1.3 on every control connection, always.
  std::string cert_file, key_file;  // server certificate; "" = self-signed one in state_dir
  std::string state_dir;            // "" = $XDG_STATE_HOME/pxferd or ~/.local/state/pxferd
  std::string tokens_file;          // client tokens (pxferd token create)
  std::string client_ca_file;       // mutual TLS: client certificates signed by this CA
  std::string access_file;          // identity -> export subpaths, ro/rw; "" = every identity rw
  // Grid X.509 (docs/grid.md): client certificates and RFC 3820 proxies verified against the hashed
  // CA directory (CRLs honoured where present); the identity is the end-entity DN, "/DC=.../CN=...".
  bool x509 = false;
  std::string x509_ca_dir = "/etc/grid-security/certificates";
  // VOMS attribute certificates in those proxies, checked against VO/HOST.lsc files here; the
  // identity gains the VO and its FQANs (access lines `fqan:/vo/group[/Role=R]`).
  std::string voms_dir = "/etc/grid-security/vomsdir";
  // WLCG / SciTokens JWTs sent where a pxfer token goes, from the issuers this TOML file lists
  // (src/server/token_issuers.hpp); "" = JWTs are not accepted.
  std::string token_issuers_file;
  // The [[issuer]] tables of pxferd.toml: trusted beside those of token_issuers_file.
  std::vector<TokenIssuerConfig> token_issuers;
  bool accepts_jwts() const { return !token_issuers_file.empty() || !token_issuers.empty(); }
  bool anonymous_read = false;      // clients without credentials may read
  // No authentication at all, anonymous read-write: refused unless the listen address is loopback.
  // Without any of tokens_file, client_ca_file, x509, token_issuers_file, anonymous_read or this, the server refuses to start.
  bool insecure_no_auth = false;
  unsigned max_streams_per_client = 0;            // data streams one client address may hold; 0 = no limit
  unsigned max_clients = 0;                       // client addresses with transfers running or waiting; 0 = no limit
  double max_starts_per_second = 0;               // admissions paced to this rate; 0 = no pacing
  // Lab only: all file writes of the server together paced to this many bytes a second, as a
  // slow disk shared by every transfer would (bench/experiments.sh f); 0 = off.
  std::uint64_t emulate_disk_rate = 0;
  // The claimed sizes of one identity's puts in progress together (space held by unfinished
  // transfers): an OPEN that would pass this is refused; 0 = no limit.
  std::uint64_t max_unfinished_per_identity = 0;
  // A put that claims more bytes than this is refused before anything is allocated; 0 = no limit
  // (the destination's free space still bounds it).
  std::uint64_t max_file_size = 0;
  // Keep each verified file's checksum in its extended attributes (user.pxfer.<algo>) and answer
  // SUM and gets from it while the file is unchanged (docs/protocol.md "Stored checksums").
  bool stored_checksums = true;
  // --metrics-per-identity: the metrics carry bytes per client identity (one series per token or
  // certificate name); off by default, the series count is the operator's choice.
  bool metrics_per_identity = false;
  // Blocking file work (SUM, LIST, opening a transfer's file) runs on this many threads of its own,
  // never on the network threads; one identity runs at most max_slow_requests_per_identity SUM or
  // LIST requests at once, a further one waits for one of them to end.
  unsigned blocking_threads = 4;
  unsigned max_slow_requests_per_identity = 2;
  // Opening a transfer's file (and preallocating a put's) runs on threads of its own as well, so
  // that SUMs and LISTs filling the pool above never delay a transfer's start.
  unsigned open_threads = 2;
  // Third-party copy (docs/protocol.md): the peers this server will connect to when a client asks
  // it to pull from or push to another server: "HOST[:PORT]" (a name as the client wrote it, or an
  // address) or "ADDRESS/PREFIX". Empty = this server connects to no peer (it may still be the
  // passive end: a client's one-time grant lets a peer in for one transfer).
  std::vector<std::string> tpc_allow;
  std::chrono::milliseconds tpc_grant_lifetime{60'000};  // a grant must be redeemed this soon
};

class Server {
 public:
  // Binds the port (throws Error on failure). `copier` runs the active end of third-party copies
  // (pxfer/tpc/tpc.hpp's client_peer_copier(), as pxferd passes it); without one this server still
  // grants and serves the passive end, and refuses TPC_START.
  explicit Server(ServerOptions options, PeerCopier copier = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const;        // the bound port (useful with port 0)
  std::string listen_address() const;
  std::string fingerprint() const;      // "sha256:HEX" of the server certificate
  bool created_identity() const;        // the self-signed certificate was made by this start
  std::string certificate_file() const;
  // Serves until stop(); aborts every transfer in progress before returning (nothing partial
  // appears under a final name; partial puts stay hidden, with their journal, for a resume).
  void run();
  void stop();  // thread-safe
  // SIGTERM (thread-safe): refuses new transfers at once (OPEN gets "shutting down; retry later",
  // while data streams of running transfers may still attach), lets the running ones finish for
  // options.drain_timeout, then stop()s. Returns at once; a second drain() or a stop() cuts it short.
  void drain();
  // Re-reads the tokens and access files, the token issuers (next.token_issuers_file and
  // next.token_issuers), the certificate and the --x509-ca-dir with its CRLs (pxferd on SIGHUP;
  // thread-safe). Control sessions that authenticated already, and their transfers, go on; every
  // later connection is judged by the new settings. Throws Error and changes nothing when a file
  // is missing or malformed, or when the reload would drop the tokens or access file the server
  // started with (only a restart may do that).
  void reload(const ServerOptions& next);
  // The server's counters and load in the Prometheus text format (pxferd --metrics-listen).
  std::string metrics_text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pxfer
