#include "token_issuers.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <toml++/toml.h>

#include "pxfer/common/error.hpp"

namespace pxfer::server {
namespace {

std::string read_all(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw Error(Errc::usage, "cannot read " + what + " " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every PEM public key of the file, each re-encoded alone (libjwt takes one key at a time).
std::vector<std::string> public_keys(const std::string& file, const std::string& origin) {
  const std::string text = read_all(file, "key file");
  std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), BIO_free);
  std::vector<std::string> keys;
  while (EVP_PKEY* key = PEM_read_bio_PUBKEY(in.get(), nullptr, nullptr, nullptr)) {
    std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
    PEM_write_bio_PUBKEY(out.get(), key);
    EVP_PKEY_free(key);
    char* data = nullptr;
    long n = BIO_get_mem_data(out.get(), &data);
    keys.emplace_back(data, static_cast<std::size_t>(n));
  }
  ERR_clear_error();
  if (keys.empty())
    throw Error(Errc::usage, origin + ": key_file " + file + " holds no PEM public key (-----BEGIN PUBLIC KEY-----; "
                                      "convert a JWKS with e.g. `python3 -c 'import jwt...'`)");
  return keys;
}

}  // namespace

TokenPolicy load_token_issuers(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse(read_all(path, "--token-issuers"), path);
  } catch (const toml::parse_error& e) {
    throw Error(Errc::usage, path + " line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  TokenPolicy policy;
  policy.any_audience = doc["accept_any_audience"].value_or(false);
  if (auto* aud = doc["audience"].as_array())
    for (const auto& a : *aud)
      if (auto v = a.value<std::string>()) policy.audiences.push_back(*v);
  if (auto v = doc["audience"].value<std::string>()) policy.audiences.push_back(*v);
  if (policy.audiences.empty() && !policy.any_audience)
    throw Error(Errc::usage, path + ": give `audience = [...]` (the aud values tokens for this server carry) or "
                                    "accept_any_audience = true");
  auto* issuers = doc["issuer"].as_array();
  if (!issuers || issuers->empty()) throw Error(Errc::usage, path + ": no [[issuer]] entry");
  for (std::size_t i = 0; i < issuers->size(); ++i) {
    auto* t = issuers->get(i)->as_table();
    const std::string where = path + " [[issuer]] #" + std::to_string(i + 1);
    if (!t) throw Error(Errc::usage, where + ": not a table");
    TokenIssuer issuer;
    issuer.url = (*t)["url"].value_or(std::string());
    issuer.base_path = (*t)["base_path"].value_or(std::string("/"));
    issuer.key_file = (*t)["key_file"].value_or(std::string());
    if (issuer.url.empty()) throw Error(Errc::usage, where + ": no url (the tokens' iss claim)");
    auto base = normalize_request_path(issuer.base_path);
    if (!base) throw Error(Errc::usage, where + ": base_path with '..'");
    issuer.base_path = *base;
    if (issuer.key_file.empty())
      throw Error(Errc::usage, where + ": no key_file (pxferd does not fetch issuer keys over HTTPS yet: save the "
                                       "issuer's public keys as PEM and name the file)");
    issuer.keys_pem = public_keys(issuer.key_file, where);
    policy.issuers.push_back(std::move(issuer));
  }
  return policy;
}

}  // namespace pxfer::server
