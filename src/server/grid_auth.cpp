#include "grid_auth.hpp"

#include <spdlog/spdlog.h>

#include "voms_attributes.hpp"

namespace pxfer::server {

SessionRights x509_session_rights(const AuthFiles& files, const net::TlsInfo& tls, const std::string& voms_dir,
                                  const std::string& ca_dir) {
  VomsAttributes voms;
  try {
    voms = voms_attributes(tls.peer_chain_pem, voms_dir, ca_dir);
  } catch (const Error& e) {
    spdlog::warn("identity={} refused: {}", tls.peer_dn, e.what());
    throw;
  }
  SessionRights s;
  s.identity = tls.peer_dn;
  if (!voms.fqans.empty()) s.identity += " (" + voms.fqans.front() + ")";
  s.vo = voms.vo;
  s.fqans = voms.fqans;
  if (!files.access) {  // as for every identity without an access file: read-write everywhere
    s.grants.push_back(Grant{"", true});
    return s;
  }
  s.grants = files.access->grants_of(tls.peer_dn);
  for (auto& g : files.access->grants_of_fqans(voms.fqans)) s.grants.push_back(std::move(g));
  if (s.grants.empty())
    throw Error(Errc::permission, "identity " + s.identity + " has no access on this server (neither its DN nor " +
                                      (voms.vo.empty() ? std::string("a VOMS FQAN: the proxy carries none")
                                                       : "its FQANs are in its access file") + ")");
  return s;
}

SessionRights token_session_rights(const AuthFiles& files, const BearerIdentity& token) {
  SessionRights s;
  s.identity = "token:" + token.subject + "@" + token.issuer;
  s.grants = token.grants;
  if (files.access) {
    for (auto& g : files.access->grants_of(s.identity)) s.grants.push_back(std::move(g));
    for (auto& g : files.access->grants_of_groups(token.groups)) s.grants.push_back(std::move(g));
  }
  for (const auto& ignored : token.ignored_scopes)
    spdlog::debug("identity={} token {}: scope {} ignored (pxferd has no tape: storage.stage is not honoured)",
                  s.identity, token.id, ignored);
  if (s.grants.empty())
    throw Error(Errc::permission, "bearer token refused: " + s.identity + " has no storage.read/create/modify scope "
                                      "and no line in this server's access file (" + token.id + ")");
  return s;
}

}  // namespace pxfer::server
