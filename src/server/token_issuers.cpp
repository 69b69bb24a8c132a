#include "token_issuers.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>
#include <toml++/toml.h>

#include "pxfer/common/error.hpp"

namespace pxfer::server {
namespace {

std::string read_all(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw Error(Errc::usage, "cannot read " + what + " " + path + ": " + errno_text(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every PEM public key of the file, each re-encoded alone (libjwt takes one key at a time).
std::vector<std::string> public_keys(const std::string& file, const std::string& origin) {
  std::string text;
  try {
    text = read_all(file, "key_file");
  } catch (const Error& e) {
    throw Error(e.code(), origin + ": " + e.what());
  }
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

std::vector<TokenIssuerConfig> read_token_issuers(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse(read_all(path, "--token-issuers"), path);
  } catch (const toml::parse_error& e) {
    throw Error(Errc::usage, path + " line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  const bool any_audience = doc["accept_any_audience"].value_or(false);
  std::vector<std::string> audiences;
  if (auto* aud = doc["audience"].as_array())
    for (const auto& a : *aud)
      if (auto v = a.value<std::string>()) audiences.push_back(*v);
  if (auto v = doc["audience"].value<std::string>()) audiences.push_back(*v);
  auto* issuers = doc["issuer"].as_array();
  if (!issuers || issuers->empty()) throw Error(Errc::usage, path + ": no [[issuer]] entry");
  std::vector<TokenIssuerConfig> out;
  for (std::size_t i = 0; i < issuers->size(); ++i) {
    auto* t = issuers->get(i)->as_table();
    TokenIssuerConfig issuer;
    issuer.where = path + " [[issuer]] #" + std::to_string(i + 1);
    if (!t) throw Error(Errc::usage, issuer.where + ": not a table");
    issuer.url = (*t)["url"].value_or(std::string());
    issuer.base_path = (*t)["base_path"].value_or(std::string("/"));
    issuer.key_file = (*t)["key_file"].value_or(std::string());
    issuer.https_ca_file = (*t)["https_ca_file"].value_or(std::string());
    issuer.audiences = audiences;
    if (auto* aud = (*t)["audience"].as_array())
      for (const auto& a : *aud)
        if (auto v = a.value<std::string>()) issuer.audiences.push_back(*v);
    if (auto v = (*t)["audience"].value<std::string>()) issuer.audiences.push_back(*v);
    issuer.accept_any_audience = (*t)["accept_any_audience"].value_or(any_audience);
    out.push_back(std::move(issuer));
  }
  return out;
}

TokenPolicy load_token_policy(const ServerOptions& options) {
  std::vector<TokenIssuerConfig> configs;
  if (!options.token_issuers_file.empty()) configs = read_token_issuers(options.token_issuers_file);
  configs.insert(configs.end(), options.token_issuers.begin(), options.token_issuers.end());
  TokenPolicy policy;
  for (const auto& config : configs) {
    TokenIssuer issuer;
    static_cast<TokenIssuerConfig&>(issuer) = config;
    const std::string& where = config.where;
    if (issuer.url.empty()) throw Error(Errc::usage, where + ": no url (the tokens' iss claim)");
    for (const auto& other : policy.issuers)
      if (other.url == issuer.url) throw Error(Errc::usage, where + ": issuer " + issuer.url + " is listed twice (also " + other.where + ")");
    if (issuer.audiences.empty() && !issuer.accept_any_audience)
      throw Error(Errc::usage, where + ": give `audience = [...]` (the aud values tokens for this server carry) or "
                                       "accept_any_audience = true");
    auto base = normalize_request_path(issuer.base_path);
    if (!base) throw Error(Errc::usage, where + ": base_path with '..'");
    issuer.base_path = *base;
    if (!issuer.key_file.empty()) {
      issuer.keys_pem = public_keys(issuer.key_file, where);
    } else if (issuer.url.rfind("https://", 0) != 0) {
      throw Error(Errc::usage, where + ": no key_file, and the keys of " + issuer.url + " cannot be fetched: only an "
                                       "https:// issuer's JWKS is (give key_file = PEM public keys)");
    } else {
      if (!issuer.https_ca_file.empty() && ::access(issuer.https_ca_file.c_str(), R_OK) != 0)
        throw Error(Errc::usage, where + ": cannot read https_ca_file " + issuer.https_ca_file + ": " + errno_text(errno));
      issuer.jwks = std::make_shared<IssuerKeys>(issuer.url, issuer.https_ca_file);
    }
    policy.issuers.push_back(std::move(issuer));
  }
  return policy;
}

}  // namespace pxfer::server
