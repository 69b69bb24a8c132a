// Server::reload's work, kept out of server.cpp: the tokens and access files, re-read and swapped
// in whole (auth_tables.hpp says why whole).
#include <spdlog/spdlog.h>

#include "auth_tables.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer::server {
namespace {

// The names of `of` that `in` lacks, comma-separated, or "none". Identity names are of a safe
// alphabet (valid_identity_name), so they go into the log as they are.
std::string names_missing(const std::optional<TokenStore>& of, const std::optional<TokenStore>& in) {
  std::string out;
  if (of)
    for (const auto& name : of->names())
      if (!in || !in->contains(name)) out += (out.empty() ? "" : ",") + name;
  return out.empty() ? "none" : out;
}

}  // namespace

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
  const std::string added = names_missing(files.tokens, before->tokens);
  const std::string removed = names_missing(before->tokens, files.tokens);
  tables.set(std::move(files));
  spdlog::info("reloaded: tokens {} ({} identities, {} before; added: {}; removed: {}), access {}",
               next.tokens.empty() ? "-" : next.tokens, new_count, old_count, added, removed,
               next.access.empty() ? "- (every identity read-write)" : next.access);
}

}  // namespace pxfer::server
