#include "io/space_reservation.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io/file_io.hpp"

namespace pxfer {
namespace {

// "cannot allocate SIZE bytes for PATH: reason (hint)", as every other file error (throw_io).
[[noreturn]] void throw_allocate(std::uint64_t size, const std::string& path, int err) {
  throw_io("cannot allocate " + std::to_string(size) + " bytes for", path, err);
}

}  // namespace

SpaceReservation::Steps SpaceReservation::default_steps(int fd) {
  Steps steps;
  struct statfs fs {};
  steps.background = ::fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
  return steps;
}

int SpaceReservation::allocate(std::uint64_t offset, std::uint64_t length) const {
  int rc = ::posix_fallocate(fd_, static_cast<off_t>(offset), static_cast<off_t>(length));
  // Not supported here: the file is only sized (below), as before there was a reservation.
  if (rc == EOPNOTSUPP || rc == EINVAL) rc = 0;
  return rc;
}

void SpaceReservation::start(int fd, std::uint64_t size, const std::string& path, Steps steps) {
  fd_ = fd;
  size_ = size;
  path_ = path;
  steps_ = steps;
  steps_.window = std::max<std::uint64_t>(steps_.window, 1);
  if (size == 0) return;
  reserved_ = 0;
  // Sized first, so that the steps below never change the size and a write anywhere is inside it.
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) throw_allocate(size, path, errno);
  const std::uint64_t first =
      std::min({size, steps_.window, steps.background ? std::max<std::uint64_t>(steps.first, 1) : steps_.window});
  if (int rc = allocate(0, first); rc != 0) throw_allocate(size, path, rc);
  reserved_ = first;
  if (reserved_ < size_ && steps_.background) thread_ = std::thread([this] { run(); });
}

// Under mutex_: how far the reservation should reach now, a window beyond the furthest write.
std::uint64_t SpaceReservation::wanted() const {
  return std::min(size_, written_to_ + steps_.window);
}

void SpaceReservation::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_ && error_ == 0 && reserved_ < size_) {
    changed_.wait(lock, [&] { return stopping_ || (writers_waiting_.load() == 0 && reserved_ < wanted()); });
    if (stopping_) break;
    const std::uint64_t length = std::min(wanted() - reserved_, std::max<std::uint64_t>(steps_.step, 1));
    if (int rc = allocate(reserved_, length); rc != 0)
      error_ = rc;
    else
      reserved_ += length;
    changed_.notify_all();
  }
}

SpaceReservation::Gate SpaceReservation::enter(std::uint64_t end) {
  ++writers_waiting_;
  std::unique_lock lock(mutex_);
  --writers_waiting_;
  if (reserved_ != UINT64_MAX) written_to_ = std::max(written_to_, end);
  // Without a thread, this write extends the reservation itself, a window at a time: once half
  // of the window ahead is used up, one fallocate call (it marks extents and returns at once).
  if (!thread_.joinable() && reserved_ < size_ && error_ == 0 && reserved_ < std::min(size_, end + steps_.window / 2)) {
    const std::uint64_t to = wanted();
    if (int rc = allocate(reserved_, to - reserved_); rc != 0) error_ = rc;
    else reserved_ = to;
  }
  if (reserved_ < end && error_ == 0 && !stopping_ && thread_.joinable()) {
    changed_.notify_all();  // the thread may be waiting for this writer to pass
    changed_.wait(lock, [&] { return reserved_ >= end || error_ != 0 || stopping_; });
  }
  if (reserved_ < end) {
    // Short of `end`: the reservation failed there, or it was stopped (the sink is going; no
    // write is expected then).
    int err = error_ != 0 ? error_ : ECANCELED;
    lock.unlock();
    changed_.notify_all();
    throw_allocate(size_, path_, err);
  }
  return Gate(*this, std::move(lock));
}

SpaceReservation::Gate::~Gate() {
  if (!lock_.owns_lock()) return;  // moved from
  lock_.unlock();
  owner_->changed_.notify_all();
}

void SpaceReservation::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t SpaceReservation::reserved() {
  std::lock_guard lock(mutex_);
  return reserved_;
}

}  // namespace pxfer
