#include "identity.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "net/tls.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/io/secret_file.hpp"

namespace pxfer::server {
namespace {

void make_dirs(const std::string& path) {
  std::string partial;
  std::size_t start = 0;
  while (start < path.size()) {
    auto slash = path.find('/', start + 1);
    if (slash == std::string::npos) slash = path.size();
    partial = path.substr(0, slash);
    if (!partial.empty() && ::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      throw Error(errc_from_errno(errno), "cannot create state directory " + partial + ": " + errno_text(errno));
    start = slash;
  }
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// The state directory holds the private key: it must be ours, and no one else may add, replace
// or remove names in it (a planted key.pem, or a symlink where the key is about to be written).
void check_state_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw Error(errc_from_errno(errno), "cannot use state directory " + dir + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode)) throw Error(Errc::usage, "state directory " + dir + " is not a directory (--state-dir)");
  if (st.st_uid != ::geteuid())
    throw Error(Errc::permission, "state directory " + dir + " belongs to another user (uid " + std::to_string(st.st_uid) +
                                      ") and will hold pxferd's private key: give --state-dir a directory of this user's");
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(Errc::permission, "state directory " + dir + " is writable by other users (mode " + mode +
                                      ") and will hold pxferd's private key: run `chmod 700 " + dir + "`");
  }
}

// Writes PEM through `write` into path (mode 0600) with write_file_atomically: a new name
// (O_EXCL, no link followed), renamed over the final one.
template <class F>
void write_pem(const std::string& path, F&& write) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || write(bio.get()) != 1) throw Error(Errc::internal, "cannot encode " + path + " as PEM");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  std::string text(data, static_cast<std::size_t>(size));
  OPENSSL_cleanse(data, static_cast<std::size_t>(size));
  try {
    write_file_atomically(path, text, 0600);
  } catch (...) {
    OPENSSL_cleanse(text.data(), text.size());
    throw;
  }
  OPENSSL_cleanse(text.data(), text.size());  // the private key leaves no copy in freed memory
}

void create_self_signed(const std::string& cert_path, const std::string& key_path) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) throw Error(Errc::internal, "cannot generate an EC P-256 key");
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  std::uint64_t serial = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial);
  ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial >> 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  char host[256] = "pxferd";
  ::gethostname(host, sizeof host - 1);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(host), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("pxferd self-signed"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) throw Error(Errc::internal, "cannot sign the certificate");
  write_pem(key_path, [&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  write_pem(cert_path, [&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
}

}  // namespace

std::string default_state_dir() {
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) return std::string(x) + "/pxferd";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/state/pxferd";
}

ServerIdentity load_or_create_identity(const std::string& cert_file, const std::string& key_file,
                                       const std::string& state_dir) {
  ServerIdentity id;
  if (!cert_file.empty() || !key_file.empty()) {
    if (cert_file.empty() || key_file.empty()) throw Error(Errc::usage, "--cert and --key go together");
    id.cert_file = cert_file;
    id.key_file = key_file;
    // OpenSSL reads the key itself; the owner and mode are checked here first, as for the tokens file.
    check_protected_file(key_file, "--key", FileSecrecy::server_config);
  } else {
    std::string dir = state_dir.empty() ? default_state_dir() : state_dir;
    make_dirs(dir);
    check_state_dir(dir);
    id.cert_file = dir + "/cert.pem";
    id.key_file = dir + "/key.pem";
    std::string lock_path = dir + "/.lock";
    int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lock < 0) throw Error(errc_from_errno(errno), "cannot open " + lock_path + ": " + errno_text(errno));
    ::flock(lock, LOCK_EX);
    try {
      if (!exists(id.cert_file) || !exists(id.key_file)) {
        create_self_signed(id.cert_file, id.key_file);
        id.created = true;
      }
    } catch (...) {
      ::close(lock);
      throw;
    }
    ::close(lock);
  }
  id.fingerprint = net::certificate_fingerprint_file(id.cert_file);
  return id;
}

}  // namespace pxfer::server

#include "auth.hpp"
#include "pxfer/server/server_admin.hpp"
#include "token_admin.hpp"

namespace pxfer {

std::string create_client_token(const std::string& tokens_file, const std::string& name,
                                const std::function<void(int fd)>& on_new_file) {
  return server::create_token(tokens_file, name, on_new_file);
}

std::vector<ClientTokenInfo> list_client_tokens(const std::string& tokens_file) {
  std::vector<ClientTokenInfo> out;
  for (auto& t : server::list_tokens(tokens_file)) out.push_back({t.name, t.created});
  return out;
}

void revoke_client_token(const std::string& tokens_file, const std::string& name) {
  server::revoke_token(tokens_file, name);
}

std::string server_fingerprint(const std::string& cert_file, const std::string& state_dir) {
  if (!cert_file.empty()) return net::certificate_fingerprint_file(cert_file);
  return server::load_or_create_identity("", "", state_dir).fingerprint;
}

}  // namespace pxfer
