#pragma once
// Child processes for the end-to-end tests: the real pxfer and pxferd binaries, started with
// posix_spawn, stdin from /dev/null, output captured.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace pxfer::e2e {

using namespace std::chrono_literals;

// Path of a binary built next to pxfer and pxferd (PXFER_BIN_DIR).
std::string binary_path(const std::string& name);

// Exit status as a shell reports it: the exit code, or 128 + signal number.
int decode_wait_status(int status);
// stdout of a shell command (`sh -c`), "" when it cannot run.
std::string capture_shell(const std::string& command);

// One running child. stdout and stderr go either to pipes (read with pump()/wait(), available in
// out()/err()) or to files.
class ChildProcess {
 public:
  // argv[0] is the program path. Throws std::runtime_error when the spawn fails.
  static ChildProcess piped(const std::vector<std::string>& argv);
  static ChildProcess to_files(const std::vector<std::string>& argv, const std::string& stdout_path,
                               const std::string& stderr_path);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();  // SIGKILLs and reaps a child still running

  pid_t pid() const { return pid_; }
  // Reads what the pipes hold, waiting at most `timeout` for the first byte.
  void pump(std::chrono::milliseconds timeout);
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }
  // The exit status (see decode_wait_status) once the child ended; never blocks.
  std::optional<int> try_wait();
  // Waits (reading the pipes) up to `timeout`; on timeout SIGKILLs the child, sets *timed_out
  // and returns its status. Pipes are read to EOF before returning.
  int wait(std::chrono::milliseconds timeout, bool* timed_out = nullptr);
  void send_signal(int signo) const;

 private:
  ChildProcess() = default;
  void close_pipes();
  pid_t pid_ = -1;
  std::optional<int> status_;
  int out_fd_ = -1, err_fd_ = -1;
  std::string out_, err_;
};

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
  bool timed_out = false;
};

// Runs the pxfer binary with `args` and waits (killed after `timeout`).
RunResult run_pxfer_args(const std::vector<std::string>& args, std::chrono::milliseconds timeout = 120s);
template <class... Args>
RunResult run_pxfer(const Args&... args) {
  return run_pxfer_args(std::vector<std::string>{std::string(args)...});
}
// Permission checks cannot fail for root (CAP_DAC_OVERRIDE), and CI runs as root. For those
// tests, pxfer runs as an unprivileged user: as root, under setpriv as nobody:nogroup with no
// supplementary groups and no capabilities (files it must read need to be readable by others,
// directories on the way searchable); as anyone else, as itself.
// "" when that is possible here, otherwise why not (for a GTEST_SKIP: the machine lacks it).
std::string unprivileged_unavailable();
RunResult run_pxfer_unprivileged(const std::vector<std::string>& args, std::chrono::milliseconds timeout = 120s);
// The uid pxfer runs under in run_pxfer_unprivileged.
uid_t unprivileged_uid();

// Starts pxfer without waiting (stdout/stderr piped).
ChildProcess start_pxfer(const std::vector<std::string>& args);

// The known_hosts file every pxfer of this test process uses by default ($XDG_CONFIG_HOME, set
// per test process by the support code), and a way to pin a server in it.
std::string test_known_hosts_file();
void pin_server(const std::string& authority, const std::string& fingerprint);

// `pxferd token create NAME --tokens TOKENS_FILE`: adds the identity and returns its token (the
// first line pxferd prints); throws std::runtime_error when pxferd fails.
std::string create_token(const std::string& name, const std::string& tokens_file);

// A pxferd serving `root`. Without an authentication option in `extra_args` it gets
// --insecure-no-auth (anonymous read-write on loopback), so tests need no credentials; its
// certificate is pinned in test_known_hosts_file() once it listens., listening on an ephemeral port (`listen` is HOST:0 or [::1]:0).
// Its stderr (the log) goes to a file read by log().
class ServerProcess {
 public:
  explicit ServerProcess(const std::string& root, const std::string& listen = "127.0.0.1:0",
                         const std::vector<std::string>& extra_args = {});
  struct Unprivileged {};
  // pxferd as the unprivileged user of run_pxfer_unprivileged (as root: nobody, no capabilities),
  // with a state directory of its own (its certificate is pinned all the same). `root` must be
  // searchable by that user; check unprivileged_unavailable() first.
  ServerProcess(Unprivileged, const std::string& root, const std::vector<std::string>& extra_args = {});
  ~ServerProcess();  // stop() unless already stopped
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return child_->pid(); }
  // "127.0.0.1:PORT" or "[::1]:PORT"
  std::string authority() const;
  // "pxfer://AUTHORITY/" + path
  std::string url(const std::string& path) const;
  std::string log() const;
  bool running();
  // "sha256:HEX" of the server's certificate (from its start line).
  const std::string& fingerprint() const { return fingerprint_; }

  struct StopResult {
    int status = -1;  // decode_wait_status
    std::chrono::milliseconds elapsed{0};
    bool killed = false;  // needed SIGKILL after the grace period
  };
  // SIGTERM, then SIGKILL after `grace`. Idempotent: returns the first result again.
  StopResult stop(std::chrono::milliseconds grace = 5s);

 private:
  void start(const std::vector<std::string>& prefix, const std::string& root, const std::string& listen,
             std::vector<std::string> extra_args);
  TempDir state_;  // port file and logs, outside the export root
  std::string host_;
  std::uint16_t port_ = 0;
  std::string fingerprint_;
  std::unique_ptr<ChildProcess> child_;
  std::optional<StopResult> stopped_;
};

}  // namespace pxfer::e2e
