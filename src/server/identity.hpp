#pragma once
// pxferd's certificate: the operator's (--cert/--key), or a self-signed one made on first start
// in the state directory.
#include "pxfer/server/layer.hpp"
#include <string>

namespace pxfer::server {

struct ServerIdentity {
  std::string cert_file;
  std::string key_file;
  std::string fingerprint;  // "sha256:HEX"
  bool created = false;     // made just now
};

// $XDG_STATE_HOME/pxferd, else ~/.local/state/pxferd.
std::string default_state_dir();
// The --cert/--key pair when given, else STATE_DIR/cert.pem and key.pem, created (EC P-256,
// self-signed, 10 years, mode 0600, under a lock so concurrent first starts agree) if absent.
ServerIdentity load_or_create_identity(const std::string& cert_file, const std::string& key_file,
                                       const std::string& state_dir);

}  // namespace pxfer::server
