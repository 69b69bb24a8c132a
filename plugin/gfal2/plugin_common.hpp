#pragma once
// The pxfer gfal2 plugin (libgfal_plugin_pxfer.so): shared pieces of its namespace and copy halves.
// gfal2 loads it into gfal-copy, FTS3's url-copy and Python: nothing here may throw across the C
// boundary, print, or change process-wide state other than pxfer's own client security snapshot.
#include <gfal_plugins_api.h>

#include <exception>
#include <string>

#include "pxfer/client/client.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/common/url.hpp"
#include "pxfer/core/option_table.hpp"

namespace pxfer::gfal {

inline constexpr const char* plugin_name = "pxfer";
inline constexpr const char* config_group = "PXFER";  // /etc/gfal2.d/pxfer_plugin.conf, -D "PXFER:KEY=VALUE"

// gfal_plugin_init's plugin_data: the context gfal2 loaded the plugin into.
struct Plugin {
  gfal2_context_t context;
};
inline gfal2_context_t context_of(plugin_handle h) { return static_cast<Plugin*>(h)->context; }
// "pxfer-0.2.0": getName's answer, and the name gfal2 routes an open handle's calls by.
const char* plugin_versioned_name();

GQuark quark();
bool is_pxfer_url(const char* url);
Url parse_pxfer_url(const char* url);  // throws Error(usage)

// A checksum as gfal2 writes it: pxfer's lower-case hex, but CRC32 in decimal (gfal2's file plugin
// and gsiftp print zlib's CRC-32 as an unsigned decimal number).
std::string gfal_checksum_form(ChecksumAlgo algo, const std::string& hex);
// A gfal2 algorithm name (ADLER32, MD5, ...) as pxfer's; throws ENOTSUP for one pxfer lacks.
ChecksumAlgo checksum_algo_of(const std::string& gfal_name);

// The errno gfal2 and FTS3 classify a pxfer error by.
int errno_of(const Error& e);

// Credentials and trust for a URL: gfal2's per-URL BEARER or X509_CERT/X509_KEY, else TOKEN_FILE
// or CERT/KEY of the [PXFER] group, else gfal2's default X.509 (X509_USER_PROXY ...); KNOWN_HOSTS,
// FINGERPRINT and CA from [PXFER] (each overridable with -D), CA else X509_CERT_DIR for an X.509.
ClientSecurity security_for(gfal2_context_t context, const char* url);
// Seconds gfal2 allows to connect (the [PXFER] CONNECT_TIMEOUT, default 15; EINVAL outside its row's bounds).
int connect_timeout_seconds(gfal2_context_t context);
// Every row of the option table (pxfer/core/option_table.hpp) with a [PXFER] key that gfal2's
// configuration sets, through the row as pxfer's command line applies it: a value it refuses is an
// EINVAL "PXFER:KEY=VALUE: use ...", never clamped.
void apply_config_keys(gfal2_context_t context, OptionValues& values);
// One value gfal2 gave (`origin` names it in the refusal: "gfal-copy -n 65") through the row `name`.
void apply_gfal_value(const char* name, const std::string& text, const std::string& origin, OptionValues& values);

// An error whose errno is more precise than its pxfer::Error class would say (ENOTDIR, EISDIR, ENOTSUP).
struct PosixError {
  int code;
  std::string message;
};

// Runs `body`; a pxfer::Error (or anything else) becomes a GError with its errno, and -1.
template <class F>
int guarded(GError** err, const char* function, F&& body) {
  try {
    body();
    return 0;
  } catch (const Error& e) {
    gfal2_set_error(err, quark(), errno_of(e), function, "%s", e.what());
  } catch (const PosixError& e) {
    gfal2_set_error(err, quark(), e.code, function, "%s", e.message.c_str());
  } catch (const std::exception& e) {
    gfal2_set_error(err, quark(), EIO, function, "internal error: %s", e.what());
  } catch (...) {
    gfal2_set_error(err, quark(), EIO, function, "internal error");
  }
  return -1;
}

// gfal2's open/read/write/lseek/pread/pwrite/close (plugin_stream.cpp) into its interface.
void add_stream_io(gfal_plugin_interface& p);

// gfal2's copy entry points (plugin_copy.cpp).
int check_copy_urls(plugin_handle handle, gfal2_context_t context, const char* src, const char* dst,
                    gfal_url2_check check);
int copy_file(plugin_handle handle, gfal2_context_t context, gfalt_params_t params, const char* src, const char* dst,
              GError** err);
int copy_bulk(plugin_handle handle, gfal2_context_t context, gfalt_params_t params, size_t nbfiles, const char* const* srcs,
              const char* const* dsts, const char* const* checksums, GError** op_error, GError*** file_errors);

}  // namespace pxfer::gfal
