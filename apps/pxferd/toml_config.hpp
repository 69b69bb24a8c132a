#pragma once
// pxferd --config FILE read as real TOML (toml++), handed to CLI11 as its config formatter. Every
// top-level key must be a long option of pxferd with a value of the option's type; a mistake is
// one line `FILE:LINE:COL: key: what is wrong, what was expected`. Arrays of tables named in
// `tables` ([[issuer]]) are not options: they are kept, as lists of key/value maps, for the code
// that reads them.
#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pxfer/server/server.hpp"

namespace pxfer::pxferd {

struct TableValue {
  std::string text;               // a scalar as text (true/false, 10, 2.5, "as written")
  std::vector<std::string> list;  // an array's items as text; empty for a scalar
  std::string where;              // "FILE:LINE:COL"
};
struct ConfigTable {
  std::map<std::string, TableValue> values;
  std::string where;  // of its [[NAME]] header
};

class TomlConfig final : public CLI::Config {
 public:
  // `app` gives the options (and the --config file's name: its value when the file is read).
  // `tables` are the names allowed as [[NAME]] arrays of tables.
  TomlConfig(const CLI::App& app, std::vector<std::string> tables);
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;
  std::string to_config(const CLI::App*, bool, bool, std::string) const override { return ""; }

  // "FILE:LINE:COL" of option KEY's value in the file last read, "" when it was not there.
  std::string where(const std::string& key) const;
  // The entries of [[NAME]] in file order (empty when the file had none).
  const std::vector<ConfigTable>& tables(const std::string& name) const;

 private:
  const CLI::App& app_;
  std::vector<std::string> table_names_;
  mutable std::map<std::string, std::string> where_;
  mutable std::map<std::string, std::vector<ConfigTable>> tables_;
};

// Installs a TomlConfig as `app`'s config reader and returns it.
std::shared_ptr<TomlConfig> use_toml_config(CLI::App& app);
// "FILE:LINE:COL" of KEY in `app`'s config file, "" when it was not set there.
std::string config_position(const CLI::App& app, const std::string& key);

// The [[issuer]] tables of `app`'s config file as token issuers (url, base_path, audience,
// accept_any_audience, key_file, https_ca_file), each with its position and index for messages;
// server::load_token_policy checks them. Throws Error(usage) "FILE:LINE:COL: [[issuer]] #N: ..."
// for a key that is not one of those.
std::vector<TokenIssuerConfig> issuer_tables(const CLI::App& app);
// The issuers as --print-config shows them: [[issuer]] tables, each with where it came from.
std::string format_issuers(const std::vector<TokenIssuerConfig>& issuers);

}  // namespace pxfer::pxferd
