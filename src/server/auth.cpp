#include "auth.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "pxfer/common/error.hpp"
#include "pxfer/io/secret_file.hpp"
#include "voms_attributes.hpp"

namespace pxfer::server {
namespace {

std::string sha256(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), n);
}

std::string to_hex(const std::string& raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::optional<std::string> from_hex(const std::string& text) {
  if (text.size() % 2) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    int hi = value(text[i]), lo = value(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw Error(Errc::internal, "the OpenSSL random generator failed");
  return out;
}

// Splits a line into whitespace-separated words; a word in double quotes may hold spaces (a grid
// DN such as "/DC=org/DC=example/CN=Jane Doe"). nullopt when a quote is not closed.
std::optional<std::vector<std::string>> words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (true) {
    i = line.find_first_not_of(" \t\r", i);
    if (i == std::string::npos) return out;
    if (line[i] == '"') {
      auto close = line.find('"', i + 1);
      if (close == std::string::npos) return std::nullopt;
      out.push_back(line.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      auto end = line.find_first_of(" \t\r", i);
      out.push_back(line.substr(i, end - i));
      if (end == std::string::npos) return out;
      i = end;
    }
  }
}

template <class F>
void for_each_line(const std::string& text, F&& f) {
  std::istringstream in(text);
  std::string line;
  unsigned number = 0;
  while (std::getline(in, line)) {
    ++number;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    // An unclosed quote: one field, which every caller refuses as the wrong number of fields.
    f(number, words(line).value_or(std::vector<std::string>{line}));
  }
}

}  // namespace

bool reserved_identity_name(const std::string& name) {
  static const std::string reserved = "anonymous";
  if (name.size() != reserved.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[i])) != reserved[i]) return false;
  return true;
}

bool grid_dn_identity(const std::string& name) {
  if (name.size() < 2 || name.size() > 1024 || name[0] != '/' || name.find('=') == std::string::npos) return false;
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == '"') return false;
  return true;
}

bool fqan_pattern(const std::string& name) {
  const bool known = name.rfind("fqan:/", 0) == 0 || name.rfind("group:/", 0) == 0 || name.rfind("token:", 0) == 0;
  if (!known || name.size() < 7 || name.size() > 1024) return false;
  for (unsigned char c : name)
    if (c <= 0x20 || c == 0x7f || c == '"') return false;
  return true;
}

bool valid_identity_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '@' || c == '-')) return false;
  return true;
}

TokenStore TokenStore::parse(const std::string& text, const std::string& origin) {
  TokenStore store;
  for_each_line(text, [&](unsigned number, const std::vector<std::string>& w) {
    auto bad = [&](const std::string& why) {
      return Error(Errc::usage, origin + " line " + std::to_string(number) + ": " + why +
                                    " (expected `NAME sha256:SALT:HASH`, as `pxferd token create` writes)");
    };
    if (w.size() != 2) throw bad("wrong number of fields");
    if (!valid_identity_name(w[0])) throw bad("bad identity name");
    if (reserved_identity_name(w[0]))
      throw Error(Errc::usage, origin + " line " + std::to_string(number) + ": the name " + w[0] +
                                   " is reserved for clients without credentials (a token of that name would get their "
                                   "grants); rename or delete this line");
    const std::string& h = w[1];
    if (h.rfind("sha256:", 0) != 0) throw bad("unknown hash scheme");
    auto colon = h.find(':', 7);
    if (colon == std::string::npos) throw bad("no salt");
    auto salt = from_hex(h.substr(7, colon - 7));
    auto hash = from_hex(h.substr(colon + 1));
    if (!salt || salt->empty() || !hash || hash->size() != 32) throw bad("bad salt or hash");
    if (store.contains(w[0])) throw bad("identity " + w[0] + " appears twice");
    store.entries_.push_back(TokenEntry{w[0], *salt, *hash});
  });
  return store;
}

TokenStore TokenStore::load(const std::string& path) {
  return parse(read_protected_file(path, "tokens file", FileSecrecy::server_config), path);
}

std::optional<std::string> TokenStore::identify(const std::string& token) const {
  auto entry = entry_of(token);
  if (!entry) return std::nullopt;
  return entry->name;
}

std::optional<TokenEntry> TokenStore::entry_of(const std::string& token) const {
  std::optional<TokenEntry> found;
  if (token.empty()) return found;
  for (const auto& e : entries_) {
    std::string h = sha256(e.salt + token);
    if (CRYPTO_memcmp(h.data(), e.hash.data(), h.size()) == 0 && !found) found = e;
  }
  return found;
}

std::vector<std::string> TokenStore::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

bool TokenStore::holds(const TokenEntry& entry) const {
  for (const auto& e : entries_)
    if (e.name == entry.name && e.salt == entry.salt && e.hash == entry.hash) return true;
  return false;
}

bool TokenStore::contains(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return true;
  return false;
}

std::string generate_token() { return to_hex(random_bytes(32)); }

std::string token_line(const std::string& name, const std::string& token) {
  std::string salt = random_bytes(16);
  return name + " sha256:" + to_hex(salt) + ":" + to_hex(sha256(salt + token));
}

std::string log_safe_token_id(const std::string& token) { return "token-id:" + to_hex(sha256(token)).substr(0, 8); }

std::optional<std::string> normalize_request_path(const std::string& path) {
  std::string out;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(start, slash - start);
    if (part == "..") return std::nullopt;
    if (!part.empty() && part != ".") {
      if (!out.empty()) out += '/';
      out += part;
    }
    start = slash + 1;
  }
  return out;
}

AccessMap AccessMap::parse(const std::string& text, const std::string& origin) {
  AccessMap map;
  for_each_line(text, [&](unsigned number, const std::vector<std::string>& w) {
    auto bad = [&](const std::string& why) {
      return Error(Errc::usage, origin + " line " + std::to_string(number) + ": " + why +
                                    " (expected `IDENTITY PATH ro|rw`, a DN in double quotes)");
    };
    if (w.size() != 3) throw bad("wrong number of fields");
    if (!valid_identity_name(w[0]) && !grid_dn_identity(w[0]) && !fqan_pattern(w[0])) throw bad("bad identity name");
    if (w[2] != "ro" && w[2] != "rw") throw bad("rights must be ro or rw");
    auto path = normalize_request_path(w[1]);
    if (!path) throw bad("a path with '..'");
    map.entries_.push_back({w[0], Grant{*path, w[2] == "rw"}});
  });
  return map;
}

AccessMap AccessMap::load(const std::string& path) {
  return parse(read_protected_file(path, "access file", FileSecrecy::server_config), path);
}

std::vector<Grant> AccessMap::grants_of(const std::string& identity) const {
  std::vector<Grant> out;
  for (const auto& [name, grant] : entries_)
    if (name == identity) out.push_back(grant);
  return out;
}

std::vector<Grant> AccessMap::grants_of_fqans(const std::vector<std::string>& fqans) const {
  std::vector<Grant> out;
  for (const auto& [name, grant] : entries_) {
    if (name.rfind("fqan:", 0) != 0) continue;
    for (const auto& f : fqans)
      if (fqan_matches(name.substr(5), f)) {
        out.push_back(grant);
        break;
      }
  }
  return out;
}

std::vector<Grant> AccessMap::grants_of_groups(const std::vector<std::string>& groups) const {
  std::vector<Grant> out;
  for (const auto& [name, grant] : entries_) {
    if (name.rfind("group:/", 0) != 0) continue;
    const std::string g = name.substr(6);
    for (const auto& have : groups)
      if (have == g || have.rfind(g + "/", 0) == 0) {
        out.push_back(grant);
        break;
      }
  }
  return out;
}

bool allowed(const std::vector<Grant>& grants, const std::string& path, bool write) {
  auto normal = normalize_request_path(path);
  if (!normal) return false;
  const Grant* best = nullptr;
  for (const auto& g : grants) {
    bool covers = g.path.empty() || *normal == g.path || normal->rfind(g.path + "/", 0) == 0;
    if (covers && (!best || g.path.size() > best->path.size())) best = &g;
  }
  return best && (write ? best->write : best->read);
}

}  // namespace pxfer::server
