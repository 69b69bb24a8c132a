#include "netns.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "errors.hpp"
#include "external_command.hpp"

namespace wanem {
namespace {

std::string namespace_path(const std::string& name) { return "/var/run/netns/" + name; }

}  // namespace

bool namespace_exists(const std::string& name) {
  struct stat info{};
  return ::stat(namespace_path(name).c_str(), &info) == 0;
}

void create_namespace(const std::string& name) { run_ip({"netns", "add", name}); }

std::string delete_namespace(const std::string& name) {
  const CommandResult result = run_command({"ip", "netns", "del", name});
  return result.exit_status == 0 ? std::string() : result.output;
}

std::vector<std::string> processes_in_namespace(const std::string& name) {
  std::vector<std::string> pids;
  const CommandResult result = run_command({"ip", "netns", "pids", name});
  if (result.exit_status != 0) return pids;
  std::istringstream lines(result.output);
  for (std::string pid; lines >> pid;) pids.push_back(pid);
  return pids;
}

bool write_sysctl_in_namespace(const std::string& name, const std::string& key, const std::string& value) {
  // Network sysctls resolve against the namespace of the opening task, so a child that
  // joins the namespace can write them without remounting /proc. A child keeps this
  // process's own namespace untouched.
  enum : int { kOk = 0, kNoSuchKey = 10, kJoinFailed = 11, kWriteFailed = 12 };
  const std::string ns_path = namespace_path(name);
  const std::string proc_path = "/proc/sys/" + key;
  const pid_t pid = ::fork();
  if (pid < 0) throw SetupError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int ns_fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns_fd < 0 || ::setns(ns_fd, CLONE_NEWNET) != 0) ::_exit(kJoinFailed);
    const int fd = ::open(proc_path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) ::_exit(errno == ENOENT ? kNoSuchKey : kWriteFailed);
    const ssize_t written = ::write(fd, value.data(), value.size());
    ::_exit(written == static_cast<ssize_t>(value.size()) ? kOk : kWriteFailed);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == kOk) return true;
  if (code == kNoSuchKey) return false;
  throw SetupError("cannot set sysctl " + key + "=" + value + " in namespace " + name +
                   (code == kJoinFailed ? " (cannot enter the namespace)" : " (write refused)"));
}

}  // namespace wanem
