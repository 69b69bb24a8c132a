#pragma once
// One error type for the whole library: a stable code (which is also the class of process exit
// status) and a one-line message that says what failed, where, and what to do.
#include "pxfer/common/layer.hpp"
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pxfer {

// Values are part of the wire protocol (ERROR frames) and of the CLI contract (exit codes):
// never renumber, only append.
enum class Errc : std::uint16_t {
  ok = 0,
  internal = 1,     // a bug or an unexpected condition
  usage = 2,        // bad command line or option value
  not_found = 3,    // source file or directory does not exist
  permission = 4,   // refused by the file system or by the server's confinement
  network = 5,      // cannot connect, connection lost, timeout
  protocol = 6,     // the peer spoke something we do not understand
  integrity = 7,    // checksum mismatch, source changed during the transfer
  local_io = 8,     // read/write/fsync/rename failed, disk full
  exists = 9,       // the destination exists and --overwrite was not given
  interrupted = 10, // SIGINT or SIGTERM: the user stopped it; the same command resumes
};

// Exit status of the command-line programs for an error of this class.
int exit_code(Errc code) noexcept;
std::string_view errc_name(Errc code) noexcept;
// Maps a code received from the network to a known class (unknown values become protocol).
Errc errc_from_wire(std::uint16_t value) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Errc code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

// Builds "what: strerror(err)" for a failed system call.
std::string errno_text(int err);
// Maps an errno value from a file operation to the error class a user should see.
Errc errc_from_errno(int err) noexcept;

}  // namespace pxfer
