#pragma once
// pxferd's administrative commands, as functions: tokens and the certificate fingerprint.
#include "pxfer/server/layer.hpp"
#include <functional>
#include <string>
#include <vector>

namespace pxfer {

struct ServerOptions;
struct Endpoint;

// Appends identity NAME to the tokens file (mode 0600) and returns its new token: the only time
// it exists in clear. Throws Error(exists) if NAME is there already, Error(usage) when the file is
// a symlink (never followed). A file this call created goes to `on_new_file` as a descriptor.
std::string create_client_token(const std::string& tokens_file, const std::string& name,
                                const std::function<void(int fd)>& on_new_file = {});
struct ClientTokenInfo {
  std::string name;
  std::string created;  // UTC, "" when not recorded
};
// `pxferd token list`: names and creation times, never a secret.
std::vector<ClientTokenInfo> list_client_tokens(const std::string& tokens_file);
// `pxferd token revoke`: removes NAME; Error(not_found) when it is not there.
void revoke_client_token(const std::string& tokens_file, const std::string& name);
// "sha256:HEX" of `cert_file`, or of the self-signed certificate in `state_dir` ("" = default),
// which is created if absent.
std::string server_fingerprint(const std::string& cert_file, const std::string& state_dir);
// pxferd --check-config: throws the Error the server would meet at start (a missing or unusable
// root, no authentication, --insecure-no-auth off loopback, a missing or malformed tokens or access
// file, an unreadable certificate, key or CA file, a file of the wrong mode or owner, a listen
// address that does not resolve or cannot be bound), without serving or creating anything.
void check_server_options(const ServerOptions& options);
// Whether the server could listen at `at`: resolves it, binds a socket (SO_REUSEADDR, as the
// server does) and closes it. Throws Error naming `option` ("--listen") and what to do.
void check_bindable(const Endpoint& at, const std::string& option);

// pxferd check-credential: the identity and rights a proxy/certificate (PEM) or WLCG token (JWT)
// in `text` would get from a server with these options, as lines to print, and why; throws the
// Error (permission) a connection presenting it would get.
std::string check_credential(const ServerOptions& options, const std::string& text);

}  // namespace pxfer
