#include "bearer_token.hpp"

#include <jwt.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "pxfer/common/error.hpp"

namespace pxfer::server {
namespace {

using nlohmann::json;
constexpr const char* wlcg_any_audience = "https://wlcg.cern.ch/jwt/v1/any";
constexpr std::int64_t clock_skew = 60;  // seconds of leeway for nbf and iat (the profile suggests up to 60)

Error refused(const std::string& why) { return Error(Errc::permission, "bearer token refused: " + why); }

std::string base64url_decode(std::string part) {
  for (char& c : part) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (part.size() % 4) part += '=';
  std::string out(part.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(part.data()),
                          static_cast<int>(part.size()));
  if (n < 0) throw refused("not base64url");
  std::size_t pad = part.size() - part.find_last_not_of('=') - 1;
  out.resize(static_cast<std::size_t>(n) - std::min<std::size_t>(pad, 2));
  return out;
}

std::vector<std::string> parts_of(const std::string& token) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (auto dot = token.find('.'); dot != std::string::npos; dot = token.find('.', start)) {
    parts.push_back(token.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(token.substr(start));
  return parts;
}

json json_part(const std::string& part, const char* what) {
  json j = json::parse(base64url_decode(part), nullptr, false);
  if (!j.is_object()) throw refused(std::string("its ") + what + " is not a JSON object");
  return j;
}

// The key type an algorithm needs; HMAC and `none` are never accepted (a public key used as an
// HMAC secret would let anyone who has it sign).
int key_type_for(const std::string& alg) {
  if (alg == "RS256" || alg == "RS384" || alg == "RS512") return EVP_PKEY_RSA;
  if (alg == "ES256" || alg == "ES384" || alg == "ES512") return EVP_PKEY_EC;
  throw refused("algorithm '" + alg + "' is not allowed (RS256/384/512 or ES256/384/512 only)");
}

int pem_key_type(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
                                                          EVP_PKEY_free);
  return key ? EVP_PKEY_get_base_id(key.get()) : -1;
}

bool signature_verifies(const std::string& token, const TokenIssuer& issuer, int key_type, const std::string& kid) {
  const std::vector<std::string> keys = issuer.jwks ? issuer.jwks->keys_for(kid) : issuer.keys_pem;
  for (const auto& pem : keys) {
    if (pem_key_type(pem) != key_type) continue;
    jwt_t* jwt = nullptr;
    int rc = jwt_decode(&jwt, token.c_str(), reinterpret_cast<const unsigned char*>(pem.data()), static_cast<int>(pem.size()));
    if (jwt) jwt_free(jwt);
    if (rc == 0) return true;
  }
  return false;
}

std::int64_t time_claim(const json& claims, const char* name, bool required) {
  auto it = claims.find(name);
  if (it == claims.end()) {
    if (required) throw refused(std::string("it has no '") + name + "' claim");
    return 0;
  }
  if (!it->is_number()) throw refused(std::string("its '") + name + "' claim is not a number");
  return it->get<std::int64_t>();
}

void check_times(const json& claims, std::int64_t now) {
  const std::int64_t exp = time_claim(claims, "exp", true);
  if (exp <= now) throw refused("it expired " + std::to_string(now - exp) + " s ago");
  if (claims.contains("nbf") && time_claim(claims, "nbf", false) > now + clock_skew)
    throw refused("it is not valid yet (nbf is " + std::to_string(time_claim(claims, "nbf", false) - now) + " s ahead)");
  if (claims.contains("iat") && time_claim(claims, "iat", false) > now + clock_skew)
    throw refused("it was issued in the future (iat)");
}

void check_audience(const json& claims, const TokenIssuer& issuer) {
  std::vector<std::string> aud;
  auto it = claims.find("aud");
  if (it != claims.end() && it->is_string()) aud.push_back(it->get<std::string>());
  if (it != claims.end() && it->is_array())
    for (const auto& a : *it)
      if (a.is_string()) aud.push_back(a.get<std::string>());
  for (const auto& a : aud) {
    if (issuer.accept_any_audience && a == wlcg_any_audience) return;
    for (const auto& mine : issuer.audiences)
      if (a == mine) return;
  }
  throw refused(aud.empty() ? "it has no audience (aud)" : "its audience '" + aud.front() + "' is not this server's");
}

std::string token_id(const json& claims, const std::string& token) {
  if (auto it = claims.find("jti"); it != claims.end() && it->is_string()) return "jti:" + it->get<std::string>();
  return log_safe_token_id(token);
}

}  // namespace

bool looks_like_jwt(const std::string& token) {
  auto parts = parts_of(token);
  return parts.size() == 3 && token.rfind("eyJ", 0) == 0;
}

std::vector<Grant> grants_of_scopes(const std::string& scope, const std::string& base_path,
                                    std::vector<std::string>& ignored) {
  std::vector<Grant> grants;
  std::size_t start = 0;
  while (start < scope.size()) {
    auto end = scope.find(' ', start);
    std::string s = scope.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? scope.size() : end + 1;
    if (s.empty()) continue;
    auto colon = s.find(':');
    const std::string verb = s.substr(0, colon);
    const bool read = verb == "storage.read", write = verb == "storage.create" || verb == "storage.modify";
    if (!read && !write) {
      ignored.push_back(s);  // storage.stage (no tape here), openid, offline_access, ...
      continue;
    }
    // "storage.read" without a path is the issuer's whole base path (WLCG profile 2.4.2).
    auto path = normalize_request_path(base_path + "/" + (colon == std::string::npos ? "" : s.substr(colon + 1)));
    if (!path) throw refused("scope '" + s + "' climbs out of its issuer's base path");
    grants.push_back(Grant{*path, write, read});
  }
  // Any scope that covers an operation allows it: a deeper grant keeps what a shallower one gives.
  for (auto& g : grants)
    for (const auto& h : grants)
      if (h.path.empty() || g.path == h.path || g.path.rfind(h.path + "/", 0) == 0) {
        g.read = g.read || h.read;
        g.write = g.write || h.write;
      }
  return grants;
}

BearerIdentity verify_bearer_token(const std::string& token, const TokenPolicy& policy,
                                   std::chrono::system_clock::time_point now) {
  auto parts = parts_of(token);
  if (parts.size() != 3) throw refused("not a JWT (three base64url parts)");
  const json header = json_part(parts[0], "header");
  const json claims = json_part(parts[1], "payload");
  const std::string alg = header.value("alg", "");
  const int key_type = key_type_for(alg);
  const std::string iss = claims.contains("iss") && claims["iss"].is_string() ? claims["iss"].get<std::string>() : "";
  const TokenIssuer* issuer = nullptr;
  for (const auto& i : policy.issuers)
    if (i.url == iss) issuer = &i;
  if (!issuer) throw refused("issuer '" + iss + "' is not one this server trusts (--token-issuers, [[issuer]])");
  const std::string kid = header.contains("kid") && header["kid"].is_string() ? header["kid"].get<std::string>() : "";
  if (!signature_verifies(token, *issuer, key_type, kid))
    throw refused("its signature does not verify with the keys of " + iss + " (" + alg + ")");
  const std::int64_t t = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  check_times(claims, t);
  check_audience(claims, *issuer);
  BearerIdentity id;
  id.issuer = iss;
  id.subject = claims.contains("sub") && claims["sub"].is_string() ? claims["sub"].get<std::string>() : "";
  if (id.subject.empty()) throw refused("it has no subject (sub)");
  id.id = token_id(claims, token);
  if (auto g = claims.find("wlcg.groups"); g != claims.end() && g->is_array())
    for (const auto& v : *g)
      if (v.is_string()) id.groups.push_back(v.get<std::string>());
  if (auto s = claims.find("scope"); s != claims.end() && s->is_string())
    id.grants = grants_of_scopes(s->get<std::string>(), issuer->base_path, id.ignored_scopes);
  return id;
}

}  // namespace pxfer::server
