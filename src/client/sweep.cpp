#include <unistd.h>

#include <cstring>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "connect.hpp"
#include "net/frame_io.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/client/sweep.hpp"

namespace pxfer {
namespace fs = std::filesystem;

void remove_remote(const Url& remote, std::chrono::milliseconds connect_timeout) {
  run_io(1, [&](boost::asio::io_context&) -> net::awaitable<void> {
    ControlLink link = co_await open_control(remote, connect_timeout);
    wire::Message request = wire::Remove{remote.path};
    co_await net::send_message(*link.connection, request);
    wire::Message reply = co_await net::read_message(*link.connection);
    net::expect<wire::Done>(std::move(reply), link.connection->peer());
  });
}

namespace {

std::string scratch_base(const SweepOptions& o, std::uint64_t needed) {
  if (!o.scratch_dir.empty()) return o.scratch_dir;
  std::error_code ec;
  auto space = fs::space("/dev/shm", ec);
  if (!ec && space.available > 2 * needed) return "/dev/shm";
  return fs::temp_directory_path().string();
}

void write_random_file(const fs::path& path, std::uint64_t size, std::uint64_t seed) {
  std::vector<char> chunk(1 << 20);
  std::mt19937_64 rng(seed);
  std::ofstream out(path, std::ios::binary);
  for (std::uint64_t done = 0; done < size;) {
    for (std::size_t i = 0; i + 8 <= chunk.size(); i += 8) {
      std::uint64_t x = rng();
      std::memcpy(&chunk[i], &x, 8);
    }
    auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(chunk.size(), size - done));
    out.write(chunk.data(), n);
    done += static_cast<std::uint64_t>(n);
  }
  if (!out) throw Error(Errc::local_io, "cannot write sweep scratch file " + path.string());
}

// Runs `files` transfers at once and returns (seconds, failures).
std::pair<double, unsigned> run_cell(const SweepCell& cell, const std::vector<fs::path>& local,
                                     const std::vector<Url>& remote, ClientOptions options) {
  options.auto_streams = cell.streams == 0;  // -p auto: a column beside the fixed counts
  if (cell.streams != 0) options.streams = static_cast<std::uint16_t>(cell.streams);
  options.window = cell.window;
  options.congestion = cell.congestion;
  options.compression = cell.compression;
  options.overwrite = true;
  options.perf_interval = std::chrono::milliseconds(0);
  std::atomic<unsigned> failures{0};
  std::vector<std::thread> workers;
  auto start = Clock::now();
  for (unsigned i = 0; i < cell.files; ++i)
    workers.emplace_back([&, i] {
      try {
        if (cell.direction == Direction::put) put_file(local[i].string(), remote[i], options);
        else get_file(remote[i], (local[i].string() + ".back"), options);
      } catch (const Error&) {
        ++failures;
      }
    });
  for (auto& w : workers) w.join();
  return {std::chrono::duration<double>(Clock::now() - start).count(), failures.load()};
}

}  // namespace

std::vector<SweepCell> run_sweep(const Url& server_dir, const SweepOptions& o,
                                 const std::function<void(const SweepCell&)>& on_cell) {
  unsigned max_files = 0;
  for (unsigned f : o.files) max_files = std::max(max_files, f);
  fs::path scratch = fs::path(scratch_base(o, o.size * max_files * 2)) / ("pxfer-sweep-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  std::string prefix = server_dir.path;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  std::vector<fs::path> local;
  std::vector<Url> remote;
  for (unsigned i = 0; i < max_files; ++i) {
    local.push_back(scratch / ("file-" + std::to_string(i)));
    Url u = server_dir;
    u.path = prefix + ".pxfer-sweep-" + std::to_string(::getpid()) + "-" + std::to_string(i);
    u.trailing_slash = false;
    remote.push_back(u);
  }
  auto cleanup = [&] {
    for (const auto& u : remote) try {
        remove_remote(u, o.base.connect_timeout);
      } catch (const Error&) {
      }
    std::error_code ec;
    fs::remove_all(scratch, ec);
  };

  std::vector<SweepCell> cells;
  try {
    for (unsigned i = 0; i < max_files; ++i) write_random_file(local[i], o.size, 1000 + i);
    // Gets need the files on the server first.
    ClientOptions seed = o.base;
    seed.overwrite = true;
    seed.perf_interval = std::chrono::milliseconds(0);
    for (unsigned i = 0; i < max_files; ++i) put_file(local[i].string(), remote[i], seed);

    for (Direction d : o.directions)
      for (std::uint32_t w : o.windows)
        for (const auto& cc : o.congestions)
          for (const auto& z : o.compressions)
          for (unsigned f : o.files)
            for (unsigned s : o.streams) {
              SweepCell cell{d, w, cc, z, f, s, {}, 0, 0};
              for (unsigned r = 0; r < o.repeat; ++r) {
                auto [seconds, failed] = run_cell(cell, local, remote, o.base);
                ++cell.runs;
                cell.failures += failed;
                if (failed < f && seconds > 0)
                  cell.rates_mbit.push_back(static_cast<double>(o.size) * (f - failed) * 8 / seconds / 1e6);
              }
              if (on_cell) on_cell(cell);
              cells.push_back(std::move(cell));
            }
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
  return cells;
}

}  // namespace pxfer
