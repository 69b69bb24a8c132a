#include "config_report.hpp"

#include <algorithm>

#include "toml_config.hpp"

namespace pxfer::pxferd {

bool on_command_line(const CLI::Option& opt, const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    for (const auto& name : opt.get_lnames())
      if (a == "--" + name || a.rfind("--" + name + "=", 0) == 0) return true;
    for (const auto& name : opt.get_snames())
      if (a == "-" + name) return true;
  }
  return false;
}

std::string with_origin(const std::string& message, const CLI::App& app, const std::vector<std::string>& argv) {
  const CLI::Option* config = app.get_config_ptr();
  auto start = message.find("--");
  if (!config || config->count() == 0 || start == std::string::npos) return message;
  auto end = message.find_first_of(" =:", start);
  const CLI::Option* opt = app.get_option_no_throw(message.substr(start, end - start));
  if (!opt || opt->count() == 0 || on_command_line(*opt, argv)) return message;
  const std::string where = config_position(app, opt->get_lnames().front());
  return (where.empty() ? config->as<std::string>() : where) + ": " + message;
}

namespace {

bool is_false(const std::string& v) { return v == "false" || v == "0" || v == "-1" || v == "off" || v == "no"; }

std::string value_of(const CLI::Option& opt) {
  const bool flag = opt.get_expected_min() == 0;
  if (opt.count() == 0) return flag ? "false" : opt.get_default_str();
  std::string joined;
  for (const auto& r : opt.results()) joined += (joined.empty() ? "" : ",") + r;
  if (flag) return joined.empty() || !is_false(joined) ? "true" : "false";
  return joined;
}

bool bare(const std::string& v) {
  if (v == "true" || v == "false") return true;
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

std::string quoted(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::vector<OptionValue> options_in_force(const CLI::App& app, const std::vector<std::string>& argv) {
  std::vector<OptionValue> out;
  const CLI::Option* config = app.get_config_ptr();
  const std::string file = config && config->count() > 0 ? config->as<std::string>() : "";
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->get_configurable() || opt->get_lnames().empty() || opt == app.get_help_ptr() ||
        opt == app.get_version_ptr())
      continue;
    OptionValue v{opt->get_lnames().front(), value_of(*opt), "default"};
    if (opt->count() > 0) v.origin = on_command_line(*opt, argv) ? "command line" : file;
    out.push_back(std::move(v));
  }
  return out;
}

std::string format_config(const std::vector<OptionValue>& values, const std::string& header) {
  std::string text = header;
  for (const auto& v : values) {
    if (v.value.empty() && v.origin == "default") {
      text += "# " + v.key + " = (not set)\n";
      continue;
    }
    std::string line = v.key + " = " + (bare(v.value) ? v.value : quoted(v.value));
    line.resize(std::max<std::size_t>(line.size() + 1, 44), ' ');
    text += line + "# " + v.origin + "\n";
  }
  return text;
}

}  // namespace pxfer::pxferd
