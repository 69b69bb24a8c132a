#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "pxfer/present/sweep_table.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer {
namespace {

using Setting = std::tuple<int, std::uint32_t, std::string, std::string>;  // direction, window, congestion, compression

// A column's name: its stream count, or "auto" for -p auto (0 in SweepCell).
std::string streams_label(unsigned streams) { return streams == 0 ? "auto" : std::to_string(streams); }

Setting setting_of(const SweepCell& c) { return {static_cast<int>(c.direction), c.window, c.congestion, describe(c.compression)}; }

std::string describe_setting(const SweepCell& c) {
  std::string s = c.direction == Direction::put ? "put" : "get";
  s += ", window " + (c.window ? format_size(c.window) : std::string("auto"));
  s += ", congestion " + (c.congestion.empty() ? std::string("default") : c.congestion);
  s += ", compress " + describe(c.compression);
  return s;
}

}  // namespace

double SweepCell::median_mbit() const {
  if (rates_mbit.empty()) return 0;
  std::vector<double> v = rates_mbit;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string format_sweep_tables(const std::vector<SweepCell>& cells) {
  std::map<Setting, std::vector<const SweepCell*>> groups;
  for (const auto& c : cells) groups[setting_of(c)].push_back(&c);
  std::string out;
  for (const auto& [setting, group] : groups) {
    std::set<unsigned> files, streams;
    for (const auto* c : group) {
      files.insert(c->files);
      streams.insert(c->streams);
    }
    out += "# " + describe_setting(*group.front()) + ": rate Mbit/s (failures), median of repeats\n";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%-12s", "files\\streams");
    out += buf;
    for (unsigned s : streams) {
      std::snprintf(buf, sizeof buf, " %16s", streams_label(s).c_str());
      out += buf;
    }
    out += "\n";
    for (unsigned f : files) {
      std::snprintf(buf, sizeof buf, "%-13u", f);
      out += buf;
      for (unsigned s : streams) {
        auto it = std::find_if(group.begin(), group.end(), [&](const SweepCell* c) { return c->files == f && c->streams == s; });
        if (it == group.end()) {
          std::snprintf(buf, sizeof buf, " %16s", "-");
        } else {
          char cell[40];
          std::snprintf(cell, sizeof cell, "%.1f (%u)", (*it)->median_mbit(), (*it)->failures);
          std::snprintf(buf, sizeof buf, " %16s", cell);
        }
        out += buf;
      }
      out += "\n";
    }
    out += "\n";
  }
  return out;
}

std::string format_sweep_csv(const std::vector<SweepCell>& cells) {
  std::string out = "direction,window,congestion,compress,files,streams,runs,failures,median_mbit,rates_mbit\n";
  for (const auto& c : cells) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s,%u,%s,%s,%u,%s,%u,%u,%.2f,", c.direction == Direction::put ? "put" : "get", c.window,
                  c.congestion.c_str(), describe(c.compression).c_str(), c.files, streams_label(c.streams).c_str(), c.runs,
                  c.failures, c.median_mbit());
    out += buf;
    for (std::size_t i = 0; i < c.rates_mbit.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.2f", i ? ";" : "", c.rates_mbit[i]);
      out += buf;
    }
    out += "\n";
  }
  return out;
}

std::string format_sweep_json(const std::vector<SweepCell>& cells) {
  std::string out;
  for (const auto& c : cells) {
    nlohmann::json j = {{"event", "sweep_cell"},
                        {"direction", c.direction == Direction::put ? "put" : "get"},
                        {"window", c.window},
                        {"congestion", c.congestion},
                        {"compress", describe(c.compression)},
                        {"files", c.files},
                        {"streams", c.streams},  // 0 with streams_auto
                        {"streams_auto", c.streams == 0},
                        {"runs", c.runs},
                        {"failures", c.failures},
                        {"median_mbit", c.median_mbit()},
                        {"rates_mbit", c.rates_mbit}};
    out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return out;
}

}  // namespace pxfer
