#include "external_command.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "errors.hpp"
#include "file_descriptor.hpp"

extern char** environ;

namespace wanem {

CommandResult run_command(const std::vector<std::string>& argv) {
  CommandResult result;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  FileDescriptor read_end(pipe_fds[0]);
  FileDescriptor write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);

  // The caller blocks SIGINT/SIGTERM to receive them through a signalfd; a child must
  // not inherit that mask or a Ctrl-C could leave it running.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  posix_spawnattr_setsigmask(&attributes, &empty_mask);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> c_argv;
  for (const auto& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);

  pid_t pid = -1;
  const int spawn_error = posix_spawnp(&pid, c_argv[0], &actions, &attributes, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  write_end.reset();
  if (spawn_error != 0) {
    result.output = "cannot run '" + argv[0] + "': " + std::strerror(spawn_error);
    return result;
  }

  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == ' ')) {
    result.output.pop_back();
  }
  return result;
}

void run_ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult result = run_command(argv);
  if (result.exit_status == 0) return;

  std::string command_text;
  for (const auto& arg : argv) command_text += (command_text.empty() ? "" : " ") + arg;
  if (result.exit_status == -1 && result.output.find("No such file") != std::string::npos) {
    throw SetupError("the 'ip' command was not found; install iproute2 (apt-get install iproute2)");
  }
  std::string output = result.output;
  for (char& c : output) {
    if (c == '\n') c = ' ';
  }
  throw SetupError("'" + command_text + "' failed: " + output);
}

}  // namespace wanem
