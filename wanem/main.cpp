// pxfer-wanem: a user-space WAN emulator (the kernel here has no netem). See
// docs/wanem.md for the model, usage and measured limits.

#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "errors.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  using namespace wanem;
  try {
    const CommandLine command = parse_command_line(argc, argv);
    switch (command.verb) {
      case CommandLine::Verb::kHelp:
        std::fputs(usage_text().c_str(), stdout);
        return 0;
      case CommandLine::Verb::kUp:
        return run_up(command.up);
      case CommandLine::Verb::kDown:
        return run_down(command.down);
    }
  } catch (const UsageError& error) {
    std::fprintf(stderr, "pxfer-wanem: error: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "pxfer-wanem: error: %s\n", error.what());
    return 1;
  }
  return 1;
}
