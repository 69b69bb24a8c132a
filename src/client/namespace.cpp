// RemoteNamespace: the namespace requests over one kept control connection, run on a private
// single-threaded io_context (so the gfal2 plugin can call it from whatever thread gfal2 uses).
#include "pxfer/client/namespace.hpp"

#include "path_names.hpp"
#include "pxfer/common/error.hpp"
#include "request_link.hpp"

namespace pxfer {
namespace {

RemoteEntry entry_from(const wire::ListEntry& e, std::string name) {
  return RemoteEntry{std::move(name), e.kind, e.size, e.mode & 07777, e.mtime_ns};
}

// STAT, RENAME, REMOVE_TREE and LIST_CHILDREN came with cap_namespace.
RequestLink::Needs needs_of(const wire::Message& m) {
  const bool namespace_request = std::holds_alternative<wire::Stat>(m) || std::holds_alternative<wire::Rename>(m) ||
                                 std::holds_alternative<wire::RemoveTree>(m) ||
                                 std::holds_alternative<wire::ListChildren>(m);
  return namespace_request ? RequestLink::Needs{wire::cap_namespace, "stat, mv and rm -r"} : RequestLink::Needs{};
}

}  // namespace

// The requests over one kept connection (request_link.hpp), each checked for the capability it needs.
struct RemoteNamespace::State {
  State(ClientSecurity security, std::chrono::milliseconds timeout) : link(std::move(security), timeout) {}
  std::vector<wire::Message> request(const Url& url, const wire::Message& message) {
    return link.request(url, message, needs_of(message));
  }
  template <class T>
  T ask(const Url& url, const wire::Message& message) {
    return link.ask<T>(url, message, needs_of(message));
  }
  RequestLink link;
};

RemoteNamespace::RemoteNamespace(ClientSecurity security, std::chrono::milliseconds connect_timeout)
    : state_(std::make_unique<State>(std::move(security), connect_timeout)) {}

RemoteNamespace::~RemoteNamespace() = default;  // the link closes its connection

RemoteEntry RemoteNamespace::stat(const Url& url) {
  auto ok = state_->ask<wire::StatOk>(url, wire::Stat{url.path});
  return entry_from(ok.entry, "");
}

std::vector<RemoteEntry> RemoteNamespace::list(const Url& url, bool recursive) {
  // Without -r only the directory's own names are asked for: no walk of the tree below it.
  const wire::Message ask = recursive ? wire::Message(wire::List{url.path}) : wire::Message(wire::ListChildren{url.path});
  auto replies = state_->request(url, ask);
  std::vector<RemoteEntry> out;
  for (auto& reply : replies) {
    auto part = net::expect<wire::Listing>(std::move(reply), url.authority());
    for (auto& e : part.entries) {
      if (e.relative_path.empty()) {  // LIST named a file: a listing of one
        out.push_back(entry_from(e, basename_of(url.path)));
        continue;
      }
      if (!recursive && e.relative_path.find('/') != std::string::npos) continue;
      out.push_back(entry_from(e, e.relative_path));
    }
    if (out.size() > wire::max_list_entries)
      throw Error(Errc::protocol, url.authority() + ": sent more than " + std::to_string(wire::max_list_entries) +
                                      " entries for one LIST");
  }
  return out;
}

void RemoteNamespace::mkdir(const Url& url, bool parents) {
  if (!parents) {
    const std::string parent = parent_path(url.path);
    Url above = url;
    above.path = parent;
    if (!stat(above).is_directory()) throw Error(Errc::not_found, url.to_string() + ": the parent is not a directory");
    bool exists = true;
    try {
      stat(url);
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;
      exists = false;
    }
    if (exists) throw Error(Errc::exists, url.to_string() + ": exists already (mkdir -p accepts an existing directory)");
  }
  state_->ask<wire::Done>(url, wire::Mkdir{url.path});
}

void RemoteNamespace::remove(const Url& url, bool recursive) {
  state_->ask<wire::Done>(url, wire::RemoveTree{url.path, static_cast<std::uint8_t>(recursive ? 1 : 0)});
}

void RemoteNamespace::rename(const Url& from, const Url& to, bool overwrite) {
  if (from.authority() != to.authority())
    throw Error(Errc::usage, "mv " + from.to_string() + " " + to.to_string() +
                                 ": both must be on the same server (use cp, then rm, across servers)");
  state_->ask<wire::Done>(from, wire::Rename{from.path, to.path, static_cast<std::uint8_t>(overwrite ? 1 : 0)});
}

RemoteSum RemoteNamespace::checksum(const Url& url, ChecksumAlgo algo) {
  if (algo == ChecksumAlgo::none) throw Error(Errc::usage, "checksum: use adler32, sha256, md5, crc32 or sha1");
  // The server reads the file only for the size asked about: a file that changed size between the
  // two requests gets an empty value, and one more try.
  for (int attempt = 0; attempt < 3; ++attempt) {
    RemoteEntry e = stat(url);
    if (e.is_directory()) throw Error(Errc::usage, url.to_string() + ": is a directory; a checksum needs a file");
    auto ok = state_->ask<wire::SumOk>(url, wire::Sum{url.path, static_cast<std::uint8_t>(algo), e.size});
    if (!ok.value.empty()) return RemoteSum{ok.size, ok.value};
  }
  throw Error(Errc::integrity, url.to_string() + ": kept changing size while its checksum was computed; try again later");
}

void RemoteNamespace::chmod(const Url& url, std::uint32_t mode) {
  const RemoteEntry e = stat(url);
  if (e.is_directory()) throw Error(Errc::usage, url.to_string() + ": is a directory; pxfer changes the mode of files only");
  state_->ask<wire::Done>(url, wire::SetAttributes{url.path, mode & 07777, e.mtime_ns});
}

void RemoteNamespace::make_parents(const Url& url) {
  const std::string parent = parent_path(url.path);
  if (!parent.empty()) state_->ask<wire::Done>(url, wire::Mkdir{parent});
}

std::string mode_text(const RemoteEntry& entry) {
  std::string out = entry.is_directory() ? "d" : "-";
  const char* letters = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) out += (entry.mode & (0400u >> i)) ? letters[i] : '-';
  return out;
}

std::string parent_path(const std::string& path) {
  std::string p = path;
  while (!p.empty() && p.back() == '/') p.pop_back();
  auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

}  // namespace pxfer
