#pragma once
// pxferd --log-file FILE: an spdlog sink that appends to FILE and opens it again by name when
// asked (SIGUSR1 or SIGHUP), so logrotate can move the file away and pxferd goes on in a new one.
#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>

namespace pxfer::pxferd {

class ReopenableFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Throws Error(usage) naming --log-file when FILE cannot be opened for appending.
  explicit ReopenableFileSink(const std::string& file);
  // Closes the file and opens FILE again (a new one when it was moved away). On failure the old
  // file stays in use and the reason is returned, else "".
  std::string reopen();

 private:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;
  spdlog::details::file_helper file_;
  std::string name_;
};

}  // namespace pxfer::pxferd
