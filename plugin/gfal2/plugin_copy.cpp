// copy_file of the pxfer gfal2 plugin: file:// <-> pxfer:// as a pxfer put or get over N streams,
// pxfer:// -> pxfer:// as a third-party copy (pull or push, gfal-copy --copy-mode),
// with gfal2's transfer parameters (streams, TCP buffer, timeout, checksum, overwrite, parents) and
// its performance markers (plugin_trigger_monitor) from pxfer's interval reports.
#include <strings.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "plugin_common.hpp"
#include "pxfer/client/namespace.hpp"
#include "pxfer/client/retrying.hpp"
#include "pxfer/tpc/tpc.hpp"

namespace pxfer::gfal {
namespace {

bool is_file_url(const char* url) { return url && std::strncmp(url, "file://", 7) == 0; }

std::string local_path(const char* url) {
  gchar* path = g_filename_from_uri(url, nullptr, nullptr);
  if (!path) throw Error(Errc::usage, std::string(url) + ": not a local file URL (file:///ABSOLUTE/PATH)");
  std::string out = path;
  g_free(path);
  return out;
}

// Forwards pxfer's interval reports to gfal2's monitor callbacks (gfal-copy's progress, FTS3's
// performance markers).
class MonitorListener final : public ProgressListener {
 public:
  MonitorListener(gfalt_params_t params, const char* src, const char* dst) : params_(params), src_(src), dst_(dst) {}
  void on_interval(const IntervalReport& r) override { trigger(r.total); }
  void on_finish(const IntervalReport& r, const TransferSummary&) override { trigger(r.total); }

 private:
  void trigger(const RateSample& s) {
    _gfalt_transfer_status status{};
    status.status = 0;
    status.average_baudrate = static_cast<size_t>(s.avg_bytes_per_s);
    status.instant_baudrate = static_cast<size_t>(s.inst_bytes_per_s);
    status.transfer_time = static_cast<time_t>(s.seconds);
    status.bytes_transfered = static_cast<size_t>(s.bytes);
    plugin_trigger_monitor(params_, &status, src_, dst_);
  }
  gfalt_params_t params_;
  const char* src_;
  const char* dst_;
};

struct Checksum {
  gfalt_checksum_mode_t mode = GFALT_CHECKSUM_NONE;
  ChecksumAlgo algo = ChecksumAlgo::adler32;
  std::string expected;  // lower case, as the user gave it ("" = compare source and destination only)
};

std::string normalized(std::string hex) {
  std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto nonzero = hex.find_first_not_of('0');
  return nonzero == std::string::npos ? "0" : hex.substr(nonzero);  // adler32 "0a3c1f2e" == "a3c1f2e"
}

// gfal2's checksum parameters; `bulk` is copy_bulk's per-file checksum as gfal2 hands it (and as
// its own bulk fallback reads it): a bare VALUE whose algorithm is the transfer parameters' (ADLER32
// unless set), or ALGO:VALUE. Given, it asks for both ends to be compared with it.
Checksum checksum_of(gfalt_params_t params, const char* bulk = nullptr) {
  char type[64] = {0}, value[256] = {0};
  GError* e = nullptr;
  Checksum c;
  c.mode = gfalt_get_checksum(params, type, sizeof type, value, sizeof value, &e);
  if (e) g_error_free(e);
  if (bulk && *bulk) {
    const std::string text = bulk;
    const auto colon = text.find(':');
    if (colon != std::string::npos) g_strlcpy(type, text.substr(0, colon).c_str(), sizeof type);
    g_strlcpy(value, colon == std::string::npos ? text.c_str() : text.substr(colon + 1).c_str(), sizeof value);
    c.mode = GFALT_CHECKSUM_BOTH;
  }
  if (c.mode == GFALT_CHECKSUM_NONE) return c;
  c.algo = checksum_algo_of(type);
  c.expected = value[0] ? normalized(value) : "";
  return c;
}

// gfal2's transfer parameters and the [PXFER] keys, each through its row of the option table (the
// bounds and refusals of pxfer's command line): gfal-copy -n 65 is an EINVAL, not 64 streams.
// gfal2's defaults stay ClientOptions' (fixed streams unless -n), not the command line's -p auto.
ClientOptions options_of(gfal2_context_t context, gfalt_params_t params, const Checksum& sum) {
  OptionValues v;
  GError* e = nullptr;
  const guint streams = gfalt_get_nbstreams(params, &e);
  // Without -n (FTS3 and gfal-copy leave it 0 unless told), pxfer's own default: -p auto, the
  // stream controller choosing the count from what it measures (docs/streams.md).
  apply_gfal_value("streams", streams > 0 ? std::to_string(streams) : "auto", "gfal-copy -n " + std::to_string(streams), v);
  const guint64 buffer = gfalt_get_tcp_buffer_size(params, &e);
  if (buffer > 0) apply_gfal_value("window", std::to_string(buffer), "gfal2's TCP buffer size " + std::to_string(buffer), v);
  const guint64 timeout = gfalt_get_timeout(params, &e);
  if (gfalt_get_replace_existing_file(params, &e)) apply_gfal_value("overwrite", "true", "gfal-copy -f", v);
  if (e) g_error_free(e);
  apply_config_keys(context, v);  // CONNECT_TIMEOUT, PERF_INTERVAL_MS ...
  ClientOptions& o = v.client;
  // gfal2's timeout (gfal-copy -T, 1800 s unless told) bounds the wait for progress: a data stream
  // silent for that long is replaced. pxfer's own stall timeout, shorter, stays when it is.
  if (timeout > 0) o.stall_timeout = std::min<std::chrono::milliseconds>(o.stall_timeout, std::chrono::seconds(timeout));
  o.checksum = sum.algo;
  return o;
}

void check_expected(const Checksum& sum, const std::string& hex, const char* side) {
  const std::string actual = gfal_checksum_form(sum.algo, hex);  // the form the user gave it in
  if (sum.expected.empty() || normalized(actual) == sum.expected) return;
  throw Error(Errc::integrity, std::string(side) + " checksum mismatch: " + std::string(checksum_name(sum.algo)) + " " +
                                  actual + ", expected " + sum.expected);
}

// gfal-copy --copy-mode puts its choice in the HTTP plugin's DEFAULT_COPY_MODE ("3rd pull",
// "3rd push", "streamed"); gfal2 has no copy-mode transfer parameter. [PXFER] COPY_MODE (pull or
// push, e.g. -D "PXFER:COPY_MODE=push") overrides it; pull is the default, as gfal-copy's.
CopyMode copy_mode_of(gfal2_context_t context) {
  auto read = [&](const char* group, const char* key) {
    gchar* text = gfal2_get_opt_string_with_default(context, group, key, "");
    std::string out = text ? text : "";
    g_free(text);
    return out;
  };
  const std::string own = read(config_group, "COPY_MODE");
  if (own == "push") return CopyMode::push;
  if (own == "pull") return CopyMode::pull;
  if (!own.empty()) throw PosixError{EINVAL, "PXFER:COPY_MODE=" + own + ": use pull or push"};
  return read("HTTP PLUGIN", "DEFAULT_COPY_MODE") == "3rd push" ? CopyMode::push : CopyMode::pull;
}

// gfal2's transfer timeout in seconds (gfal-copy -T); 0 = none.
guint64 timeout_of(gfalt_params_t params) {
  GError* e = nullptr;
  const guint64 seconds = gfalt_get_timeout(params, &e);
  if (e) g_error_free(e);
  return seconds;
}

// gfal2_cancel (FTS3 cancelling a job, Python's ctx.cancel()) from any thread: the hook only
// raises a flag; whoever runs the copy acts on it. Registered for one copy's lifetime.
class CancelHook {
 public:
  CancelHook(gfal2_context_t context, std::function<void()> wake = {}) : context_(context), wake_(std::move(wake)) {
    token_ = gfal2_register_cancel_callback(context, &CancelHook::called, this);
    if (gfal2_is_canceled(context)) flag_ = true;
  }
  ~CancelHook() { gfal2_remove_cancel_callback(context_, token_); }
  CancelHook(const CancelHook&) = delete;
  CancelHook& operator=(const CancelHook&) = delete;
  const std::atomic<bool>& flag() const { return flag_; }
  bool fired() const { return flag_; }

 private:
  static void called(gfal2_context_t, void* self) {
    auto* hook = static_cast<CancelHook*>(self);
    hook->flag_ = true;
    if (hook->wake_) hook->wake_();
  }
  gfal2_context_t context_;
  std::function<void()> wake_;
  gfal_cancel_token_t token_ = nullptr;
  std::atomic<bool> flag_{false};
};

PosixError cancelled_error() {
  return PosixError{ECANCELED, "the copy was cancelled (gfal2_cancel); nothing is under the destination name, and "
                               "what arrived is kept for a resume"};
}

// pxfer:// -> pxfer://: the servers move the data (pxfer/tpc/tpc.hpp); the markers come from the
// server doing the copy. Each server gets the credentials gfal2 holds for its own URL (FTS3 hands
// the source and the destination different tokens): a token never reaches the other server.
void third_party(gfal2_context_t context, gfalt_params_t params, const char* src, const char* dst,
                 const char* bulk_checksum) {
  const Url from = parse_pxfer_url(src), to = parse_pxfer_url(dst);
  const Checksum sum = checksum_of(params, bulk_checksum);
  ClientOptions options = options_of(context, params, sum);
  const ClientSecurity security = security_for(context, src), dest_security = security_for(context, dst);
  const CopyMode mode = copy_mode_of(context);
  if (sum.mode & GFALT_CHECKSUM_SOURCE)
    check_expected(sum, RemoteNamespace(security, options.connect_timeout).checksum(from, sum.algo).value, "source");
  GError* e = nullptr;
  if (gfalt_get_create_parent_dir(params, &e)) RemoteNamespace(dest_security, options.connect_timeout).make_parents(to);
  if (e) g_error_free(e);
  plugin_trigger_event(params, quark(), GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_ENTER, "%s => %s (third-party %s)", src, dst,
                       mode == CopyMode::push ? "push" : "pull");
  MonitorListener monitor(params, src, dst);
  const auto limit = std::chrono::seconds(timeout_of(params));  // 0 = none
  CancelHook cancel(context);
  TransferSummary summary;
  try {
    summary = copy_between_servers(from, to, options, mode, &monitor, &security, limit, &dest_security, &cancel.flag());
  } catch (const Error&) {
    if (cancel.fired()) throw cancelled_error();
    throw;
  }
  plugin_trigger_event(params, quark(), GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_EXIT, "%llu bytes in %.3f s",
                       static_cast<unsigned long long>(summary.bytes), summary.seconds);
  if (sum.mode & GFALT_CHECKSUM_TARGET) check_expected(sum, summary.checksum_value, "destination");
}

// copy_bulk's files share one session while their credentials agree: the control connection to the
// last server stays open for the next file (no TLS handshake, HELLO and AUTH per file).
struct SharedSession {
  ClientSecurity security;
  std::unique_ptr<ClientSession> session;
};

bool same_security(const ClientSecurity& a, const ClientSecurity& b) {
  return a.ca_file == b.ca_file && a.fingerprint == b.fingerprint && a.known_hosts_file == b.known_hosts_file &&
         a.token == b.token && a.cert_file == b.cert_file && a.key_file == b.key_file;
}

// The shared session when it fits, else a new one (kept as the shared one when there is one).
ClientSession& session_for(const ClientSecurity& security, const ClientOptions& options, SharedSession* shared,
                           std::unique_ptr<ClientSession>& own) {
  if (shared && shared->session && same_security(shared->security, security)) return *shared->session;
  auto made = std::make_unique<ClientSession>(options, security);
  if (!shared) return *(own = std::move(made));
  shared->security = security;
  shared->session = std::move(made);
  return *shared->session;
}

// gfal2's timeout (gfal-copy -T, FTS3's per-file timeout) bounds the whole copy, and gfal2_cancel
// stops it: at the deadline or the cancel the session's transfer is aborted (the receiver keeps its
// partial file, under a temporary name, for a later resume) and the copy fails with ETIMEDOUT or
// ECANCELED. A cancel that comes while the session is still connecting is repeated every 50 ms
// until the copy returns.
class Watchdog {
 public:
  Watchdog(ClientSession& session, gfal2_context_t context, guint64 seconds)
      : session_(session), cancel_(context, [this] { wake(); }) {
    thread_ = std::thread([this, seconds] {
      const auto deadline = seconds ? std::chrono::steady_clock::now() + std::chrono::seconds(seconds) : std::chrono::steady_clock::time_point::max();
      std::unique_lock lock(mutex_);
      while (!done_) {
        if (cancel_.fired() || std::chrono::steady_clock::now() >= deadline) {
          fired_ = !cancel_.fired();
          lock.unlock();
          session_.abort();
          lock.lock();
          wake_.wait_for(lock, std::chrono::milliseconds(50), [this] { return done_; });
          continue;
        }
        wake_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1)));
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  bool timed_out() {
    std::lock_guard lock(mutex_);
    return fired_;
  }
  bool cancelled() const { return cancel_.fired(); }

 private:
  void wake() {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  }
  ClientSession& session_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false, fired_ = false;
  CancelHook cancel_;  // after the members its callback touches
  std::thread thread_;
};

// put or get on `session`, within gfal2's timeout, until gfal2_cancel.
TransferSummary timed_copy(ClientSession& session, gfal2_context_t context, gfalt_params_t params, bool put,
                           const std::string& local, const Url& remote, const ClientOptions& options,
                           ProgressListener* monitor) {
  const guint64 seconds = timeout_of(params);
  Watchdog watchdog(session, context, seconds);
  try {
    // Through the client's one retry orchestrator, with options_of's policy: no retry (retries 0),
    // since gfal2's caller (FTS3, a script around gfal-copy) retries a failed copy itself; the reconnects
    // of a stale kept connection or a broken data stream still happen inside the one attempt.
    return put ? put_retrying(session, local, remote, options, monitor) : get_retrying(session, remote, local, options, monitor);
  } catch (const Error&) {
    if (watchdog.cancelled()) throw cancelled_error();
    if (!watchdog.timed_out()) throw;
    throw PosixError{ETIMEDOUT, "the copy did not finish within gfal2's timeout of " + std::to_string(seconds) +
                                    " s (gfal-copy -T); the destination keeps what arrived for a resume"};
  }
}

void copy(gfal2_context_t context, gfalt_params_t params, const char* src, const char* dst,
          SharedSession* shared = nullptr, const char* bulk_checksum = nullptr) {
  if (is_pxfer_url(src) && is_pxfer_url(dst)) return third_party(context, params, src, dst, bulk_checksum);
  const bool put = is_file_url(src);
  const Url remote = parse_pxfer_url(put ? dst : src);
  const std::string local = local_path(put ? src : dst);
  const Checksum sum = checksum_of(params, bulk_checksum);
  ClientOptions options = options_of(context, params, sum);
  const ClientSecurity security = security_for(context, put ? dst : src);
  GError* e = nullptr;
  const bool parents = gfalt_get_create_parent_dir(params, &e);
  if (e) g_error_free(e);
  if (put && (parents || (sum.mode & GFALT_CHECKSUM_SOURCE))) {
    if (parents) RemoteNamespace(security, options.connect_timeout).make_parents(remote);
    if (sum.mode & GFALT_CHECKSUM_SOURCE) check_expected(sum, checksum_of_file(sum.algo, local), "source");
  } else if (!put) {
    if (parents) std::filesystem::create_directories(std::filesystem::path(local).parent_path());
    if (sum.mode & GFALT_CHECKSUM_SOURCE)
      check_expected(sum, RemoteNamespace(security, options.connect_timeout).checksum(remote, sum.algo).value, "source");
  }
  plugin_trigger_event(params, quark(), GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_ENTER, "%s => %s", src, dst);
  MonitorListener monitor(params, src, dst);
  std::unique_ptr<ClientSession> own;
  ClientSession& session = session_for(security, options, shared, own);
  // pxfer compares the checksum of both ends itself; the value the user gave is compared here.
  TransferSummary summary;
  try {
    summary = timed_copy(session, context, params, put, local, remote, options, &monitor);
  } catch (const PosixError&) {
    if (shared) shared->session.reset();  // aborted: not for the next file
    throw;
  }
  plugin_trigger_event(params, quark(), GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_EXIT, "%llu bytes in %.3f s",
                       static_cast<unsigned long long>(summary.bytes), summary.seconds);
  if (sum.mode & GFALT_CHECKSUM_TARGET) check_expected(sum, summary.checksum_value, "destination");
}

}  // namespace

int check_copy_urls(plugin_handle, gfal2_context_t, const char* src, const char* dst, gfal_url2_check check) {
  if (check != GFAL_FILE_COPY && check != GFAL_BULK_COPY) return FALSE;
  return (is_file_url(src) && is_pxfer_url(dst)) || (is_pxfer_url(src) && (is_file_url(dst) || is_pxfer_url(dst)));
}

int copy_file(plugin_handle, gfal2_context_t context, gfalt_params_t params, const char* src, const char* dst,
              GError** err) {
  return guarded(err, __func__, [&] { copy(context, params, src, dst); });
}

// Every file is tried; each failure is its own GError in file_errors (with its errno, as FTS3
// classifies it per file). op_error stays for a failure of the whole operation (none here): gfal2
// callers such as gfal2-python raise it instead of returning the per-file errors.
int copy_bulk(plugin_handle, gfal2_context_t context, gfalt_params_t params, size_t nbfiles, const char* const* srcs,
              const char* const* dsts, const char* const* checksums, GError**, GError*** file_errors) {
  *file_errors = g_new0(GError*, nbfiles);
  SharedSession shared;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < nbfiles; ++i) {
    const char* sum = checksums ? checksums[i] : nullptr;
    if (guarded(&(*file_errors)[i], __func__, [&] { copy(context, params, srcs[i], dsts[i], &shared, sum); }) != 0)
      ++failed;
  }
  return failed == 0 ? 0 : -1;
}

}  // namespace pxfer::gfal
