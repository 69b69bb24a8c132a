#pragma once
// pxferd under systemd: readiness and reload notifications (sd_notify) and logging to the journal.
// Outside systemd every call is a no-op and logs go to stderr.
#include <string>

namespace pxfer::pxferd {

// stderr is connected to the journal (systemd sets JOURNAL_STREAM to its device:inode).
bool stderr_is_journal();
// The default logger: `log_file` when given (--log-file), else the journal (spdlog's systemd sink,
// priorities kept) when stderr_is_journal(), else stderr with timestamps. Debug level with
// `verbose`. Throws Error(usage) when the log file cannot be opened.
void set_up_logging(bool verbose, const std::string& log_file = "");
// --log-file: open the file again by its name (after logrotate moved it); no-op without one.
void reopen_log_file();
// sd_notify(3) with `state` ("READY=1", "STOPPING=1", "RELOADING=1", "STATUS=..."): no-op
// without $NOTIFY_SOCKET (not started by systemd with Type=notify).
void notify(const std::string& state);

}  // namespace pxfer::pxferd
