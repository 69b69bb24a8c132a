#pragma once
// pxfer's client options made from the option table (pxfer/core/option_table.hpp): a subcommand
// gets a CLI11 option per row of its verb, each holding the text as given; the table parses,
// bounds and refuses them (build_options), so no option is declared twice.
#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pxfer/core/option_table.hpp"

namespace pxfer::cli {

// One text per row of the table, in its order; `options[i]` is nullptr for a row the command lacks.
struct CommonArgs {
  std::vector<std::string> texts;
  std::vector<CLI::Option*> options;

  // The rows the command line gave, name -> text ("true" for a flag).
  OptionTexts given() const {
    OptionTexts out;
    const auto table = option_table();
    for (std::size_t i = 0; i < options.size(); ++i)
      if (options[i] && options[i]->count() > 0)
        out.emplace_back(option_name(table[i]), table[i].kind == OptionKind::flag ? "true" : texts[i]);
    return out;
  }
  // A row's text: as given, else its default.
  const std::string& text(std::string_view name) const {
    const auto table = option_table();
    for (std::size_t i = 0; i < table.size(); ++i)
      if (option_name(table[i]) == name) return texts[i];
    throw std::logic_error("no option " + std::string(name));
  }
  bool given(std::string_view name) const {
    const auto table = option_table();
    for (std::size_t i = 0; i < table.size(); ++i)
      if (option_name(table[i]) == name) return options[i] && options[i]->count() > 0;
    return false;
  }
};

// The row's CLI11 option, its text kept in `text` (which starts as the row's default).
inline CLI::Option* add_row(CLI::App& cmd, const OptionRow& row, std::string& text) {
  if (row.kind == OptionKind::flag) return cmd.add_flag(row.names, row.help);
  text = row.default_text;
  CLI::Option* option = cmd.add_option(row.names, text, row.help);
  if (*row.default_text) option->capture_default_str();
  return option;
}

// Every row of `verb` (an OptionVerb bit) on `cmd`, in the table's order (which is --help's).
inline void add_common(CLI::App& cmd, CommonArgs& a, unsigned verb) {
  const auto table = option_table();
  a.texts.assign(table.size(), "");
  a.options.assign(table.size(), nullptr);
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].verbs & verb) a.options[i] = add_row(cmd, table[i], a.texts[i]);
}

}  // namespace pxfer::cli
