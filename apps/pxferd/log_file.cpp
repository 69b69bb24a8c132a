#include "log_file.hpp"

#include "pxfer/common/error.hpp"

namespace pxfer::pxferd {

ReopenableFileSink::ReopenableFileSink(const std::string& file) : name_(file) {
  try {
    file_.open(file, false);
  } catch (const spdlog::spdlog_ex& e) {
    throw Error(Errc::usage, "--log-file " + file + ": cannot open it for appending (" + e.what() +
                                 "); give a file in a directory this user may write");
  }
}

std::string ReopenableFileSink::reopen() {
  std::lock_guard lock(mutex_);
  spdlog::details::file_helper next;
  try {
    next.open(name_, false);  // opened before the old one is let go: a failure keeps logging
  } catch (const spdlog::spdlog_ex& e) {
    return e.what();
  }
  file_.close();
  file_.open(name_, false);
  return "";
}

void ReopenableFileSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  file_.write(formatted);
  file_.flush();  // a line at a time: the file is read by people and log shippers as it grows
}

void ReopenableFileSink::flush_() { file_.flush(); }

}  // namespace pxfer::pxferd
