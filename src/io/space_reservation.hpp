#pragma once
// The space of a file being received, reserved before any write needs it, and the one-writer
// gate the writes pass through (FileSink).
//
// Why not a single fallocate up front, as on every other file system: on tmpfs fallocate
// allocates every page of the file, serially, while the streams wait (0.2 s per GiB on an idle
// machine here, 0.35-0.7 s at load: docs/performance.md sections 1, 6 and 17). The pages cost
// the same CPU whoever allocates them; what matters is that the transfer waits for all of them
// first. So on tmpfs the first step (32 MiB) is reserved at once and the rest in a thread of its
// own, in steps ahead of the writes: every write still lands in space reserved before it, and a
// write whose range is not reserved yet waits for it.
//
// On every file system the reservation stays within limits::reservation_window of the furthest
// write: a claimed size is not space taken until the bytes come (issue 34: one idle OPEN of a
// huge claim filled a file system for everyone else). Elsewhere than tmpfs the writes themselves
// extend it, a window at a time. So a disk that others fill can fail a transfer halfway, within a
// window of its last write, as it fails any other writer.
//
// The steps and the writes exclude each other in user space. Both take the file's inode lock in
// the kernel, and a writer that finds it held by fallocate spins on the CPU (rwsem_spin_on_owner)
// that the reservation and the sender need: the first attempt at reserving in steps, without this
// gate, cost more CPU than it saved (section 6). A writer waiting for the gate sleeps, and a step
// is never taken while a writer waits.
#include "pxfer/io/layer.hpp"
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "pxfer/core/limits.hpp"

namespace pxfer {

class SpaceReservation {
 public:
  struct Steps {
    std::uint64_t first = 32ull << 20;  // reserved before the constructor returns
    std::uint64_t step = 8ull << 20;    // each step of the thread: ~1.6 ms of holding the gate
    bool background = true;             // false: each step in the write that needs it
    // Reserved at most this far ahead of the furthest write (limits.hpp); the first step too.
    std::uint64_t window = limits::reservation_window;
  };
  SpaceReservation() = default;
  SpaceReservation(const SpaceReservation&) = delete;
  SpaceReservation& operator=(const SpaceReservation&) = delete;
  ~SpaceReservation() { stop(); }

  // Reserves [0, size) of `fd` (`path` for messages). The background thread is used on tmpfs
  // only (elsewhere fallocate marks extents without touching data and returns at once). Throws
  // local_io when even the first step does not fit. Where fallocate is not supported the file is
  // only sized.
  void start(int fd, std::uint64_t size, const std::string& path) { start(fd, size, path, default_steps(fd)); }
  void start(int fd, std::uint64_t size, const std::string& path, Steps steps);

  // Held around one write of [.., end): the gate, once [0, end) is reserved. Throws (local_io,
  // "No space left on device") when the reservation failed before reaching it.
  class Gate {
   public:
    Gate(Gate&&) = default;
    ~Gate();

   private:
    friend class SpaceReservation;
    Gate(SpaceReservation& owner, std::unique_lock<std::mutex> lock) : owner_(&owner), lock_(std::move(lock)) {}
    SpaceReservation* owner_;
    std::unique_lock<std::mutex> lock_;
  };
  Gate enter(std::uint64_t end);

  // Stops the thread (the file is committed or given up) and waits for it.
  void stop() noexcept;

  // [0, reserved()) is reserved now (tests).
  std::uint64_t reserved();

 private:
  static Steps default_steps(int fd);
  int allocate(std::uint64_t offset, std::uint64_t length) const;  // 0 or an errno
  void run();
  std::uint64_t wanted() const;

  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string path_;
  Steps steps_;
  std::mutex mutex_;  // one pwrite or one step at a time
  std::condition_variable changed_;
  // Under mutex_. Until start() every write passes: a sink that reserves nothing (a small file,
  // written once right after it is created) still uses the gate.
  std::uint64_t reserved_ = UINT64_MAX;
  std::uint64_t written_to_ = 0;  // under mutex_: the furthest end a write asked for
  int error_ = 0;               // under mutex_: why the reservation stopped short
  bool stopping_ = false;       // under mutex_
  std::atomic<int> writers_waiting_{0};  // writers that want the gate: a step gives way to them
  std::thread thread_;
};

}  // namespace pxfer
