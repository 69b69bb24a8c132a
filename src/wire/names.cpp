// Names of frame types and decode results, for messages and logs.
#include "pxfer/wire.hpp"

namespace pxfer::wire {

const char* to_string(DecodeStatus status) noexcept {
  switch (status) {
    case DecodeStatus::ok: return "ok";
    case DecodeStatus::truncated: return "truncated frame";
    case DecodeStatus::unknown_type: return "unknown frame type";
    case DecodeStatus::too_long: return "length over limit";
    case DecodeStatus::bad_field: return "invalid field value";
    case DecodeStatus::trailing_bytes: return "trailing bytes after message";
  }
  return "?";
}

const char* type_name(FrameType type) noexcept {
  switch (type) {
    case FrameType::hello: return "HELLO";
    case FrameType::hello_ok: return "HELLO_OK";
    case FrameType::open: return "OPEN";
    case FrameType::open_ok: return "OPEN_OK";
    case FrameType::attach: return "ATTACH";
    case FrameType::attach_ok: return "ATTACH_OK";
    case FrameType::block: return "BLOCK";
    case FrameType::ack: return "ACK";
    case FrameType::end: return "END";
    case FrameType::commit: return "COMMIT";
    case FrameType::result: return "RESULT";
    case FrameType::error: return "ERROR";
    case FrameType::ping: return "PING";
    case FrameType::pong: return "PONG";
    case FrameType::stats: return "STATS";
    case FrameType::info_request: return "INFO_REQUEST";
    case FrameType::info: return "INFO";
    case FrameType::queued: return "QUEUED";
    case FrameType::remove: return "REMOVE";
    case FrameType::done: return "DONE";
    case FrameType::list: return "LIST";
    case FrameType::listing: return "LISTING";
    case FrameType::mkdir: return "MKDIR";
    case FrameType::have: return "HAVE";
    case FrameType::auth: return "AUTH";
    case FrameType::auth_ok: return "AUTH_OK";
    case FrameType::sum: return "SUM";
    case FrameType::sum_ok: return "SUM_OK";
    case FrameType::set_attributes: return "SET_ATTRIBUTES";
    case FrameType::stat: return "STAT";
    case FrameType::stat_ok: return "STAT_OK";
    case FrameType::rename: return "RENAME";
    case FrameType::remove_tree: return "REMOVE_TREE";
    case FrameType::list_children: return "LIST_CHILDREN";
    case FrameType::attach_challenge: return "ATTACH_CHALLENGE";
    case FrameType::attach_proof: return "ATTACH_PROOF";
  }
  return "UNKNOWN";
}

}  // namespace pxfer::wire
