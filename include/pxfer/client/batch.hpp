#pragma once
// Many files in one run: a plan (directories to create, files to move) built from a recursive
// walk or a list file, and a scheduler that moves several files at once with put_file/get_file,
// keeps going past failures and reports every file. Plain structs in, a report out.
#include "pxfer/client/layer.hpp"
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pxfer/core/auto_controller.hpp"
#include "pxfer/engine/batch_events.hpp"
#include "pxfer/engine/progress_listener.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/core/rate_pacer.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer {


struct BatchPlan {
  std::vector<std::string> local_directories;  // created (with parents) before any file moves
  // get -r: the target directory the user named. Every local directory and file of the plan is
  // created beneath it through its descriptor, never following a symlink (client/local_tree.hpp).
  std::string local_root;
  std::vector<Url> remote_directories;         // likewise, with MKDIR on the URL's server
  std::vector<BatchFile> files;
};

// put -r LOCAL_DIR URL: a trailing '/' on the URL means "into it" (DEST/basename(LOCAL_DIR)/...),
// without one the URL's path becomes the copy of LOCAL_DIR. Symlinks are not followed; only
// directories and regular files are copied.
BatchPlan plan_recursive_put(const std::string& local_dir, const Url& destination);
// get -r URL LOCAL_DIR, with the same rule for a trailing '/' on LOCAL_DIR. Asks the server (LIST).
BatchPlan plan_recursive_get(const Url& source, const std::string& local_dir, std::chrono::milliseconds connect_timeout);
// A list file: one "SOURCE DEST" pair per line, '#' starts a comment, exactly one of the two a
// pxfer:// URL (which one says put or get); a trailing '/' on DEST means into that directory.
BatchPlan plan_from_list(const std::string& list_path);
BatchPlan parse_transfer_list(const std::string& text, const std::string& list_name);

struct BatchOptions {
  ClientOptions client;
  unsigned concurrency = 2;  // files in flight
  unsigned max_streams = 0;  // 0 = no cap on concurrency * streams
  // Retries of each file: client.retry (the same policy as for one file).
  bool skip_existing = false;  // skip when the destination exists with the same size and checksum
  bool preserve = false;       // a get keeps the source's mode and mtime
  // Staggered start: one file in flight at first, `concurrency` after this long, linearly.
  std::chrono::milliseconds ramp_up{0};
  double connect_rate = 0;     // new connections per second (each file opens streams + 1); 0 = no limit
  // --auto: `concurrency` is the most files in flight and an AutoController picks how many
  // (and, with max_streams, how many streams each file gets) every auto_interval.
  bool auto_tune = false;
  unsigned min_concurrency = 1;
  std::chrono::milliseconds auto_interval{5000};
  double auto_tolerance = 0.05;
  // Limits of the server for --auto; when unset, run_batch asks the first file's server (INFO).
  ServerLimits server_limits;
  // Files of at most limits::max_small_file bytes (their size known from the walk or the listing)
  // move whole in one frame each, many in flight per worker (ClientSession::move_small), unless
  // --skip-existing or --preserve needs a request of its own per file. Off: every file with OPEN.
  bool small_file_frames = true;
  // Aggregate progress every this long (ProgressListener::on_batch_interval); 0 = none.
  std::chrono::milliseconds interval{0};
};

// When worker `index` (0-based) of `concurrency` may start its first file: the ramp from one
// file in flight to `concurrency` over `ramp_up`, linearly (worker 0 at once, the last at ramp_up).
std::chrono::milliseconds ramp_start(unsigned index, unsigned concurrency, std::chrono::milliseconds ramp_up);


// Streams per file and files in flight after the --max-streams cap.
struct BatchShape {
  unsigned concurrency = 1;
  std::uint16_t streams = 1;
};
BatchShape fit_streams(unsigned concurrency, std::uint16_t streams, unsigned max_streams);






// Creates the plan's directories, then moves its files. Never throws for one file's failure.
BatchReport run_batch(const BatchPlan& plan, const BatchOptions& options, ProgressListener& listener);


}  // namespace pxfer
