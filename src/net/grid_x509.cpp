#include "grid_x509.hpp"

#include <dirent.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <memory>

#include "pxfer/common/error.hpp"

namespace pxfer::net {
namespace {

// A CA without a CRL file is trusted as it is (as Globus and XRootD do); a CA that publishes one
// has every certificate it issued checked against it, and an expired CRL still fails the chain.
int crl_where_present(int ok, X509_STORE_CTX* ctx) {
  if (!ok && X509_STORE_CTX_get_error(ctx) == X509_V_ERR_UNABLE_TO_GET_CRL) return 1;
  return ok;
}

std::string failure(X509_STORE_CTX* ctx) {
  const int err = X509_STORE_CTX_get_error(ctx);
  std::string text = X509_verify_cert_error_string(err);
  if (X509* bad = X509_STORE_CTX_get_current_cert(ctx))
    text += " (" + slash_dn(X509_get_subject_name(bad)) + ")";
  return text;
}

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;

}  // namespace

std::string slash_dn(const X509_NAME* name) {
  char* text = X509_NAME_oneline(name, nullptr, 0);
  if (!text) return "";
  std::string out(text);
  OPENSSL_free(text);
  return out;
}

void add_grid_ca_dir(X509_STORE* store, const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d)
    throw Error(Errc::usage, "--x509-ca-dir " + dir + ": " + errno_text(errno) +
                                 " (a directory of hashed CA files, as /etc/grid-security/certificates)");
  ::closedir(d);
  if (X509_STORE_load_path(store, dir.c_str()) != 1)
    throw Error(Errc::usage, "--x509-ca-dir " + dir + ": OpenSSL cannot use it as a CA directory");
}

ChainVerdict verify_grid_chain(X509_STORE_CTX* ctx) {
  X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_ALLOW_PROXY_CERTS | X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  X509_STORE_CTX_set_verify_cb(ctx, crl_where_present);
  ChainVerdict v;
  if (X509_verify_cert(ctx) != 1) {
    v.error = failure(ctx);
    return v;
  }
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(ctx);
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    X509* c = sk_X509_value(chain, i);
    if (X509_get_extension_flags(c) & EXFLAG_PROXY) {
      ++v.proxies;
      continue;
    }
    // A trusted CA's own certificate verifies as a chain of one; it names no user.
    if (X509_check_ca(c) != 0) {
      v.error = "a CA certificate is not a user's (" + slash_dn(X509_get_subject_name(c)) + ")";
      return v;
    }
    v.dn = slash_dn(X509_get_subject_name(c));
    v.verified = true;
    return v;
  }
  v.error = "no end-entity certificate below the proxies";
  return v;
}

ChainVerdict verify_grid_file(const std::string& ca_dir, const std::string& pem_file) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(pem_file.c_str(), "r"), BIO_free);
  if (!bio) throw Error(Errc::not_found, "cannot read " + pem_file + ": " + errno_text(errno));
  std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)>
      rest(sk_X509_new_null(), [](STACK_OF(X509)* s) { sk_X509_pop_free(s, X509_free); });
  X509Ptr leaf(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  if (!leaf) throw Error(Errc::usage, pem_file + ": no PEM certificate in it");
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) sk_X509_push(rest.get(), c);
  ERR_clear_error();  // the end of the file, not a failure
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  add_grid_ca_dir(store.get(), ca_dir);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), rest.get()) != 1)
    throw Error(Errc::internal, "cannot set up a certificate check");
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);  // as the TLS server checks it
  return verify_grid_chain(ctx.get());
}

}  // namespace pxfer::net
