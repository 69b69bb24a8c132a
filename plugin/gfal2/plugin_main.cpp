// gfal_plugin_init and the namespace half of the pxfer gfal2 plugin: every call goes through
// pxfer::RemoteNamespace (pxfer/client/namespace.hpp), the same code `pxfer ls/stat/mkdir/rm/mv/sum` runs.
// The streamed I/O half is plugin_stream.cpp, the copies plugin_copy.cpp.
#include <dirent.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "plugin_common.hpp"
#include "pxfer/client/namespace.hpp"
#include "pxfer/version.hpp"

namespace pxfer::gfal {
namespace {

RemoteNamespace open_namespace(plugin_handle h, const char* url) {
  gfal2_context_t c = context_of(h);
  return RemoteNamespace(security_for(c, url), std::chrono::seconds(connect_timeout_seconds(c)));
}

void fill_stat(const RemoteEntry& e, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_mode = (e.is_directory() ? S_IFDIR : S_IFREG) | (e.mode & 07777);
  st->st_size = static_cast<off_t>(e.size);
  st->st_nlink = 1;
  st->st_mtim.tv_sec = static_cast<time_t>(e.mtime_ns / 1'000'000'000);
  st->st_mtim.tv_nsec = static_cast<long>(e.mtime_ns % 1'000'000'000);
  st->st_atim = st->st_mtim;
  st->st_ctim = st->st_mtim;
}

// An open directory: its entries, read once at opendir, and the dirent readdir hands out.
struct OpenDirectory {
  std::vector<RemoteEntry> entries;
  std::size_t next = 0;
  struct dirent current {};
};

const char* get_name() { return plugin_versioned_name(); }

void delete_plugin(plugin_handle h) { delete static_cast<Plugin*>(h); }

gboolean check_url(plugin_handle, const char* url, plugin_mode mode, GError**) {
  if (!is_pxfer_url(url)) return FALSE;
  switch (mode) {
    case GFAL_PLUGIN_ACCESS:
    case GFAL_PLUGIN_STAT:
    case GFAL_PLUGIN_LSTAT:
    case GFAL_PLUGIN_MKDIR:
    case GFAL_PLUGIN_MKDIR_REC:
    case GFAL_PLUGIN_RMDIR:
    case GFAL_PLUGIN_OPENDIR:
    case GFAL_PLUGIN_UNLINK:
    case GFAL_PLUGIN_RENAME:
    case GFAL_PLUGIN_CHMOD:
    case GFAL_PLUGIN_GETXATTR:
    case GFAL_PLUGIN_LISTXATTR:
    case GFAL_PLUGIN_OPEN:
    case GFAL_PLUGIN_CHECKSUM: return TRUE;
    default: return FALSE;
  }
}

int stat_url(plugin_handle h, const char* url, struct stat* st, GError** err) {
  return guarded(err, __func__, [&] { fill_stat(open_namespace(h, url).stat(parse_pxfer_url(url)), st); });
}

// access(2) against the entry's owner bits (pxferd owns what it serves; the server's --access
// rules decide the rest at the operation itself): after a chmod 400, W_OK is EACCES.
int access_url(plugin_handle h, const char* url, int mode, GError** err) {
  return guarded(err, __func__, [&] {
    const std::uint32_t bits = open_namespace(h, url).stat(parse_pxfer_url(url)).mode;
    if (((mode & R_OK) && !(bits & S_IRUSR)) || ((mode & W_OK) && !(bits & S_IWUSR)) ||
        ((mode & X_OK) && !(bits & S_IXUSR)))
      throw PosixError{EACCES, std::string(url) + ": its mode does not allow that access"};
  });
}

int mkdir_url(plugin_handle h, const char* url, mode_t, gboolean parents, GError** err) {
  return guarded(err, __func__, [&] { open_namespace(h, url).mkdir(parse_pxfer_url(url), parents); });
}

int rmdir_url(plugin_handle h, const char* url, GError** err) {
  return guarded(err, __func__, [&] {
    RemoteNamespace ns = open_namespace(h, url);
    Url u = parse_pxfer_url(url);
    if (!ns.stat(u).is_directory()) {
      throw PosixError{ENOTDIR, std::string(url) + ": not a directory"};
    }
    try {
      ns.remove(u, false);
    } catch (const Error& e) {
      // pxfer says `exists` for a directory that is not empty (rmdir(2) may say either); gfal2's
      // callers test for ENOTEMPTY.
      if (e.code() == Errc::exists) throw PosixError{ENOTEMPTY, e.what()};
      throw;
    }
  });
}

int unlink_url(plugin_handle h, const char* url, GError** err) {
  return guarded(err, __func__, [&] {
    RemoteNamespace ns = open_namespace(h, url);
    Url u = parse_pxfer_url(url);
    if (ns.stat(u).is_directory()) {
      throw PosixError{EISDIR, std::string(url) + ": is a directory"};
    }
    ns.remove(u, false);
  });
}

int rename_url(plugin_handle h, const char* from, const char* to, GError** err) {
  // rename(2) replaces an existing target; so does gfal-rename.
  return guarded(err, __func__, [&] { open_namespace(h, from).rename(parse_pxfer_url(from), parse_pxfer_url(to), true); });
}

int checksum_url(plugin_handle h, const char* url, const char* type, char* buffer, size_t size, off_t offset,
                 size_t length, GError** err) {
  return guarded(err, __func__, [&] {
    if (offset != 0 || length != 0) throw Error(Errc::usage, "pxfer computes whole-file checksums only (no offset or length)");
    if (!type || !*type) throw PosixError{EINVAL, "checksum: no algorithm named"};
    const ChecksumAlgo algo = checksum_algo_of(type);
    const std::string value = gfal_checksum_form(algo, open_namespace(h, url).checksum(parse_pxfer_url(url), algo).value);
    if (value.size() + 1 > size) throw PosixError{ENOBUFS, "checksum buffer too small"};
    std::memcpy(buffer, value.c_str(), value.size() + 1);
  });
}

int chmod_url(plugin_handle h, const char* url, mode_t mode, GError** err) {
  return guarded(err, __func__, [&] { open_namespace(h, url).chmod(parse_pxfer_url(url), static_cast<std::uint32_t>(mode)); });
}

// Extended attributes FTS3 and Rucio ask before a transfer: user.status (a pxfer file is always
// on disk: ONLINE), nothing else. spacetoken: unsupported, as gfal2's plugins without space
// reporting answer it.
ssize_t getxattr_url(plugin_handle h, const char* url, const char* key, void* buffer, size_t size, GError** err) {
  std::string value;
  const int rc = guarded(err, __func__, [&] {
    const std::string name = key ? key : "";
    if (name == GFAL_XATTR_STATUS) {
      open_namespace(h, url).stat(parse_pxfer_url(url));  // ENOENT for nothing there
      value = GFAL_XATTR_STATUS_ONLINE;
    } else if (name == GFAL_XATTR_SPACETOKEN) {
      throw PosixError{ENOTSUP, "pxfer has no space tokens"};
    } else {
      throw PosixError{ENODATA, "pxfer knows no extended attribute " + name + " (it offers " GFAL_XATTR_STATUS ")"};
    }
  });
  if (rc != 0) return -1;
  if (buffer && size > 0) {
    std::memset(buffer, 0, size);
    std::memcpy(buffer, value.data(), std::min(size, value.size()));
  }
  return static_cast<ssize_t>(value.size());
}

ssize_t listxattr_url(plugin_handle, const char*, char* list, size_t size, GError**) {
  static const char names[] = GFAL_XATTR_STATUS;  // with its NUL: one name
  const size_t n = std::min(size, sizeof names);
  if (list) std::memcpy(list, names, n);
  return static_cast<ssize_t>(n);
}

gfal_file_handle opendir_url(plugin_handle h, const char* url, GError** err) {
  auto dir = std::make_unique<OpenDirectory>();
  const int rc = guarded(err, __func__, [&] {
    RemoteNamespace ns = open_namespace(h, url);
    Url u = parse_pxfer_url(url);
    if (!ns.stat(u).is_directory()) {
      throw PosixError{ENOTDIR, std::string(url) + ": not a directory"};
    }
    dir->entries = ns.list(u, false);
  });
  if (rc != 0) return nullptr;
  // gfal2 routes readdir/closedir by this name: it must be the one getName() gives.
  return gfal_file_handle_new2(get_name(), dir.release(), nullptr, url);
}

struct dirent* readdirpp_url(plugin_handle, gfal_file_handle fh, struct stat* st, GError**) {
  auto* dir = static_cast<OpenDirectory*>(gfal_file_handle_get_fdesc(fh));
  if (dir->next >= dir->entries.size()) return nullptr;
  const RemoteEntry& e = dir->entries[dir->next++];
  std::memset(&dir->current, 0, sizeof dir->current);
  dir->current.d_type = e.is_directory() ? DT_DIR : DT_REG;
  std::strncpy(dir->current.d_name, e.name.c_str(), sizeof dir->current.d_name - 1);
  if (st) fill_stat(e, st);
  return &dir->current;
}

struct dirent* readdir_url(plugin_handle h, gfal_file_handle fh, GError** err) {
  return readdirpp_url(h, fh, nullptr, err);
}

int closedir_url(plugin_handle, gfal_file_handle fh, GError**) {
  delete static_cast<OpenDirectory*>(gfal_file_handle_get_fdesc(fh));
  gfal_file_handle_delete(fh);
  return 0;
}

}  // namespace

const char* plugin_versioned_name() {
  static const std::string name = std::string(plugin_name) + "-" + version;  // "pxfer-0.2.0", as gfal2 plugins name themselves
  return name.c_str();
}

}  // namespace pxfer::gfal

extern "C" __attribute__((visibility("default"))) gfal_plugin_interface gfal_plugin_init(gfal2_context_t context,
                                                                                       GError** err) {
  using namespace pxfer::gfal;
  gfal_plugin_interface p;
  std::memset(&p, 0, sizeof p);
  (void)err;
  p.plugin_data = new Plugin{context};
  p.priority = GFAL_PLUGIN_PRIORITY_DATA;
  p.getName = get_name;
  p.plugin_delete = delete_plugin;
  p.check_plugin_url = check_url;
  p.accessG = access_url;
  p.statG = stat_url;
  p.lstatG = stat_url;
  p.mkdirpG = mkdir_url;
  p.rmdirG = rmdir_url;
  p.unlinkG = unlink_url;
  p.renameG = rename_url;
  p.opendirG = opendir_url;
  p.readdirG = readdir_url;
  p.readdirppG = readdirpp_url;
  p.closedirG = closedir_url;
  p.checksum_calcG = checksum_url;
  p.chmodG = chmod_url;
  p.getxattrG = getxattr_url;
  p.listxattrG = listxattr_url;
  p.check_plugin_url_transfer = check_copy_urls;
  p.copy_file = copy_file;
  p.copy_bulk = copy_bulk;
  add_stream_io(p);
  return p;
}
