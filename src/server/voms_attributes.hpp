#pragma once
// The VOMS attribute certificate of a grid proxy (docs/grid.md), read and verified with Debian's
// libvomsapi (voms-dev) against a vomsdir: VO/HOST.lsc files naming the VOMS server's DN and its
// CA's, as /etc/grid-security/vomsdir holds them. The chain itself was verified already
// (net/grid_x509.hpp); this adds who the VO says the user is.
#include "pxfer/server/layer.hpp"
#include <string>
#include <vector>

namespace pxfer::server {

struct VomsAttributes {
  std::string vo;                   // "" when the proxy carries no AC
  std::vector<std::string> fqans;   // "/atlas/Role=production", "/atlas/higgs", ... (the VO's order)
};

// The attributes in `chain_pem` (leaf first). None when the chain has no VOMS extension; throws
// Error(permission) with libvomsapi's reason when an AC is there but does not verify (forged,
// expired, not yet valid, its VO or server unknown to `voms_dir`).
VomsAttributes voms_attributes(const std::string& chain_pem, const std::string& voms_dir, const std::string& ca_dir);

// Whether an access-file FQAN pattern covers one of the user's FQANs: the group must be the
// pattern's group or below it, and a pattern with a role needs that role ("/atlas" covers
// "/atlas/higgs/Role=production"; "/atlas/Role=production" covers "/atlas/higgs/Role=production"
// but not "/atlas/Role=NULL" or "/atlas").
bool fqan_matches(const std::string& pattern, const std::string& fqan);

}  // namespace pxfer::server
