#pragma once
// Where pxfer finds the token it sends (docs/grid.md): pxfer's own first (--token-file, then
// PXFER_TOKEN), then the WLCG Bearer Token Discovery order (WLCG Common JWT Profile, section
// "Bearer token discovery"): BEARER_TOKEN, the file BEARER_TOKEN_FILE names,
// $XDG_RUNTIME_DIR/bt_u$UID, /tmp/bt_u$UID. The first that is set (or exists) is used, as it
// is: a file named by a variable must exist, a discovered one may be absent. Then the grid
// proxy (find_proxy), for grid servers that authenticate by X.509 (pxferd --x509).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "pxfer/common/error.hpp"
#include "pxfer/io/secret_file.hpp"

namespace pxfer::cli {

struct FoundToken {
  std::string raw;     // the text as found (trimmed by the caller); "" = no token anywhere
  std::string origin;  // where, for messages ("BEARER_TOKEN_FILE /path"); never the token
};

inline FoundToken find_token(const std::string& token_file) {
  auto file = [](const std::string& path, const std::string& what) {
    return FoundToken{read_protected_file(path, what, FileSecrecy::private_secret), what + " " + path};
  };
  if (!token_file.empty()) return file(token_file, "--token-file");
  if (const char* env = std::getenv("PXFER_TOKEN")) return {env, "PXFER_TOKEN"};
  if (const char* env = std::getenv("BEARER_TOKEN")) return {env, "BEARER_TOKEN"};
  if (const char* path = std::getenv("BEARER_TOKEN_FILE")) return file(path, "BEARER_TOKEN_FILE");
  const std::string uid = std::to_string(::getuid());
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run) {
    const std::string path = std::string(run) + "/bt_u" + uid;
    if (::access(path.c_str(), F_OK) == 0) return file(path, "the WLCG token file");
  }
  const std::string tmp = "/tmp/bt_u" + uid;
  if (::access(tmp.c_str(), F_OK) == 0) return file(tmp, "the WLCG token file");
  return {};
}

// The grid proxy file: X509_USER_PROXY when set (it must then exist), else /tmp/x509up_u$UID when
// it exists; "" = none. The file holds the proxy, its key and the chain (cert and key both).
inline std::string find_proxy() {
  if (const char* p = std::getenv("X509_USER_PROXY"); p && *p) {
    if (::access(p, R_OK) != 0) throw Error(Errc::usage, std::string("X509_USER_PROXY ") + p + ": " + errno_text(errno));
    return p;
  }
  const std::string tmp = "/tmp/x509up_u" + std::to_string(::getuid());
  return ::access(tmp.c_str(), R_OK) == 0 ? tmp : "";
}

}  // namespace pxfer::cli
