#pragma once
// pxfer sweep: the files x streams matrix grid sites compare setups with. Each cell runs FILES
// transfers at once, each with STREAMS streams, against a real server, and records the aggregate
// rate and the failures; repeated, per direction, window and congestion control.
#include "pxfer/client/layer.hpp"
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pxfer/client/client.hpp"
#include "pxfer/present/sweep_table.hpp"

namespace pxfer {

struct SweepOptions {
  std::vector<unsigned> streams{1, 3, 5, 10};  // 0 = -p auto (the stream controller decides)
  std::vector<unsigned> files{1, 3, 5, 10};
  std::uint64_t size = 256ull << 20;  // of each file
  std::vector<Direction> directions{Direction::get};
  std::vector<std::uint32_t> windows{0};
  std::vector<std::string> congestions{""};  // "" = the system default
  std::vector<CompressionSetting> compressions{CompressionSetting{}};
  unsigned repeat = 1;
  ClientOptions base;                        // block size, checksum, timeouts
  std::string scratch_dir;                   // local files; "" = /dev/shm or /tmp
};

// Runs the matrix; `on_cell` is called as each cell finishes (progress). Server-side files are
// named ".pxfer-sweep-PID-*" in the URL's directory and removed at the end, whatever happens.
std::vector<SweepCell> run_sweep(const Url& server_dir, const SweepOptions& options,
                                 const std::function<void(const SweepCell&)>& on_cell = {});

// Deletes a file on the server (confined to its export root).
void remove_remote(const Url& remote, std::chrono::milliseconds connect_timeout = std::chrono::milliseconds(15000));

}  // namespace pxfer
