#include "transfer_internal.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "net/tls.hpp"
#include "pxfer/core/rate_meter.hpp"

namespace pxfer::transfer {

namespace asio = boost::asio;

Transfer::Transfer(asio::any_io_executor ex, Role role, Settings settings, std::uint64_t size)
    : role_(role), settings_(settings), planner_(size, settings.block_size),
      ledger_(static_cast<std::size_t>(limits::block_count(size, settings.block_size))), done_(ex, 1), executor_(ex) {
  for (std::uint16_t i = 0; i < settings.streams; ++i) stats_.push_back(std::make_unique<StreamStats>());
  slots_.resize(settings.streams);
}

Transfer::~Transfer() = default;

std::shared_ptr<Transfer> Transfer::sending(asio::any_io_executor ex, FileSource source, Settings settings,
                                            std::optional<std::string> stored) {
  auto t = std::shared_ptr<Transfer>(new Transfer(ex, Role::send, settings, source.size()));
  t->source_.emplace(std::move(source));
  const FileSource* src = &*t->source_;
  if (stored)
    t->digest_ = FileDigest::known(std::move(*stored));
  else
    t->digest_ = FileDigest::create(settings.checksum, src->size(), settings.block_size,
                                    [src](std::uint64_t off, std::span<std::uint8_t> out) { src->read_at(off, out); });
  return t;
}

std::shared_ptr<Transfer> Transfer::receiving(asio::any_io_executor ex, std::unique_ptr<FileSink> sink,
                                              Settings settings) {
  auto t = std::shared_ptr<Transfer>(new Transfer(ex, Role::receive, settings, sink->size()));
  t->sink_ = std::move(sink);
  const FileSink* dst = t->sink_.get();
  t->digest_ = FileDigest::create(settings.checksum, dst->size(), settings.block_size,
                                  [dst](std::uint64_t off, std::span<std::uint8_t> out) { dst->read_at(off, out); });
  t->resumed_.assign(t->planner_.block_count(), false);
  if (t->sink_->journal()) t->verify_resumed_blocks();
  return t;
}

std::shared_ptr<Transfer> Transfer::already_committed(asio::any_io_executor ex, Settings settings, std::uint64_t size,
                                                     std::string checksum) {
  auto t = std::shared_ptr<Transfer>(new Transfer(ex, Role::receive, settings, size));
  t->committed_checksum_ = std::move(checksum);
  t->resumed_.assign(t->planner_.block_count(), true);
  for (std::size_t i = 0; i < t->planner_.block_count(); ++i) t->planner_.mark_done(t->planner_.block_at(i).offset);
  t->resumed_bytes_ = size;
  return t;
}

// A block counts as kept only if its bytes on disk still have the Adler-32 the journal recorded
// (a crash may have lost data the journal already listed); the read also feeds the file digest.
void Transfer::verify_resumed_blocks() {
  ResumeJournal& journal = *sink_->journal();
  if (journal.recorded_count() == 0) return;
  std::vector<std::uint8_t> buffer(largest_block());
  for (std::size_t i = 0; i < planner_.block_count(); ++i) {
    auto recorded = journal.recorded(i);
    if (!recorded) continue;
    Block b = planner_.block_at(i);
    std::span<std::uint8_t> data(buffer.data(), b.length);
    sink_->read_at(b.offset, data);
    if (adler32_of(data) != *recorded) {
      journal.forget(i);
      continue;
    }
    digest_->add_block(b.offset, data);
    planner_.mark_done(b.offset);
    ledger_.already_present(i);
    resumed_[i] = true;
    resumed_bytes_ += b.length;
  }
}

std::vector<wire::Have> Transfer::have_frames() const { return wire::split_have(resumed_); }

bool Transfer::apply_have(const wire::Have& have) {
  std::vector<std::uint8_t> buffer;
  for (std::size_t bit = 0; bit < have.bitmap.size() * 8; ++bit) {
    if (!(have.bitmap[bit / 8] & (1u << (bit % 8)))) continue;
    std::size_t index = have.first_block + bit;
    if (index >= planner_.block_count()) return false;
    Block b = planner_.block_at(index);
    if (!planner_.mark_done(b.offset)) continue;
    resumed_bytes_ += b.length;
    // The whole-file checksum still covers the blocks not sent: read them from the source, unless
    // the value is known already (a stored checksum) or there is none.
    if (!digest_->reads_bytes()) continue;
    buffer.resize(b.length);
    source_->read_at(b.offset, buffer);
    digest_->add_block(b.offset, buffer);
  }
  return true;
}

awaitable<void> Transfer::exchange_have(Connection& control) {
  if (role_ == Role::receive) {
    for (auto& frame : have_frames()) {
      wire::Message have = std::move(frame);
      co_await net::send_message(control, have);
    }
    co_return;
  }
  for (;;) {
    wire::Message message = co_await net::read_message(control);
    auto have = net::expect<wire::Have>(std::move(message), control.peer());
    if (!apply_have(have))
      throw Error(Errc::protocol, "HAVE names blocks beyond the end of the file, from " + control.peer());
    if (have.more == 0) break;
  }
  start_sending();
}

bool Transfer::nothing_to_move() const { return planner_.all_acknowledged(); }

void Transfer::start_sending() {
  ready_ = true;
  check_complete();
  wake_idle_streams();
}

std::uint64_t Transfer::bytes_moved() const {
  // The sender counts what the receiver acknowledged (written at its end), not what it handed to
  // its sockets: against a slow disk the socket buffers would otherwise show tens of MiB "done"
  // that are not. Blocks the receiver had already (resumed) were not moved by this attempt.
  if (role_ == Role::send) return planner_.acknowledged_bytes() - std::min(planner_.acknowledged_bytes(), resumed_bytes_.load());
  // The receiver counts what its streams read, less the blocks that came twice, and never more than
  // the file this attempt had to move: pxferd's bytes counter read 18 MiB for a 16 MiB put whose
  // last block was sent twice (Metrics.PrometheusEndpointCountsTransfersAndFailures, once under load).
  std::uint64_t total = 0;
  for (const auto& s : stats_) total += s->bytes.load(std::memory_order_relaxed);
  total -= std::min(total, repeated_bytes_.load());
  return std::min(total, file_size() - std::min(file_size(), resumed_bytes_.load()));
}

void Transfer::set_data_key(const MacKey& key) {
  std::lock_guard lock(mutex_);
  data_key_ = key;
}

MacKey Transfer::data_key() const {
  std::lock_guard lock(mutex_);
  return data_key_;
}

AttachProof Transfer::attach_proof_on(const Connection& conn, const wire::Token& token, std::uint16_t stream,
                                      const AttachNonce& nonce) const {
  if (!blocks_by_tls(conn)) return attach_proof(data_key(), token, stream, nonce);
  const auto binding = net::export_keying_material(conn, std::string(stream_exporter_label), token);
  return attach_proof(data_key(), token, stream, nonce, binding);
}

bool Transfer::take_attach_nonce(const AttachNonce& nonce) {
  std::lock_guard lock(mutex_);
  // A few per stream (reconnects, -p auto's streams coming back): a scan is cheaper than a set.
  if (attach_nonces_.size() >= limits::attach_nonces_per_transfer ||
      std::find(attach_nonces_.begin(), attach_nonces_.end(), nonce) != attach_nonces_.end())
    return false;
  attach_nonces_.push_back(nonce);
  return true;
}

bool Transfer::claim_stream(std::uint16_t index, std::shared_ptr<Connection> conn, std::string* why) {
  std::string broke;
  {
    std::lock_guard lock(mutex_);
    if (index >= slots_.size() || error_ || done_signalled_) {
      if (why) *why = "unknown or expired session token";
      return false;
    }
    // Never taken over: a live stream ends on its own (closed, or stalled past the stall timeout)
    // before its slot takes another connection, so no later connection can push it aside.
    if (slots_[index].connection) {
      if (why) *why = "stream " + std::to_string(index) + " of this transfer is still attached; try again once it ended";
      return false;
    }
    slots_[index].connection = conn;
    slots_[index].ever_attached = true;
    broke = std::exchange(slots_[index].broke, std::string());
    connections_.push_back(conn);
  }
  // Told once the replacement stands: a stream lost as the whole transfer fails is no news.
  if (!broke.empty()) tell_stream_event("stream " + std::to_string(index) + " reconnected after: " + broke);
  return true;
}

void Transfer::release_slot(std::uint16_t index, const Connection& conn) {
  {
    std::lock_guard lock(mutex_);
    if (slots_[index].connection.get() == &conn) slots_[index].connection.reset();
    // No longer this transfer's to close when it fails: a connection whose stream ended cleanly
    // may carry another transfer's stream by then.
    std::erase_if(connections_, [&](const std::weak_ptr<Connection>& w) {
      auto c = w.lock();
      return !c || c.get() == &conn;
    });
  }
  check_complete();
}

unsigned Transfer::attached_streams() const {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.connection != nullptr; }));
}

bool Transfer::slots_free(std::uint16_t first, std::uint16_t end) const {
  std::lock_guard lock(mutex_);
  for (std::size_t i = first; i < std::min<std::size_t>(end, slots_.size()); ++i)
    if (slots_[i].connection) return false;
  return true;
}

bool Transfer::over() const {
  std::lock_guard lock(mutex_);
  return error_.has_value() || done_signalled_;
}

// The data phase is over when every block is where it belongs and no stream is still moving.
void Transfer::check_complete() {
  if (role_ == Role::send && !ready_) return;
  if (!planner_.all_acknowledged()) return;
  {
    std::lock_guard lock(mutex_);
    for (const auto& slot : slots_)
      if (slot.connection) {
        if (role_ == Role::send && settings_.block_copies) let_go_of_redundant_streams();
        return;
      }
  }
  signal_done();
  cancel_attach_deadline();
}

// Every block is where it belongs (cap_block_copies), so whatever a stream still carries is a copy
// of a block acknowledged on another: a stream recovering from a burst loss would take seconds to
// deliver it for nothing. On the sender (every block acknowledged) that is a stream still holding
// unacknowledged blocks; on the receiver (COMMIT came, so the sender is done with every stream)
// a stream that has not seen its END. Its connection is reset; run_stream ends it without a
// failure (let_go_of). Caller holds mutex_.
void Transfer::let_go_of_redundant_streams() {
  if (streams_on_control_) return;  // never the control connection
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    auto& conn = slots_[i].connection;
    if (!conn || stats_[i]->outstanding.load() == 0 || stats_[i]->let_go.exchange(true)) continue;
    spdlog::debug("stream {}: every block it holds was acknowledged on another stream; closed", i);
    abort_on_close(conn->socket().native_handle());
    conn->close();
  }
}

void Transfer::give_up_stream(std::uint16_t index, const Error& why) {
  std::size_t given_up;
  {
    std::lock_guard lock(mutex_);
    given_up = ++given_up_;
  }
  // Only news when it ends the transfer: a slot refused because the transfer just finished is not.
  spdlog::debug("stream {} given up: {}", index, why.what());
  if (given_up == slots_.size())
    fail(Error(Errc::network, "every data stream failed; the last one: " + std::string(why.what())));
}

void Transfer::tell_stream_event(const std::string& text) {
  if (stream_event_listener_) stream_event_listener_(text);
}

void Transfer::wake_idle_streams() {
  std::vector<std::shared_ptr<asio::steady_timer>> timers;
  {
    std::lock_guard lock(mutex_);
    std::erase_if(idle_timers_, [](const auto& w) { return w.expired(); });
    for (auto& w : idle_timers_)
      if (auto t = w.lock()) timers.push_back(std::move(t));
  }
  // Each timer lives on its stream's strand: cancel it there.
  for (auto& t : timers) asio::post(t->get_executor(), [t] { t->cancel(); });
}

void Transfer::fail(const Error& error) {
  std::vector<std::shared_ptr<Connection>> to_close;
  {
    std::lock_guard lock(mutex_);
    if (error_) return;
    error_ = error;
    for (auto& w : connections_)
      if (auto c = w.lock()) to_close.push_back(std::move(c));
  }
  for (auto& c : to_close) c->close();
  // What a later attempt can build on stays (hidden, with its journal); a file that failed its
  // checksum, or a destination that must not be written, does not.
  if (sink_) {
    Errc code = error.code();
    sink_->abandon(keeps_partial(code));
  }
  signal_done();
  cancel_attach_deadline();
  wake_idle_streams();
}

void Transfer::cancel_attach_deadline() {
  if (auto timer = attach_timer_) asio::post(executor_, [timer] { timer->cancel(); });
}

void Transfer::signal_done() {
  std::lock_guard lock(mutex_);
  if (done_signalled_) return;
  done_signalled_ = true;
  done_.try_send(boost::system::error_code{});
}

void Transfer::arm_attach_deadline() {
  auto self = shared_from_this();
  attach_timer_ = std::make_shared<asio::steady_timer>(executor_);
  asio::co_spawn(
      executor_,
      [self, timer = attach_timer_]() -> awaitable<void> {
        const auto limit = self->settings_.attach_timeout;
        auto last_moving = Clock::now();
        for (;;) {
          timer->expires_after(std::min<std::chrono::milliseconds>(limit, std::chrono::milliseconds(1000)));
          auto [ec] = co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
          if (ec || self->over()) co_return;  // cancelled: the transfer ended first
          std::size_t attached = 0, moving = 0;
          {
            std::lock_guard lock(self->mutex_);
            for (const auto& slot : self->slots_) {
              attached += slot.ever_attached;
              moving += slot.connection != nullptr;
            }
          }
          if (moving > 0) last_moving = Clock::now();
          if (Clock::now() - last_moving < limit) continue;
          if (attached < self->slots_.size())
            self->fail(Error(Errc::network, "only " + std::to_string(attached) + " of " +
                                                std::to_string(self->slots_.size()) +
                                                " data streams connected in time (is a firewall dropping them?)"));
          else
            self->fail(Error(Errc::network, "no data stream for " + std::to_string(limit.count() / 1000) +
                                                " s: the client went away or the path is down"));
          co_return;
        }
      },
      asio::detached);
}

}  // namespace pxfer::transfer
