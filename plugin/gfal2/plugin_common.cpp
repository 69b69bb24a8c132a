#include "plugin_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "pxfer/io/secret_file.hpp"

namespace pxfer::gfal {
namespace {

// A g_free'd string from gfal2's configuration ("" when unset).
std::string option(gfal2_context_t context, const char* key) {
  gchar* value = gfal2_get_opt_string_with_default(context, config_group, key, nullptr);
  std::string out = value ? value : "";
  g_free(value);
  return out;
}

std::string trimmed(const std::string& raw) {
  auto first = raw.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return raw.substr(first, raw.find_last_not_of(" \t\r\n") - first + 1);
}

std::string checked_token(const std::string& token, const std::string& origin) {
  bool printable = !token.empty() && token.size() <= 8192;  // wire::max_auth_token: a pxfer token or a WLCG JWT
  for (char c : token)
    if (c <= ' ' || c > '~') printable = false;
  if (!printable) throw Error(Errc::usage, origin + ": not a token (one line: what `pxferd token create` printed, or a JWT)");
  return token;
}

}  // namespace

GQuark quark() { return g_quark_from_static_string("pxfer"); }

bool is_pxfer_url(const char* url) { return url && std::strncmp(url, "pxfer://", 8) == 0; }

Url parse_pxfer_url(const char* url) {
  std::string why;
  auto parsed = parse_url(url ? url : "", &why);
  if (!parsed) throw Error(Errc::usage, std::string(url ? url : "(null)") + ": " + why);
  return *parsed;
}

std::string gfal_checksum_form(ChecksumAlgo algo, const std::string& hex) {
  if (algo != ChecksumAlgo::crc32 || hex.empty()) return hex;
  return std::to_string(std::stoul(hex, nullptr, 16));
}

ChecksumAlgo checksum_algo_of(const std::string& gfal_name) {
  std::string name = gfal_name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name.empty()) name = "adler32";
  auto algo = parse_checksum_algo(name);
  if (!algo || *algo == ChecksumAlgo::none)
    throw PosixError{ENOTSUP, "checksum " + gfal_name + ": pxfer offers ADLER32, SHA256, MD5, CRC32 and SHA1"};
  return *algo;
}

namespace {
// The errno a server or local failure named in its message (pxfer's Errc is coarser: ENOTDIR is
// not_found, ENOSPC local_io): pxferd's messages end with strerror's text, the same glibc words here.
int named_errno(const std::string& text) {
  for (int err : {ENOSPC, EDQUOT, EISDIR, ENOTDIR, ENOTEMPTY, EROFS, EPERM, ENAMETOOLONG, EFBIG})
    if (text.find(std::strerror(err)) != std::string::npos) return err;
  return 0;
}
}  // namespace

// The errno gridftp and xrootd give for the same condition (docs/grid.md has the table).
int errno_of(const Error& e) {
  const std::string text = e.what();
  if (const int named = named_errno(text)) return named;
  switch (e.code()) {
    case Errc::not_found: return ENOENT;
    case Errc::permission: return EACCES;
    case Errc::exists:
      // RENAME onto a directory that is not empty (rename(2) says ENOTEMPTY too).
      return text.find("not empty") != std::string::npos ? ENOTEMPTY : EEXIST;
    case Errc::usage: return EINVAL;
    case Errc::integrity: return EIO;  // checksum or size mismatch
    case Errc::local_io: return EIO;
    case Errc::protocol: return ECOMM;  // as gfal2's xrootd plugin answers a peer it cannot understand
    case Errc::interrupted: return ECANCELED;
    case Errc::network:
      if (text.find("refused") != std::string::npos) return ECONNREFUSED;
      if (text.find("timed out") != std::string::npos || text.find("stall") != std::string::npos) return ETIMEDOUT;
      if (text.find("resolve") != std::string::npos) return EHOSTUNREACH;
      return ECONNRESET;
    case Errc::ok:
    case Errc::internal: break;
  }
  return EIO;
}

namespace {

// One credential of gfal2's map for a URL, with the length of the URL prefix it was set for: 0 is
// the default entry gfal2 fills itself from X509_USER_PROXY, X509_USER_CERT/KEY or its [X509]
// configuration; a longer one was set for this server (ctx.cred_set, FTS3's per-transfer creds).
struct Mapped {
  std::string value;  // "" = none
  std::size_t prefix = 0;
};

Mapped mapped(gfal2_context_t context, const char* type, const char* url) {
  GError* cred_error = nullptr;
  const char* base = nullptr;
  gchar* value = gfal2_cred_get(context, type, url, &base, &cred_error);
  if (cred_error) g_error_free(cred_error);
  Mapped m;
  if (value) m.value = trimmed(value);
  if (!m.value.empty() && base) m.prefix = std::strlen(base);
  g_free(value);
  return m;
}

// An X.509 credential from gfal2's map: the certificate (a proxy file holds its key too) and the
// key set for the same prefix, else the certificate's file. Such a credential talks to a grid
// server: its host certificate is checked against X509_CERT_DIR with the host name, as gsiftp and
// davs do, unless [PXFER] CA or FINGERPRINT says how. Never beside a token: one identity a server.
void use_x509(ClientSecurity& s, const Mapped& cert, const Mapped& key) {
  s.cert_file = cert.value;
  s.key_file = !key.value.empty() && key.prefix == cert.prefix ? key.value : cert.value;
  s.token.clear();
  if (const char* dir = std::getenv("X509_CERT_DIR"); dir && *dir && s.ca_file.empty() && s.fingerprint.empty())
    s.ca_file = dir;
}

// The grid proxy where grid tools keep it when nothing names one: /tmp/x509up_u$UID.
Mapped default_proxy() {
  const std::string path = "/tmp/x509up_u" + std::to_string(::getuid());
  return ::access(path.c_str(), R_OK) == 0 ? Mapped{path, 0} : Mapped{};
}

}  // namespace

// Which credential a server gets, most specific first: gfal2's map entry for its URL (BEARER or
// X509_CERT, the longer prefix winning, a BEARER on a tie: FTS3 sets tokens per URL beside the
// process's proxy); then [PXFER] TOKEN_FILE / CERT+KEY; then gfal2's default X.509 (X509_USER_PROXY,
// X509_USER_CERT/KEY, [X509] CERT/KEY) or /tmp/x509up_u$UID. What one server gets never reaches another.
ClientSecurity security_for(gfal2_context_t context, const char* url) {
  ClientSecurity s;
  s.known_hosts_file = option(context, "KNOWN_HOSTS");
  s.ca_file = option(context, "CA");
  s.cert_file = option(context, "CERT");
  s.key_file = option(context, "KEY");
  if (auto fp = option(context, "FINGERPRINT"); !fp.empty()) {
    s.fingerprint = normalize_fingerprint(fp);
    if (s.fingerprint.empty()) throw Error(Errc::usage, "PXFER:FINGERPRINT " + fp + ": expected sha256: and 64 hex digits");
  }
  const Mapped bearer = mapped(context, GFAL_CRED_BEARER, url);
  const Mapped cert = mapped(context, GFAL_CRED_X509_CERT, url);
  const Mapped key = mapped(context, GFAL_CRED_X509_KEY, url);
  if (cert.prefix > 0 && cert.prefix > bearer.prefix) {
    use_x509(s, cert, key);
    return s;
  }
  if (!bearer.value.empty()) {
    s.token = checked_token(bearer.value, "the BEARER credential gfal2 gave");
    return s;
  }
  if (auto file = option(context, "TOKEN_FILE"); !file.empty()) {
    s.token = checked_token(trimmed(read_protected_file(file, "PXFER:TOKEN_FILE", FileSecrecy::private_secret)),
                            "PXFER:TOKEN_FILE " + file);
    return s;
  }
  if (!s.cert_file.empty()) return s;
  if (const Mapped global = cert.value.empty() ? default_proxy() : cert; !global.value.empty()) use_x509(s, global, key);
  return s;
}

namespace {
// The row's [PXFER] key, if gfal2's configuration sets it (a -D or pxfer_plugin.conf).
void apply_config_key(gfal2_context_t context, const OptionRow& row, OptionValues& values) {
  const std::string text = trimmed(option(context, row.gfal2_key));
  if (text.empty()) return;
  apply_gfal_value(option_name(row).c_str(), text + (row.gfal2_unit ? row.gfal2_unit : ""),
                   std::string(config_group) + ":" + row.gfal2_key + "=" + text, values);
}
}  // namespace

void apply_gfal_value(const char* name, const std::string& text, const std::string& origin, OptionValues& values) {
  const OptionRow* row = find_option(name);
  if (!row) throw PosixError{EINVAL, origin + ": pxfer has no such option"};
  if (auto problem = apply_option(*row, text, values); !problem.empty()) throw PosixError{EINVAL, origin + ": " + problem};
}

void apply_config_keys(gfal2_context_t context, OptionValues& values) {
  for (const OptionRow& row : option_table())
    if (row.gfal2_key) apply_config_key(context, row, values);
}

int connect_timeout_seconds(gfal2_context_t context) {
  OptionValues values;
  apply_config_key(context, *find_option("connect-timeout"), values);
  const auto ms = values.client.connect_timeout.count();
  return static_cast<int>((ms + 999) / 1000);  // whole seconds, never 0: the row's least is 100 ms
}

}  // namespace pxfer::gfal
