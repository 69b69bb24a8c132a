#pragma once
// pxferd's client authentication and authorisation, without sockets: the tokens file (one
// identity a line, the token stored as a salted SHA-256), the access file (identity -> export
// subpaths with ro/rw) and the check of a request path against an identity's grants.
#include "pxfer/server/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pxfer::server {

// Tokens file lines: `NAME sha256:SALT_HEX:HASH_HEX` where HASH = SHA-256(SALT || TOKEN);
// blank lines and lines starting with '#' are ignored.
struct TokenEntry {
  std::string name;
  std::string salt;  // raw bytes
  std::string hash;  // raw 32 bytes
};

class TokenStore {
 public:
  // Throws Error(usage) naming the file and line of a malformed entry or a reserved name;
  // Error(not_found) when the file is missing; Error(permission) when other users could change
  // it or every user could read it (read_protected_file).
  static TokenStore load(const std::string& path);
  static TokenStore parse(const std::string& text, const std::string& origin);
  // The identity whose token this is. Every entry is compared (in constant time, CRYPTO_memcmp),
  // so the time taken does not say which or how many entries came close.
  std::optional<std::string> identify(const std::string& token) const;
  // The entry this token matches (as identify compares), to tell later whether a reloaded file
  // still holds it without keeping the token itself.
  std::optional<TokenEntry> entry_of(const std::string& token) const;
  // Whether this file holds `entry` (the same name, salt and hash): false once its line is removed
  // or the identity was given a new token.
  bool holds(const TokenEntry& entry) const;
  bool contains(const std::string& name) const;
  std::vector<std::string> names() const;  // in file order
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<TokenEntry> entries_;
};

// A new random token: 32 bytes from the OpenSSL CSPRNG, as 64 lower-case hex digits.
std::string generate_token();
// The tokens-file line for NAME and TOKEN, with a fresh 16-byte salt (no newline).
std::string token_line(const std::string& name, const std::string& token);
// create_token, list_tokens, revoke_token: token_admin.hpp.
// A form of a token that is safe to log: "token-id:" + first 8 hex digits of SHA-256(token).
std::string log_safe_token_id(const std::string& token);
// Names: 1-64 characters of [A-Za-z0-9._@-].
bool valid_identity_name(const std::string& name);
// A grid user's DN, "/DC=org/DC=example/CN=Jane Doe" (up to 1024 printable characters, no '"'):
// an identity in the access file, written there in double quotes when it holds spaces.
bool grid_dn_identity(const std::string& name);
// An access-file grid identity: "fqan:/vo[/group...][/Role=R]" (voms_attributes.hpp: fqan_matches),
// "group:/GROUP" (a token's wlcg.groups) or "token:SUBJECT@ISSUER" (a token's sub and iss).
bool fqan_pattern(const std::string& name);
// "anonymous" in any case: the identity of clients without credentials (--anonymous-read). No
// token may carry it (its holder would get anonymous's grants, with write access).
bool reserved_identity_name(const std::string& name);

struct Grant {
  std::string path;  // normalised, relative to the export root; "" = the whole root
  bool write = false;
  bool read = true;  // false only for a bearer token's storage.create/modify without storage.read
};

// What a third-party copy grant admits: one OPEN of `path` (normalised) in `direction` (1 = put:
// the peer writes `size` bytes, overwriting only when `overwrite`; 2 = get: the peer reads).
struct TpcScope {
  std::string path;
  std::uint8_t direction = 0;  // wire::Direction's value
  std::uint64_t size = 0;
  bool overwrite = false;
  std::string steering_identity;  // who asked for the grant (for the logs)
};

// Access file lines: `IDENTITY PATH ro|rw` ('#' comments); IDENTITY is a token or certificate name,
// a grid DN (`"/DC=org/DC=example/CN=Jane Doe" /data rw`) or a VOMS FQAN pattern
// (`fqan:/atlas/Role=production /atlas rw`: members of /atlas and its subgroups with that role),
// a WLCG token's subject (`token:SUBJECT@ISSUER`) or one of its wlcg.groups (`group:/atlas`). PATH is relative to the export root
// ("/" or "." = all of it). The identity "anonymous" is the one --anonymous-read uses (its grants
// are read-only whatever the file says).
class AccessMap {
 public:
  static AccessMap load(const std::string& path);
  static AccessMap parse(const std::string& text, const std::string& origin);
  // The identity's grants; empty when it has none.
  std::vector<Grant> grants_of(const std::string& identity) const;
  // The grants of the `fqan:PATTERN` lines that cover one of `fqans` (fqan_matches).
  std::vector<Grant> grants_of_fqans(const std::vector<std::string>& fqans) const;
  // The grants of the `group:/GROUP` lines that cover one of a token's wlcg.groups (the group or
  // one below it).
  std::vector<Grant> grants_of_groups(const std::vector<std::string>& groups) const;

 private:
  std::vector<std::pair<std::string, Grant>> entries_;
};

// Lexical normal form of a request path ("a//b/./c/" -> "a/b/c"); nullopt when it has a ".."
// component, which could leave a grant while staying below the root.
std::optional<std::string> normalize_request_path(const std::string& path);
// Whether `grants` allow reading (write = false) or writing `path`. The deepest grant covering
// the path decides.
bool allowed(const std::vector<Grant>& grants, const std::string& path, bool write);

}  // namespace pxfer::server
