#include "jwks.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "https_get.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer::server {
namespace {

using nlohmann::json;

// base64url without padding (RFC 7518 6.3: n, e, x, y); "" when it is not.
std::string unbase64url(std::string text) {
  for (char& c : text) c = c == '-' ? '+' : c == '_' ? '/' : c;
  const std::size_t pad = (4 - text.size() % 4) % 4;
  if (pad == 3) return "";
  text.append(pad, '=');
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return "";
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

std::string member(const json& jwk, const char* name) {
  auto it = jwk.find(name);
  return it != jwk.end() && it->is_string() ? unbase64url(it->get<std::string>()) : "";
}

using Params = std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)>;
using Bignum = std::unique_ptr<BIGNUM, decltype(&BN_free)>;

// The PEM of the public key `params` describe; "" when OpenSSL refuses them.
std::string pem_of(const char* type, OSSL_PARAM_BLD* build) {
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(build), OSSL_PARAM_free);
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr),
                                                                  EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1)
    return "";
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(raw, EVP_PKEY_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  if (PEM_write_bio_PUBKEY(out.get(), key.get()) != 1) return "";
  char* data = nullptr;
  const long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string rsa_pem(const json& jwk) {
  const std::string n = member(jwk, "n"), e = member(jwk, "e");
  if (n.empty() || e.empty()) return "";
  auto bn = [](const std::string& s) {
    return Bignum(BN_bin2bn(reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()), nullptr), BN_free);
  };
  Bignum bn_n = bn(n), bn_e = bn(e);
  Params build(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
  if (!bn_n || !bn_e || !build || !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()))
    return "";
  return pem_of("RSA", build.get());
}

std::string ec_pem(const json& jwk) {
  const std::string crv = jwk.value("crv", "");
  const char* group = crv == "P-256" ? "prime256v1" : crv == "P-384" ? "secp384r1" : crv == "P-521" ? "secp521r1" : nullptr;
  const std::size_t size = crv == "P-256" ? 32 : crv == "P-384" ? 48 : 66;
  std::string x = member(jwk, "x"), y = member(jwk, "y");
  // RFC 7518 wants each coordinate at the curve's full size, but PyJWT before 2.8 (Debian 12's)
  // drops its leading zero bytes, about one key in 128: the same number, padded back here.
  if (!group || x.empty() || y.empty() || x.size() > size || y.size() > size) return "";
  x.insert(0, size - x.size(), '\0');
  y.insert(0, size - y.size(), '\0');
  const std::string point = std::string(1, '\x04') + x + y;  // uncompressed (SEC 1 2.3.3)
  Params build(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
  if (!build || !OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0) ||
      !OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()))
    return "";
  return pem_of("EC", build.get());
}

json document(const std::string& text, const std::string& what) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) throw Error(Errc::network, what + " is not a JSON object");
  return j;
}

}  // namespace

JwkSet parse_jwks(const std::string& json_text) {
  const json doc = document(json_text, "the JWKS");
  auto keys = doc.find("keys");
  if (keys == doc.end() || !keys->is_array()) throw Error(Errc::network, "the JWKS has no \"keys\" array");
  JwkSet set;
  for (const auto& jwk : *keys) {
    const std::string kty = jwk.is_object() ? jwk.value("kty", "") : "";
    const std::string use = jwk.is_object() ? jwk.value("use", "sig") : "";
    const std::string pem = use != "sig" ? "" : kty == "RSA" ? rsa_pem(jwk) : kty == "EC" ? ec_pem(jwk) : "";
    if (pem.empty()) {
      ++set.skipped;
      continue;
    }
    set.all.push_back(pem);
    auto kid = jwk.find("kid");
    set.by_kid[kid != jwk.end() && kid->is_string() ? kid->get<std::string>() : ""].push_back(pem);
  }
  if (set.all.empty()) throw Error(Errc::network, "the JWKS holds no RSA or EC signing key");
  return set;
}

IssuerKeys::IssuerKeys(std::string issuer_url, std::string https_ca_file)
    : issuer_(std::move(issuer_url)), ca_file_(std::move(https_ca_file)) {}

// One fetch, no lock held: other logins of the issuer go on with the keys in force meanwhile.
void IssuerKeys::fetch(std::chrono::steady_clock::time_point now) {
  std::string jwks_uri, error;
  JwkSet keys;
  try {
    const std::string base = issuer_.back() == '/' ? issuer_.substr(0, issuer_.size() - 1) : issuer_;
    const std::string discovery = base + "/.well-known/openid-configuration";
    const json config = document(https_get(discovery, ca_file_, limits::jwks_fetch_timeout, limits::jwks_max_bytes), discovery);
    jwks_uri = config.value("jwks_uri", "");
    if (jwks_uri.rfind("https://", 0) != 0) throw Error(Errc::network, discovery + " names no https:// jwks_uri");
    keys = parse_jwks(https_get(jwks_uri, ca_file_, limits::jwks_fetch_timeout, limits::jwks_max_bytes));
  } catch (const std::exception& e) {  // Error, and a jwks_uri that is not a string (nlohmann's type_error)
    error = e.what();
  }
  std::lock_guard lock(mutex_);
  fetching_ = false;
  if (!error.empty()) {
    last_error_ = error;
    spdlog::error("token issuer {}: cannot fetch its keys: {}; its tokens are refused until a fetch succeeds "
                  "(or give the issuer a key_file)", issuer_, last_error_);
    return;
  }
  keys_ = std::move(keys);
  have_keys_ = true;
  fetched_at_ = now;
  last_error_.clear();
  spdlog::info("token issuer {}: {} keys from {} ({} of other types skipped)", issuer_, keys_.all.size(), jwks_uri,
               keys_.skipped);
}

std::vector<std::string> IssuerKeys::keys_for(const std::string& kid) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    const bool stale = !have_keys_ || now - fetched_at_ >= limits::jwks_refresh;
    const bool unknown = !kid.empty() && have_keys_ && !keys_.by_kid.count(kid);
    const bool due = !fetching_ && (!tried_ || now - tried_at_ >= limits::jwks_min_refetch);
    if ((stale || unknown) && due) {
      fetching_ = tried_ = true;
      tried_at_ = now;
    } else {
      return keys_in_force(kid, now);
    }
  }
  fetch(now);
  std::lock_guard lock(mutex_);
  return keys_in_force(kid, now);
}

std::vector<std::string> IssuerKeys::keys_in_force(const std::string& kid, std::chrono::steady_clock::time_point now) {
  if (have_keys_ && now - fetched_at_ >= limits::jwks_max_age) {
    have_keys_ = false;
    keys_ = {};
    spdlog::error("token issuer {}: its keys are older than {} s and could not be refreshed; its tokens are refused",
                  issuer_, limits::jwks_max_age.count());
  }
  if (!have_keys_)
    throw Error(Errc::permission, "bearer token refused: the keys of issuer " + issuer_ + " could not be fetched (" +
                                      (fetching_ ? "a fetch is in progress" : last_error_.empty() ? "not yet tried" : last_error_) + ")");
  if (kid.empty()) return keys_.all;
  auto it = keys_.by_kid.find(kid);
  if (it == keys_.by_kid.end()) it = keys_.by_kid.find("");  // keys the JWKS names no kid for may be any
  return it == keys_.by_kid.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace pxfer::server
