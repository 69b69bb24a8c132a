#include <cstdio>
#include "support/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#ifndef PXFER_BIN_DIR
#error "PXFER_BIN_DIR must name the directory holding pxfer and pxferd"
#endif

extern char** environ;

namespace pxfer::e2e {

using Clock = std::chrono::steady_clock;

// PXFER_TEST_BIN_DIR runs the tests against other binaries (an older build's: does a new test
// fail against the code it guards?).
std::string binary_path(const std::string& name) {
  const char* dir = std::getenv("PXFER_TEST_BIN_DIR");
  return std::string(dir && *dir ? dir : PXFER_BIN_DIR) + "/" + name;
}

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct FileActions {
  posix_spawn_file_actions_t actions;
  FileActions() { posix_spawn_file_actions_init(&actions); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
};

pid_t spawn(const std::vector<std::string>& argv, FileActions& fa) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  // The binaries live in a build tree other people rebuild: while the linker rewrites one,
  // exec fails for a moment (ETXTBSY, EACCES, ENOENT, ENOEXEC). Retry for a few seconds.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    int rc = ::posix_spawn(&pid, argv.at(0).c_str(), &fa.actions, nullptr, args.data(), environ);
    if (rc == 0) return pid;
    bool transient = rc == ETXTBSY || rc == EACCES || rc == ENOENT || rc == ENOEXEC;
    if (!transient || std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("posix_spawn " + argv[0] + ": " + std::strerror(rc));
    std::this_thread::sleep_for(100ms);
  }
}

}  // namespace

ChildProcess ChildProcess::piped(const std::vector<std::string>& argv) {
  int out[2], err[2];
  // O_CLOEXEC: a child spawned concurrently by another thread must not inherit our write ends,
  // or our reader would not see EOF until that other child exits.
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  FileActions fa;
  posix_spawn_file_actions_addopen(&fa.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa.actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa.actions, err[1], 2);
  ChildProcess child;
  child.out_fd_ = out[0];
  child.err_fd_ = err[0];
  try {
    child.pid_ = spawn(argv, fa);
  } catch (...) {
    ::close(out[1]);
    ::close(err[1]);
    throw;
  }
  ::close(out[1]);
  ::close(err[1]);
  return child;
}

ChildProcess ChildProcess::to_files(const std::vector<std::string>& argv, const std::string& stdout_path,
                                    const std::string& stderr_path) {
  FileActions fa;
  posix_spawn_file_actions_addopen(&fa.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa.actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa.actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ChildProcess child;
  child.pid_ = spawn(argv, fa);
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), status_(other.status_), out_fd_(other.out_fd_), err_fd_(other.err_fd_),
      out_(std::move(other.out_)), err_(std::move(other.err_)) {
  other.pid_ = -1;
  other.out_fd_ = other.err_fd_ = -1;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close_pipes();
}

void ChildProcess::close_pipes() {
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
  out_fd_ = err_fd_ = -1;
}

void ChildProcess::pump(std::chrono::milliseconds timeout) {
  pollfd fds[2];
  int n = 0;
  if (out_fd_ >= 0) fds[n++] = pollfd{out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[n++] = pollfd{err_fd_, POLLIN, 0};
  if (n == 0) {
    if (timeout.count() > 0) std::this_thread::sleep_for(timeout);
    return;
  }
  int rc = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(timeout.count()));
  if (rc <= 0) return;
  for (int i = 0; i < n; ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    bool is_out = fds[i].fd == out_fd_;
    if (got <= 0) {
      ::close(fds[i].fd);
      (is_out ? out_fd_ : err_fd_) = -1;
    } else {
      (is_out ? out_ : err_).append(buf, static_cast<std::size_t>(got));
    }
  }
}

std::optional<int> ChildProcess::try_wait() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = decode_wait_status(status);
  return status_;
}

int ChildProcess::wait(std::chrono::milliseconds timeout, bool* timed_out) {
  auto deadline = Clock::now() + timeout;
  if (timed_out) *timed_out = false;
  while (!try_wait()) {
    if (Clock::now() >= deadline) {
      if (timed_out) *timed_out = true;
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      status_ = decode_wait_status(status);
      break;
    }
    pump(10ms);
  }
  // The child is gone: read what is left up to EOF (bounded, in case a grandchild holds a pipe).
  auto drain_deadline = Clock::now() + 2s;
  while ((out_fd_ >= 0 || err_fd_ >= 0) && Clock::now() < drain_deadline) pump(50ms);
  close_pipes();
  return *status_;
}

void ChildProcess::send_signal(int signo) const {
  if (pid_ > 0 && !status_) ::kill(pid_, signo);
}

RunResult run_pxfer_args(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  ChildProcess child = start_pxfer(args);
  RunResult result;
  result.exit_code = child.wait(timeout, &result.timed_out);
  result.out = child.out();
  result.err = child.err();
  return result;
}

namespace {
constexpr const char* setpriv = "/usr/bin/setpriv";
constexpr uid_t nobody = 65534;
}  // namespace

uid_t unprivileged_uid() { return ::geteuid() == 0 ? nobody : ::geteuid(); }

std::string unprivileged_unavailable() {
  if (::geteuid() != 0) return "";
  if (::access(setpriv, X_OK) != 0) return "running as root without setpriv (util-linux) to drop privileges";
  return "";
}

RunResult run_pxfer_unprivileged(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  std::vector<std::string> argv;
  if (::geteuid() == 0)
    argv = {setpriv, "--reuid=" + std::to_string(nobody), "--regid=" + std::to_string(nobody), "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all"};
  argv.push_back(binary_path("pxfer"));
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess child = ChildProcess::piped(argv);
  RunResult result;
  result.exit_code = child.wait(timeout, &result.timed_out);
  result.out = child.out();
  result.err = child.err();
  return result;
}

std::string create_token(const std::string& name, const std::string& tokens_file) {
  auto child = ChildProcess::piped({binary_path("pxferd"), "token", "create", name, "--tokens", tokens_file});
  if (child.wait(30s) != 0) throw std::runtime_error("pxferd token create " + name + " failed: " + child.err());
  return child.out().substr(0, child.out().find('\n'));
}

ChildProcess start_pxfer(const std::vector<std::string>& args) {
  std::vector<std::string> argv{binary_path("pxfer")};
  argv.insert(argv.end(), args.begin(), args.end());
  return ChildProcess::piped(argv);
}

namespace {

// Every test process gets its own $XDG_CONFIG_HOME (the client's known_hosts) and
// $XDG_STATE_HOME (pxferd's self-signed certificate), inherited by the pxfer and pxferd it
// starts: the tests never touch the user's own files, and all servers of a test share one
// certificate.
struct SecurityEnvironment {
  std::string dir;
  SecurityEnvironment() {
    char templ[] = "/tmp/pxfer-e2e-home-XXXXXX";
    if (::mkdtemp(templ)) {
      dir = templ;
      ::setenv("XDG_CONFIG_HOME", (dir + "/config").c_str(), 1);
      ::setenv("XDG_STATE_HOME", (dir + "/state").c_str(), 1);
      ::unsetenv("PXFER_TOKEN");
      ::unsetenv("PXFER_KNOWN_HOSTS");
    }
  }
  ~SecurityEnvironment() {
    if (!dir.empty() && std::system(("rm -rf '" + dir + "'").c_str()) != 0)
      std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
};
SecurityEnvironment security_environment;

bool has_auth_option(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--tokens" || a == "--client-ca" || a == "--x509" || a == "--anonymous-read" || a == "--insecure-no-auth") return true;
  return false;
}

// "certificate sha256:HEX" from pxferd's start line.
std::string fingerprint_in_log(const std::string& log) {
  auto pos = log.find("certificate sha256:");
  if (pos == std::string::npos) return "";
  pos += std::string("certificate ").size();
  auto end = log.find_first_of(" \n", pos);
  return log.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

}  // namespace

std::string test_known_hosts_file() {
  const char* x = std::getenv("XDG_CONFIG_HOME");
  return std::string(x ? x : "/tmp") + "/pxfer/known_hosts";
}

void pin_server(const std::string& authority, const std::string& fingerprint) {
  if (fingerprint.empty()) return;
  std::string file = test_known_hosts_file();
  std::string dir = file.substr(0, file.rfind('/'));
  if (std::system(("mkdir -p '" + dir + "'").c_str()) != 0) throw std::runtime_error("mkdir -p " + dir + " failed");
  std::ofstream(file, std::ios::app) << authority << " " << fingerprint << "\n";
}

ServerProcess::ServerProcess(const std::string& root, const std::string& listen,
                             const std::vector<std::string>& extra_args) {
  start({}, root, listen, extra_args);
}

ServerProcess::ServerProcess(Unprivileged, const std::string& root, const std::vector<std::string>& extra_args) {
  std::vector<std::string> prefix;
  std::vector<std::string> args = extra_args;
  if (::geteuid() == 0) {
    // The unprivileged pxferd writes its port file and keeps its certificate here.
    if (::chown(state_.path().c_str(), nobody, nobody) != 0)
      throw std::runtime_error("chown " + state_.path() + ": " + std::strerror(errno));
    ::chmod(state_.path().c_str(), 0755);
    prefix = {setpriv, "--reuid=" + std::to_string(nobody), "--regid=" + std::to_string(nobody), "--clear-groups",
              "--inh-caps=-all", "--bounding-set=-all"};
  }
  args.insert(args.end(), {"--state-dir", state_ / "pxferd-state"});
  start(prefix, root, "127.0.0.1:0", std::move(args));
}

void ServerProcess::start(const std::vector<std::string>& prefix, const std::string& root, const std::string& listen,
                          std::vector<std::string> extra_args) {
  auto colon = listen.rfind(':');
  host_ = listen.substr(0, colon);
  std::string port_file = state_ / "port";
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {binary_path("pxferd"), "--root", root, "--listen", listen, "--port-file", port_file});
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  // Existing tests need no credentials: anonymous read-write, which pxferd allows on loopback only.
  if (!has_auth_option(extra_args)) argv.push_back("--insecure-no-auth");
  child_ = std::make_unique<ChildProcess>(ChildProcess::to_files(argv, state_ / "stdout.log", state_ / "stderr.log"));
  auto deadline = Clock::now() + 10s;
  for (;;) {
    std::string text = read_whole_file(port_file);
    if (!text.empty()) {
      port_ = static_cast<std::uint16_t>(std::stoul(text));
      if (port_ == 0) throw std::runtime_error("pxferd wrote port 0 to " + port_file);
      fingerprint_ = fingerprint_in_log(log());
      // Pinned in the test's known_hosts, so clients connect without a first-use warning.
      pin_server(authority(), fingerprint_);
      return;
    }
    if (auto status = child_->try_wait())
      throw std::runtime_error("pxferd exited with status " + std::to_string(*status) +
                               " before listening; its log:\n" + log());
    if (Clock::now() >= deadline) throw std::runtime_error("pxferd did not write its port file within 10 s; its log:\n" + log());
    std::this_thread::sleep_for(10ms);
  }
}

ServerProcess::~ServerProcess() {
  if (child_) stop();
}

std::string ServerProcess::authority() const { return host_ + ":" + std::to_string(port_); }

std::string ServerProcess::url(const std::string& path) const { return "pxfer://" + authority() + "/" + path; }

std::string ServerProcess::log() const { return read_whole_file(state_ / "stderr.log"); }

bool ServerProcess::running() { return !child_->try_wait().has_value(); }

ServerProcess::StopResult ServerProcess::stop(std::chrono::milliseconds grace) {
  if (stopped_) return *stopped_;
  StopResult r;
  auto start = Clock::now();
  child_->send_signal(SIGTERM);
  bool timed_out = false;
  r.status = child_->wait(grace, &timed_out);
  r.killed = timed_out;
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  stopped_ = r;
  return r;
}

std::string capture_shell(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

}  // namespace pxfer::e2e
