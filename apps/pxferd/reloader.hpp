#pragma once
// SIGHUP: the command line and the --config file parsed again, as at start. The tokens and access
// files (and -v) take effect for every later connection; any other option that changed is named in
// a warning (it needs a restart). A reload that fails validation changes nothing and says why.
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "pxfer/server/server.hpp"

namespace pxfer::pxferd {

class Reloader {
 public:
  Reloader(Server& server, std::vector<std::string> argv, const CLI::App& parsed_at_start);
  void reload();  // logs the outcome; never throws

 private:
  void apply();  // throws Error when the new settings are refused
  Server& server_;
  std::vector<std::string> argv_;
  std::map<std::string, std::string> in_force_;  // key -> value
};

}  // namespace pxfer::pxferd
