#pragma once
// Grid X.509 client certificates (docs/grid.md): end-entity certificates and RFC 3820 proxy
// chains verified against a CA directory in the grid layout (HASH.N CA files, HASH.rN CRLs, as
// /etc/grid-security/certificates holds them). OpenSSL does the path checks (proxy subject below
// its issuer's, signatures, dates, proxy path length); this file adds what grid sites expect of
// CRLs (checked for every certificate whose CA publishes one, not required of CAs that do not)
// and names the user by the end-entity certificate's DN, never by a proxy's.
#include "pxfer/io/layer.hpp"
#include <openssl/x509.h>

#include <string>

namespace pxfer::net {

struct ChainVerdict {
  bool verified = false;
  std::string error;  // why not, in OpenSSL's words, with the depth and subject it concerns
  std::string dn;     // end-entity subject, "/DC=org/DC=example/CN=Jane Doe" (set when verified)
  unsigned proxies = 0;  // proxy certificates above the end-entity certificate
};

// Adds the CAs and CRLs of `dir` (looked up by subject hash, read when first needed) to `store`.
// Throws Error(usage) naming the directory when it cannot be read.
void add_grid_ca_dir(X509_STORE* store, const std::string& dir);

// Verifies the chain `ctx` was initialised with (the peer's certificate and the ones it sent),
// with proxy certificates allowed and CRLs checked where present.
ChainVerdict verify_grid_chain(X509_STORE_CTX* ctx);

// The same, for a proxy or certificate file (cert first, then any chain; a key in it is skipped):
// what `pxferd check-credential` reports.
ChainVerdict verify_grid_file(const std::string& ca_dir, const std::string& pem_file);

// "/DC=org/DC=example/OU=Users/CN=Jane Doe": the one-line form Globus, VOMS and XRootD print.
std::string slash_dn(const X509_NAME* name);

}  // namespace pxfer::net
