// Server::reload's work, kept out of server.cpp: the tokens and access files, re-read and swapped
// in whole (auth_tables.hpp says why whole).
#include <spdlog/spdlog.h>

#include "auth_tables.hpp"
#include "pxfer/error.hpp"

namespace pxfer::server {

AuthFiles AuthFiles::load(const std::string& tokens_file, const std::string& access_file) {
  AuthFiles files;
  if (!tokens_file.empty()) files.tokens = TokenStore::load(tokens_file);
  if (!access_file.empty()) files.access = AccessMap::load(access_file);
  return files;
}

void reload_auth(AuthTables& tables, const AuthFileNames& started, const AuthFileNames& next) {
  auto keep = [](const std::string& before, const std::string& after, const char* option) {
    if (!before.empty() && after.empty())
      throw Error(Errc::usage, std::string("the reload would drop ") + option + " (the server started with " + before +
                                   "): only a restart can do that");
  };
  keep(started.tokens, next.tokens, "--tokens");
  keep(started.access, next.access, "--access");
  AuthFiles files = AuthFiles::load(next.tokens, next.access);
  const auto before = tables.get();
  const std::size_t old_count = before->tokens ? before->tokens->size() : 0;
  const std::size_t new_count = files.tokens ? files.tokens->size() : 0;
  tables.set(std::move(files));
  spdlog::info("reloaded: tokens {} ({} identities, {} before), access {}", next.tokens.empty() ? "-" : next.tokens,
               new_count, old_count, next.access.empty() ? "- (every identity read-write)" : next.access);
}

}  // namespace pxfer::server
