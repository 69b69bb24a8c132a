// copy_file of the pxfer gfal2 plugin: file:// <-> pxfer:// as a pxfer put or get over N streams,
// with gfal2's transfer parameters (streams, TCP buffer, timeout, checksum, overwrite, parents) and
// its performance markers (plugin_trigger_monitor) from pxfer's interval reports.
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "plugin_common.hpp"
#include "pxfer/namespace.hpp"

namespace pxfer::gfal {
namespace {

// One ClientSession is made at a time: it snapshots the process's client security when made, and
// two copies in one process (FTS3 runs one per process, Python may run several) may differ in it.
std::mutex session_mutex;

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

Checksum checksum_of(gfalt_params_t params) {
  char type[64] = {0}, value[256] = {0};
  GError* e = nullptr;
  Checksum c;
  c.mode = gfalt_get_checksum(params, type, sizeof type, value, sizeof value, &e);
  if (e) g_error_free(e);
  if (c.mode == GFALT_CHECKSUM_NONE) return c;
  std::string name = type;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (name.empty()) name = "adler32";
  auto algo = parse_checksum_algo(name);
  if (!algo || *algo == ChecksumAlgo::none)
    throw PosixError{ENOTSUP, "checksum " + std::string(type) + ": pxfer verifies ADLER32 or SHA256"};
  c.algo = *algo;
  c.expected = value[0] ? normalized(value) : "";
  return c;
}

ClientOptions options_of(gfal2_context_t context, gfalt_params_t params, const Checksum& sum) {
  ClientOptions o;
  GError* e = nullptr;
  const guint streams = gfalt_get_nbstreams(params, &e);
  if (streams > 0) o.streams = static_cast<std::uint16_t>(std::min<guint>(streams, limits::max_streams));
  const guint64 buffer = gfalt_get_tcp_buffer_size(params, &e);
  if (buffer > 0) o.window = static_cast<std::uint32_t>(std::min<guint64>(buffer, 1ull << 30));
  const guint64 timeout = gfalt_get_timeout(params, &e);
  o.overwrite = gfalt_get_replace_existing_file(params, &e);
  if (e) g_error_free(e);
  o.connect_timeout = std::chrono::seconds(connect_timeout_seconds(context));
  // gfal2's timeout (gfal-copy -t, 1800 s unless told) bounds the wait for progress: a data stream
  // silent for that long is replaced. pxfer's own stall timeout, shorter, stays when it is.
  if (timeout > 0) o.stall_timeout = std::min<std::chrono::milliseconds>(o.stall_timeout, std::chrono::seconds(timeout));
  o.checksum = sum.algo;
  o.perf_interval = std::chrono::milliseconds(
      std::max(50, gfal2_get_opt_integer_with_default(context, config_group, "PERF_INTERVAL_MS", 1000)));
  return o;
}

void check_expected(const Checksum& sum, const std::string& actual, const char* side) {
  if (sum.expected.empty() || normalized(actual) == sum.expected) return;
  throw Error(Errc::integrity, std::string(side) + " checksum mismatch: " + std::string(checksum_name(sum.algo)) + " " +
                                  actual + ", expected " + sum.expected);
}

void copy(gfal2_context_t context, gfalt_params_t params, const char* src, const char* dst) {
  const bool put = is_file_url(src);
  const Url remote = parse_pxfer_url(put ? dst : src);
  const std::string local = local_path(put ? src : dst);
  const Checksum sum = checksum_of(params);
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
  std::unique_ptr<ClientSession> session;
  {
    std::lock_guard lock(session_mutex);
    set_client_security(security);
    session = std::make_unique<ClientSession>(options);
  }
  // pxfer compares the checksum of both ends itself; the value the user gave is compared here.
  TransferSummary summary = put ? session->put(local, remote, options, &monitor) : session->get(remote, local, options, &monitor);
  plugin_trigger_event(params, quark(), GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_EXIT, "%llu bytes in %.3f s",
                       static_cast<unsigned long long>(summary.bytes), summary.seconds);
  if (sum.mode & GFALT_CHECKSUM_TARGET) check_expected(sum, summary.checksum_value, "destination");
}

}  // namespace

int check_copy_urls(plugin_handle, gfal2_context_t, const char* src, const char* dst, gfal_url2_check check) {
  if (check != GFAL_FILE_COPY) return FALSE;
  return (is_file_url(src) && is_pxfer_url(dst)) || (is_pxfer_url(src) && is_file_url(dst));
}

int copy_file(plugin_handle, gfal2_context_t context, gfalt_params_t params, const char* src, const char* dst,
              GError** err) {
  return guarded(err, __func__, [&] { copy(context, params, src, dst); });
}

}  // namespace pxfer::gfal
