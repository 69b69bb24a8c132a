// A token issuer's JWKS made into PEM public keys (server/jwks.hpp), and grid identities as bounded
// metrics labels (server/metrics.hpp): keys made here with OpenSSL, turned into JWKs and back.
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>
#include <string>

#include "pxfer/common/error.hpp"
#include "server/jwks.hpp"
#include "server/metrics.hpp"

namespace pxfer {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

std::string b64url(const unsigned char* data, std::size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<std::size_t>(len));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::string pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PUBKEY(out.get(), key);
  char* data = nullptr;
  const long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string bn_b64(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EVP_PKEY_get_bn_param(key, name, &bn);
  std::string bytes(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
  BN_free(bn);
  return b64url(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// {"kty":"EC","crv":"P-256","x":...,"y":...} of an EC key.
std::string ec_jwk(EVP_PKEY* key, const std::string& extra) {
  unsigned char point[65];
  std::size_t n = 0;
  EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &n);
  EXPECT_EQ(n, 65u);
  return R"({"kty":"EC","crv":"P-256","x":")" + b64url(point + 1, 32) + R"(","y":")" + b64url(point + 33, 32) + "\"" +
         extra + "}";
}

TEST(Jwks, RsaAndEcKeysBecomeTheSamePemSelectedByKid) {
  Key ec(EVP_EC_gen("P-256"), EVP_PKEY_free);
  Key rsa(EVP_RSA_gen(1024), EVP_PKEY_free);
  ASSERT_TRUE(ec && rsa);
  const std::string rsa_jwk = R"({"kty":"RSA","kid":"r","n":")" + bn_b64(rsa.get(), OSSL_PKEY_PARAM_RSA_N) +
                              R"(","e":")" + bn_b64(rsa.get(), OSSL_PKEY_PARAM_RSA_E) + "\"}";
  const std::string doc = R"({"keys":[)" + ec_jwk(ec.get(), R"(,"kid":"e","use":"sig")") + "," + rsa_jwk + "," +
                          ec_jwk(ec.get(), R"(,"kid":"enc","use":"enc")") + R"(,{"kty":"oct","k":"c2VjcmV0"}]})";
  const server::JwkSet set = server::parse_jwks(doc);
  ASSERT_EQ(set.all.size(), 2u);
  EXPECT_EQ(set.skipped, 2u);  // an encryption key and a symmetric one: never used to verify
  ASSERT_EQ(set.by_kid.count("e"), 1u);
  ASSERT_EQ(set.by_kid.count("r"), 1u);
  EXPECT_EQ(set.by_kid.at("e").front(), pem(ec.get()));
  EXPECT_EQ(set.by_kid.at("r").front(), pem(rsa.get()));
  EXPECT_EQ(set.by_kid.count("enc"), 0u);
}

// PyJWT before 2.8 (Debian 12's python3-jwt) writes an EC coordinate without its leading zero
// bytes, about one key in 128: such a key is the same key (the grid test's issuer failed now and
// then with "its signature does not verify").
TEST(Jwks, AnEcCoordinateWithoutItsLeadingZeroIsTheSameKey) {
  for (int tries = 0; tries < 5000; ++tries) {
    Key ec(EVP_EC_gen("P-256"), EVP_PKEY_free);
    ASSERT_TRUE(ec);
    unsigned char point[65];
    std::size_t n = 0;
    EVP_PKEY_get_octet_string_param(ec.get(), OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &n);
    if (point[1] != 0) continue;  // x has no leading zero: try another key
    const std::string short_x = R"({"keys":[{"kty":"EC","crv":"P-256","kid":"z","x":")" + b64url(point + 2, 31) +
                                R"(","y":")" + b64url(point + 33, 32) + R"("}]})";
    const server::JwkSet set = server::parse_jwks(short_x);
    ASSERT_EQ(set.all.size(), 1u);
    EXPECT_EQ(set.all.front(), pem(ec.get()));
    return;
  }
  FAIL() << "no P-256 key with a leading zero byte in x in 5000 tries";
}

TEST(Jwks, DocumentsWithoutUsableKeysAreRefused) {
  for (const std::string doc : {"", "[]", R"({"keys":3})", R"({"keys":[{"kty":"oct","k":"c2VjcmV0"}]})",
                                R"({"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]})",
                                R"({"keys":[{"kty":"RSA","n":"","e":"AQAB"}]})"}) {
    EXPECT_THROW(server::parse_jwks(doc), Error) << doc;
  }
}

TEST(MetricsLabels, GridIdentitiesStayReadableAndBounded) {
  const std::string dn = "/DC=org/DC=example/OU=Users/CN=Jane Doe (/atlas/Role=production)";
  EXPECT_EQ(server::identity_label(dn), dn);
  const std::string a = "token:" + std::string(200, 'x') + "a@https://iam.example.org/";
  const std::string b = "token:" + std::string(200, 'x') + "b@https://iam.example.org/";
  const std::string la = server::identity_label(a), lb = server::identity_label(b);
  EXPECT_LE(la.size(), limits::metrics_identity_label_bytes);
  EXPECT_EQ(la.substr(0, 20), a.substr(0, 20));
  EXPECT_EQ(la[la.size() - 9], '~');
  EXPECT_NE(la, lb);                             // one shared start, two series
  EXPECT_EQ(la, server::identity_label(a));      // stable
  std::string wide = "/CN=";
  for (int i = 0; i < 100; ++i) wide += "\xc3\xa9";  // é
  const std::string lw = server::identity_label(wide);
  EXPECT_LE(lw.size(), limits::metrics_identity_label_bytes);
  const std::string kept = lw.substr(0, lw.size() - 9);
  EXPECT_EQ((kept.size() - 4) % 2, 0u) << "cut inside a two-byte character";
}

}  // namespace
}  // namespace pxfer
