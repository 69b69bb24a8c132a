#pragma once
// pxfer's trust and credential options, shared by every subcommand (docs/security.md): the CLI
// options, the token's discovery (token_discovery.hpp) and the ClientSecurity they make.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

#include "pxfer/client/client.hpp"
#include "pxfer/common/error.hpp"
#include "token_discovery.hpp"

namespace pxfer::cli {

// Trust and credentials, shared by every subcommand (docs/security.md).
struct SecurityArgs {
  std::string ca, fingerprint, known_hosts, token_file, cert, key;
};

inline void add_security(CLI::App& cmd, SecurityArgs& a) {
  cmd.add_option("--ca", a.ca, "verify the server's certificate chain and host name against this CA (PEM)");
  cmd.add_option("--fingerprint", a.fingerprint, "pin the server's certificate: sha256:HEX (as `pxferd fingerprint` prints)");
  cmd.add_option("--known-hosts", a.known_hosts, "pinned server certificates (default ~/.config/pxfer/known_hosts, trust on first use)");
  cmd.add_option("--token-file", a.token_file, "file holding the token `pxferd token create` printed (or set PXFER_TOKEN)");
  cmd.add_option("--cert", a.cert, "client certificate (PEM) for servers that verify them (pxferd --client-ca)");
  cmd.add_option("--key", a.key, "private key of --cert (PEM)");
}

// A token from a file or the environment (token_discovery.hpp); its value never appears in a message.
inline std::string read_token(const SecurityArgs& a) {
  auto [raw, origin] = find_token(a.token_file);
  auto first = raw.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    if (!origin.empty()) throw Error(Errc::usage, origin + " holds no token");
    return "";
  }
  auto last = raw.find_last_not_of(" \t\r\n");
  std::string token = raw.substr(first, last - first + 1);
  bool printable = token.size() <= 8192;  // wire::max_auth_token: a pxfer token or a WLCG JWT
  for (char c : token)
    if (c <= ' ' || c > '~') printable = false;
  if (!printable)
    throw Error(Errc::usage, origin + ": not a token (expected one line: what `pxferd token create` printed, or a JWT)");
  return token;
}

inline ClientSecurity to_security(const SecurityArgs& a) {
  ClientSecurity s;
  s.ca_file = a.ca;
  s.known_hosts_file = a.known_hosts;
  s.cert_file = a.cert;
  s.key_file = a.key;
  if (!a.fingerprint.empty()) {
    s.fingerprint = normalize_fingerprint(a.fingerprint);
    if (s.fingerprint.empty())
      throw Error(Errc::usage, "--fingerprint " + a.fingerprint + ": expected sha256: and 64 hex digits");
  }
  if (a.cert.empty() != a.key.empty()) throw Error(Errc::usage, "--cert and --key go together");
  s.token = read_token(a);
  // No certificate and no token: a grid proxy where grid tools keep it (X509_USER_PROXY, then
  // /tmp/x509up_u$UID). Never beside a token: a server that asks for certificates would judge
  // the proxy first.
  if (s.cert_file.empty() && s.token.empty()) s.cert_file = s.key_file = find_proxy();
  // A grid credential talks to a grid server: its host certificate is checked against
  // X509_CERT_DIR (with the host name), as gsiftp and davs clients do, unless --ca or a pin says how.
  if (const char* dir = std::getenv("X509_CERT_DIR"); dir && *dir && !s.cert_file.empty() && s.ca_file.empty() &&
      s.fingerprint.empty())
    s.ca_file = dir;
  return s;
}

inline void apply_security(const SecurityArgs& a) { set_client_security(to_security(a)); }

}  // namespace pxfer::cli
