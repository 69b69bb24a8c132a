#pragma once
// pxferd's administrative commands, as functions: tokens and the certificate fingerprint.
#include <string>

namespace pxfer {

struct ServerOptions;

// Appends identity NAME to the tokens file (mode 0600) and returns its new token: the only time
// it exists in clear. Throws Error(exists) if NAME is there already.
std::string create_client_token(const std::string& tokens_file, const std::string& name);
// "sha256:HEX" of `cert_file`, or of the self-signed certificate in `state_dir` ("" = default),
// which is created if absent.
std::string server_fingerprint(const std::string& cert_file, const std::string& state_dir);
// pxferd --check-config: throws the Error the server would meet at start (a missing or unusable
// root, no authentication, --insecure-no-auth off loopback, a missing or malformed tokens or access
// file, an unreadable certificate, key or CA file), without binding or creating anything.
void check_server_options(const ServerOptions& options);
// pxferd check-credential: the identity and rights a proxy/certificate (PEM) or WLCG token (JWT)
// in `text` would get from a server with these options, as lines to print, and why; throws the
// Error (permission) a connection presenting it would get.
std::string check_credential(const ServerOptions& options, const std::string& text);

}  // namespace pxfer
