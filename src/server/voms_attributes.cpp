#include "voms_attributes.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <voms/voms_api.h>

#include <memory>

#include "pxfer/common/error.hpp"

namespace pxfer::server {
namespace {

struct Fqan {
  std::string group;  // "/atlas/higgs"
  std::string role;   // "" = none (or Role=NULL)
};

Fqan split_fqan(const std::string& text) {
  Fqan f;
  std::size_t start = 0;
  while (start < text.size()) {
    auto slash = text.find('/', start + 1);
    std::string part = text.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.rfind("/Role=", 0) == 0) {
      f.role = part.substr(6) == "NULL" ? "" : part.substr(6);
    } else if (part.rfind("/Capability=", 0) != 0) {
      f.group += part;
    }
    if (slash == std::string::npos) break;
    start = slash;
  }
  return f;
}

}  // namespace

bool fqan_matches(const std::string& pattern, const std::string& fqan) {
  const Fqan want = split_fqan(pattern), have = split_fqan(fqan);
  if (want.group.empty()) return false;
  const bool in_group = have.group == want.group || have.group.rfind(want.group + "/", 0) == 0;
  return in_group && (want.role.empty() || want.role == have.role);
}

VomsAttributes voms_attributes(const std::string& chain_pem, const std::string& voms_dir, const std::string& ca_dir) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(chain_pem.data(), static_cast<int>(chain_pem.size())),
                                                BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> leaf(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)> rest(
      sk_X509_new_null(), [](STACK_OF(X509)* s) { sk_X509_pop_free(s, X509_free); });
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) sk_X509_push(rest.get(), c);
  ERR_clear_error();
  if (!leaf) throw Error(Errc::permission, "no client certificate to read VOMS attributes from");
  vomsdata vd(voms_dir, ca_dir);
  VomsAttributes out;
  if (!vd.Retrieve(leaf.get(), rest.get(), RECURSE_CHAIN)) {
    if (vd.error == VERR_NOEXT) return out;
    throw Error(Errc::permission, "VOMS attributes refused: " + vd.ErrorMessage() +
                                      " (a forged or expired AC, or a VO or VOMS server without an .lsc file in the "
                                      "server's --voms-dir " + voms_dir + ")");
  }
  if (vd.data.empty()) return out;
  // The first AC is the one the user asked for first (voms-proxy-init --voms order); later ones
  // from other VOs are not used.
  out.vo = vd.data.front().voname;
  out.fqans = vd.data.front().fqan;
  return out;
}

}  // namespace pxfer::server
