#include "token_commands.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "pxfer/common/error.hpp"
#include "pxfer/server/server_admin.hpp"
#include "token_file.hpp"

namespace pxfer::pxferd {
namespace {

int token_create(const Commands& c) {
  CreatedToken created = create_token_safely(c.tokens_file, c.token_name);
  std::fprintf(stdout, "%s\n", created.token.c_str());
  std::fprintf(stderr,
               "pxferd: identity %s added to %s; the token above is shown only this once: give it to the client as a "
               "--token-file FILE or the PXFER_TOKEN variable (a running pxferd picks it up on SIGHUP: "
               "systemctl reload pxferd)\n",
               c.token_name.c_str(), c.tokens_file.c_str());
  if (!created.warning.empty()) std::fprintf(stderr, "pxferd: warning: %s\n", created.warning.c_str());
  return 0;
}

int token_list(const Commands& c) {
  std::fprintf(stdout, "%-32s %-20s %s\n", "NAME", "CREATED", "LAST USED");
  for (const auto& t : list_client_tokens(c.tokens_file))
    std::fprintf(stdout, "%-32s %-20s %s\n", t.name.c_str(), t.created.empty() ? "-" : t.created.c_str(),
                 "- (see the accounting lines of pxferd's log)");
  return 0;
}

// After a revoke: reload the server when asked, else say how.
void reload_after_revoke(const Commands& c) {
  if (c.reload_pid > 0) {
    if (::kill(c.reload_pid, SIGHUP) != 0)
      throw Error(errc_from_errno(errno), "identity " + c.token_name + " removed, but pxferd (pid " +
                                              std::to_string(c.reload_pid) + ") could not be told to reload: " +
                                              errno_text(errno) + " (reload it yourself: kill -HUP PID)");
    std::fprintf(stderr, "pxferd: sent SIGHUP to pid %d: it forgets %s now\n", c.reload_pid, c.token_name.c_str());
  } else if (c.reload_service) {
    int status = std::system("systemctl reload pxferd");
    if (status != 0)
      throw Error(Errc::usage, "identity " + c.token_name + " removed, but `systemctl reload pxferd` failed (exit " +
                                   std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
                                   "); a running pxferd still accepts the token until it reloads");
    std::fprintf(stderr, "pxferd: reloaded pxferd: it forgets %s now\n", c.token_name.c_str());
  } else {
    std::fprintf(stderr,
                 "pxferd: a running pxferd accepts the token until it reloads: systemctl reload pxferd (or kill -HUP "
                 "PID, or next time --reload)\n");
  }
}

int token_revoke(const Commands& c) {
  revoke_client_token(c.tokens_file, c.token_name);
  std::fprintf(stderr, "pxferd: identity %s removed from %s\n", c.token_name.c_str(), c.tokens_file.c_str());
  reload_after_revoke(c);
  return 0;
}

}  // namespace

int run_token_command(const Commands& c) {
  if (c.token_create->parsed()) return token_create(c);
  if (c.token_list->parsed()) return token_list(c);
  return token_revoke(c);
}

}  // namespace pxfer::pxferd
