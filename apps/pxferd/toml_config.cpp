#include "toml_config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <iterator>
#include <limits>

#include "pxfer/common/error.hpp"

namespace pxfer::pxferd {
namespace {

std::string position(const std::string& file, const toml::source_position& at) {
  return file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

[[noreturn]] void fail(const std::string& where, const std::string& key, const std::string& what) {
  throw CLI::ConfigError(where + ": " + key + ": " + what);
}

std::string type_of(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "a whole number";
    case toml::node_type::floating_point: return "a number with a fraction";
    case toml::node_type::boolean: return "true or false";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

// A scalar as the text CLI11 converts: strings as they are, numbers and booleans as TOML wrote them.
std::string scalar_text(const toml::node& node) {
  if (auto s = node.as_string()) return s->get();
  if (auto i = node.as_integer()) return std::to_string(i->get());
  if (auto b = node.as_boolean()) return b->get() ? "true" : "false";
  if (auto f = node.as_floating_point()) {
    std::string text = std::to_string(f->get());
    while (text.size() > 1 && text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
    return text;
  }
  return "";
}

std::string example_of(const std::string& type) {
  if (type == "DURATION") return "\"30s\"";
  if (type == "RATE") return "2 or 0.5";
  if (type == "[HOST:]PORT") return "\"127.0.0.1:9752\"";
  return "\"100G\"";
}

enum class Kind { flag, count, number_or_text, list, text };

Kind kind_of(const CLI::Option& opt) {
  if (opt.get_expected_min() == 0) return Kind::flag;
  const std::string type = opt.get_type_name();
  if (type == "N") return Kind::count;
  if (opt.get_expected_max() > 1) return Kind::list;
  if (type == "SIZE" || type == "DURATION" || type == "RATE" || type == "[HOST:]PORT") return Kind::number_or_text;
  return Kind::text;
}

// The option's value as CLI11 inputs, or the reason it has the wrong type.
std::vector<std::string> inputs_of(const CLI::Option& opt, const toml::node& node, const std::string& where,
                                   const std::string& key) {
  const std::string got = ", not " + type_of(node);
  switch (kind_of(opt)) {
    case Kind::flag:
      if (!node.is_boolean()) fail(where, key, "expected true or false" + got);
      return {scalar_text(node)};
    case Kind::count: {
      auto i = node.as_integer();
      if (!i) fail(where, key, "expected a whole number such as 10" + got);
      if (i->get() < 0 || i->get() > std::numeric_limits<unsigned>::max())
        fail(where, key, "expected a whole number from 0 to " + std::to_string(std::numeric_limits<unsigned>::max()) +
                             ", not " + std::to_string(i->get()));
      return {scalar_text(node)};
    }
    case Kind::number_or_text:
      if (!node.is_string() && !node.is_number())
        fail(where, key, "expected a " + opt.get_type_name() + " such as " + example_of(opt.get_type_name()) + got);
      return {scalar_text(node)};
    case Kind::list: {
      if (node.is_string()) return {scalar_text(node)};
      auto array = node.as_array();
      if (!array) fail(where, key, "expected an array of strings such as [\"a\", \"b\"]" + got);
      std::vector<std::string> out;
      for (const auto& item : *array) {
        if (!item.is_string()) fail(where, key, "expected an array of strings, but an item is " + type_of(item));
        out.push_back(scalar_text(item));
      }
      return out;
    }
    case Kind::text:
      break;
  }
  if (!node.is_string()) fail(where, key, "expected a string in quotes such as " + key + " = \"...\"" + got);
  return {scalar_text(node)};
}

ConfigTable table_entry(const toml::table& entry, const std::string& file) {
  ConfigTable out{{}, position(file, entry.source().begin)};
  for (const auto& [k, v] : entry) {
    TableValue value{scalar_text(v), {}, position(file, v.source().begin)};
    if (auto array = v.as_array())
      for (const auto& item : *array) value.list.push_back(scalar_text(item));
    out.values[std::string(k.str())] = std::move(value);
  }
  return out;
}

}  // namespace

TomlConfig::TomlConfig(const CLI::App& app, std::vector<std::string> tables) : app_(app), table_names_(std::move(tables)) {}

std::vector<CLI::ConfigItem> TomlConfig::from_config(std::istream& input) const {
  const CLI::Option* config = app_.get_config_ptr();
  const std::string file = config && config->count() > 0 ? config->as<std::string>() : "config";
  const std::string text{std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>()};
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw CLI::ConfigError(position(file, e.source().begin) + ": " + std::string(e.description()) +
                           " (not valid TOML: write `key = value`, strings in double quotes)");
  }
  where_.clear();
  tables_.clear();
  std::vector<CLI::ConfigItem> items;
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    const std::string where = position(file, k.source().begin);
    const bool named_table = std::find(table_names_.begin(), table_names_.end(), key) != table_names_.end();
    if (auto array = node.as_array(); named_table && array && array->is_array_of_tables()) {
      for (const auto& entry : *array) tables_[key].push_back(table_entry(*entry.as_table(), file));
      continue;
    }
    if (named_table) fail(where, key, "expected [[" + key + "]] entries (an array of tables)");
    if (node.is_table())
      fail(where, key, "a [section] is not used by pxferd: write its keys at the top of the file, before any [section]");
    const CLI::Option* opt = app_.get_option_no_throw("--" + key);
    if (!opt || !opt->get_configurable() || opt == app_.get_help_ptr() || opt == app_.get_version_ptr() || opt == config)
      fail(where, key, "not an option of pxferd (a key is a long option without --, e.g. max-active = 10; see pxferd --help)");
    where_[key] = where;
    items.push_back(CLI::ConfigItem{{}, key, inputs_of(*opt, node, where, key)});
  }
  return items;
}

std::string TomlConfig::where(const std::string& key) const {
  auto it = where_.find(key);
  return it == where_.end() ? "" : it->second;
}

const std::vector<ConfigTable>& TomlConfig::tables(const std::string& name) const {
  static const std::vector<ConfigTable> none;
  auto it = tables_.find(name);
  return it == tables_.end() ? none : it->second;
}

std::shared_ptr<TomlConfig> use_toml_config(CLI::App& app) {
  auto config = std::make_shared<TomlConfig>(app, std::vector<std::string>{"issuer"});
  app.config_formatter(config);
  return config;
}

std::string config_position(const CLI::App& app, const std::string& key) {
  auto config = std::dynamic_pointer_cast<TomlConfig>(app.get_config_formatter());
  return config ? config->where(key) : "";
}

std::vector<TokenIssuerConfig> issuer_tables(const CLI::App& app) {
  std::vector<TokenIssuerConfig> out;
  auto config = std::dynamic_pointer_cast<TomlConfig>(app.get_config_formatter());
  if (!config) return out;
  const auto& tables = config->tables("issuer");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    TokenIssuerConfig issuer;
    issuer.where = tables[i].where + " [[issuer]] #" + std::to_string(i + 1);
    for (const auto& [key, value] : tables[i].values) {
      auto list = value.list.empty() ? std::vector<std::string>{value.text} : value.list;
      if (key == "url") issuer.url = value.text;
      else if (key == "base_path") issuer.base_path = value.text;
      else if (key == "key_file") issuer.key_file = value.text;
      else if (key == "https_ca_file") issuer.https_ca_file = value.text;
      else if (key == "audience" || key == "audiences") issuer.audiences = list;  // either spelling
      else if (key == "accept_any_audience") issuer.accept_any_audience = value.text == "true";
      else
        throw Error(Errc::usage, value.where + ": [[issuer]] #" + std::to_string(i + 1) + ": " + key +
                                     " is not an issuer key (url, base_path, audience, accept_any_audience, key_file, "
                                     "https_ca_file)");
    }
    out.push_back(std::move(issuer));
  }
  return out;
}

std::string format_issuers(const std::vector<TokenIssuerConfig>& issuers) {
  auto quoted = [](const std::string& v) {
    std::string out = "\"";
    for (char c : v) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
  };
  std::string text;
  for (const auto& i : issuers) {
    text += "\n[[issuer]]                                  # " + i.where + "\n";
    text += "url = " + quoted(i.url) + "\nbase_path = " + quoted(i.base_path) + "\naudience = [";
    for (std::size_t a = 0; a < i.audiences.size(); ++a) text += (a ? ", " : "") + quoted(i.audiences[a]);
    text += std::string("]\naccept_any_audience = ") + (i.accept_any_audience ? "true" : "false") + "\n";
    if (!i.key_file.empty()) text += "key_file = " + quoted(i.key_file) + "\n";
    else text += "# key_file = (not set): keys fetched over HTTPS from the issuer's JWKS\n";
    if (!i.https_ca_file.empty()) text += "https_ca_file = " + quoted(i.https_ca_file) + "\n";
  }
  return text;
}

}  // namespace pxfer::pxferd
