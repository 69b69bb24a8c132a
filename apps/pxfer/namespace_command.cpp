#include "namespace_command.hpp"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "pxfer/common/error.hpp"
#include "pxfer/common/log_safe.hpp"
#include "pxfer/client/namespace.hpp"
#include "option_rows.hpp"

namespace pxfer::cli {
namespace {

using nlohmann::json;

Url url_argument(const std::string& text) {
  std::string why;
  auto url = parse_url(text, &why);
  if (!url) throw Error(Errc::usage, text + ": " + why);
  return *url;
}

std::string time_text(std::int64_t mtime_ns) {
  std::time_t t = static_cast<std::time_t>(mtime_ns / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

json entry_json(const RemoteEntry& e) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", e.mode);
  return json{{"name", e.name},    {"type", e.is_directory() ? "directory" : "file"},
              {"size", e.size},    {"mode", mode},
              {"mtime", time_text(e.mtime_ns)}, {"mtime_ns", e.mtime_ns}};
}

void print_json(const json& j) { std::printf("%s\n", j.dump().c_str()); }

void print_long(const RemoteEntry& e) {
  std::printf("%s %15llu %s %s%s\n", mode_text(e).c_str(), static_cast<unsigned long long>(e.size),
              time_text(e.mtime_ns).c_str(), log_safe(e.name).c_str(), e.is_directory() ? "/" : "");
}

void run_ls(RemoteNamespace& ns, const NamespaceArgs& a) {
  for (const auto& text : a.urls) {
    Url url = url_argument(text);
    auto entries = ns.list(url, a.recursive);
    if (a.json) {
      json list = json::array();
      for (const auto& e : entries) list.push_back(entry_json(e));
      print_json(json{{"url", url.to_string()}, {"entries", list}});
      continue;
    }
    for (const auto& e : entries) {
      if (a.long_format) print_long(e);
      else std::printf("%s%s\n", log_safe(e.name).c_str(), e.is_directory() ? "/" : "");
    }
  }
}

void run_stat(RemoteNamespace& ns, const NamespaceArgs& a) {
  for (const auto& text : a.urls) {
    Url url = url_argument(text);
    RemoteEntry e = ns.stat(url);
    e.name = url.path.empty() ? "." : url.path;
    if (a.json) {
      json j = entry_json(e);
      j["url"] = url.to_string();
      print_json(j);
    } else {
      std::printf("  URL: %s\n Type: %s\n Size: %llu\n Mode: %04o (%s)\nMtime: %s\n", log_safe(url.to_string()).c_str(),
                  e.is_directory() ? "directory" : "regular file", static_cast<unsigned long long>(e.size), e.mode,
                  mode_text(e).c_str(), time_text(e.mtime_ns).c_str());
    }
  }
}

void run_sum(RemoteNamespace& ns, const NamespaceArgs& a) {
  auto algo = parse_checksum_algo(a.algorithm);
  if (!algo || *algo == ChecksumAlgo::none) throw Error(Errc::usage, "sum " + a.algorithm + ": use adler32, sha256, md5, crc32 or sha1");
  {
    Url url = url_argument(a.sum_url);
    RemoteSum sum = ns.checksum(url, *algo);
    if (a.json)
      print_json(json{{"url", url.to_string()}, {"algorithm", std::string(checksum_name(*algo))}, {"value", sum.value},
                      {"size", sum.size}});
    else
      std::printf("%s %s\n", log_safe(url.to_string()).c_str(), log_safe(sum.value).c_str());  // as gfal-sum prints
  }
}

// mkdir, rm, mv: silent on success (a JSON line each with --json).
void run_change(const CLI::App& command, RemoteNamespace& ns, const NamespaceArgs& a) {
  const std::string name = command.get_name();
  if (name == "mv") {
    if (a.urls.size() != 2) throw Error(Errc::usage, "mv needs SOURCE and DEST, both pxfer:// URLs on one server");
    Url from = url_argument(a.urls[0]), to = url_argument(a.urls[1]);
    if (to.trailing_slash) to.path += from.path.substr(from.path.rfind('/') == std::string::npos ? 0 : from.path.rfind('/') + 1);
    ns.rename(from, to, a.overwrite);
    if (a.json) print_json(json{{"op", "mv"}, {"from", from.to_string()}, {"to", to.to_string()}, {"result", "ok"}});
    return;
  }
  for (const auto& text : a.urls) {
    Url url = url_argument(text);
    if (name == "mkdir") ns.mkdir(url, a.parents);
    else ns.remove(url, a.recursive);
    if (a.json) print_json(json{{"op", name}, {"url", url.to_string()}, {"result", "ok"}});
  }
}

}  // namespace

CLI::App* NamespaceCommands::parsed() const {
  for (CLI::App* c : all())
    if (c && c->parsed()) return c;
  return nullptr;
}

NamespaceCommands add_namespace_commands(CLI::App& app, NamespaceArgs& a) {
  NamespaceCommands c;
  c.ls = app.add_subcommand("ls", "list a directory on a server (its children; all below it with -r)");
  c.ls->add_flag("-l,--long", a.long_format, "kind and permissions, size, mtime (UTC) and name");
  c.ls->add_flag("-r,--recursive", a.recursive, "every name below the directory, parents first");
  c.stat = app.add_subcommand("stat", "kind, size, permissions and mtime of a name on a server");
  c.mkdir = app.add_subcommand("mkdir", "create a directory on a server");
  c.mkdir->add_flag("-p,--parents", a.parents, "create missing parents too; an existing directory is fine");
  c.rm = app.add_subcommand("rm", "remove a file, or an empty directory, on a server");
  c.rm->add_flag("-r,--recursive", a.recursive, "remove a directory and everything below it");
  c.mv = app.add_subcommand("mv", "rename on one server, atomically: pxfer mv pxfer://H/a pxfer://H/b");
  c.mv->add_flag("--overwrite", a.overwrite, "replace an existing target");
  c.sum = app.add_subcommand("sum", "the server computes a file's checksum: pxfer sum URL [adler32|sha256|md5|crc32|sha1]");
  for (CLI::App* cmd : c.all()) {
    if (cmd == c.sum) {
      cmd->add_option("URL", a.sum_url, "pxfer://HOST[:PORT]/PATH")->required();
      cmd->add_option("ALGORITHM", a.algorithm, "adler32, sha256, md5, crc32 or sha1")->capture_default_str();
    } else {
      cmd->add_option("URL", a.urls, "pxfer://HOST[:PORT]/PATH")->required();
    }
    cmd->add_flag("--json", a.json, "one JSON object per line instead of text");
    add_row(*cmd, *find_option("connect-timeout"), a.connect_timeout);
  }
  return c;
}

void make_destination_parents(bool is_put, const std::string& dest, const ClientSecurity& security,
                              std::chrono::milliseconds connect_timeout) {
  if (dest.empty()) return;
  if (!is_put) {
    std::string dir = dest.ends_with('/') ? dest : parent_path(dest);
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(errc_from_errno(ec.value()), "--parents: cannot create " + dir + ": " + ec.message());
    return;
  }
  Url url = url_argument(dest);
  RemoteNamespace ns(security, connect_timeout);
  if (url.trailing_slash) ns.mkdir(url, true);
  else ns.make_parents(url);
}

int run_namespace_command(const CLI::App& command, const NamespaceArgs& a,
                          const std::function<ClientSecurity()>& security) {
  try {
    OptionValues values;
    apply_option("connect-timeout", a.connect_timeout, values);
    RemoteNamespace ns(security(), values.client.connect_timeout);
    const std::string name = command.get_name();
    if (name == "ls") run_ls(ns, a);
    else if (name == "stat") run_stat(ns, a);
    else if (name == "sum") run_sum(ns, a);
    else run_change(command, ns, a);
    return 0;
  } catch (const Error& e) {
    std::fflush(stdout);
    if (a.json) print_json(json{{"op", command.get_name()}, {"result", "error"}, {"class", std::string(errc_name(e.code()))},
                                {"message", e.what()}});
    std::fprintf(stderr, "pxfer: %s\n", log_safe(e.what()).c_str());
    return exit_code(e.code());
  }
}

}  // namespace pxfer::cli
