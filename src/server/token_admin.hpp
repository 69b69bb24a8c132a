#pragma once
// The tokens file as an administrator edits it (pxferd token create / list / revoke). Every
// command opens the file with O_NOFOLLOW and locks it: a symlink planted at its name is refused,
// never followed, and two commands at once run one after the other.
#include "pxfer/server/layer.hpp"
#include <functional>
#include <string>
#include <vector>

namespace pxfer::server {

// Appends a new identity to the tokens file and returns its token. A missing file is created
// with mode 0600 and then handed to `on_new_file` (its descriptor, to give it a group: never a
// path, which could be swapped for a symlink). Before the entry goes a comment
// `# created NAME 2026-11-27T19:30:00Z`, which `token list` shows and the server ignores.
// Throws Error(exists) when NAME is there already, Error(usage) for a bad or reserved name or a
// symlink at `path`, Error(permission) for a file of a wrong mode or owner.
std::string create_token(const std::string& path, const std::string& name,
                         const std::function<void(int fd)>& on_new_file = {});

struct TokenInfo {
  std::string name;
  std::string created;  // "" when the file does not say (an entry written by hand or before 0.3)
};
// The identities of the tokens file in file order; never a secret (the file holds none either).
std::vector<TokenInfo> list_tokens(const std::string& path);

// Removes NAME's entry (and its `# created` comment) from the tokens file: a new file of the same
// mode, owner and group renamed over the old one. Throws Error(not_found) when NAME is not there.
void revoke_token(const std::string& path, const std::string& name);

}  // namespace pxfer::server
