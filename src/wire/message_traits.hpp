#pragma once
// One row per control message: its frame type, its name in logs, and the largest payload a peer
// may send for it (checked on the header, before anything is allocated). Every table of the codec
// reads these rows (type_of, max_payload, decode_message's dispatch, type_name), so a new message
// is its struct in wire.hpp, its fields in message_fields.hpp and one row here (plus, where its
// values have a range, a `valid` overload in codec.cpp).
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <utility>
#include <variant>

#include "wire/wire.hpp"

namespace pxfer::wire::traits {

template <class M> struct Traits;

// A row's type and payload limit; the name is the row's own member.
template <FrameType T, std::uint32_t Max>
struct Row {
  static constexpr FrameType type = T;
  static constexpr std::uint32_t max_payload = Max;
};

// Control messages carry at most max_control_payload; their text fields have smaller limits of
// their own (checked while decoding). Fixed-size messages are held to their size.
template <> struct Traits<Hello> : Row<FrameType::hello, max_control_payload> { static constexpr const char* name = "HELLO"; };
template <> struct Traits<HelloOk> : Row<FrameType::hello_ok, max_control_payload> { static constexpr const char* name = "HELLO_OK"; };
template <> struct Traits<Open> : Row<FrameType::open, max_control_payload> { static constexpr const char* name = "OPEN"; };
template <> struct Traits<OpenOk> : Row<FrameType::open_ok, max_control_payload> { static constexpr const char* name = "OPEN_OK"; };
template <> struct Traits<Attach> : Row<FrameType::attach, token_size + 2 + attach_nonce_size + attach_proof_size> { static constexpr const char* name = "ATTACH"; };
template <> struct Traits<AttachOk> : Row<FrameType::attach_ok, 8> { static constexpr const char* name = "ATTACH_OK"; };
template <> struct Traits<Ack> : Row<FrameType::ack, 12> { static constexpr const char* name = "ACK"; };
template <> struct Traits<End> : Row<FrameType::end, 0> { static constexpr const char* name = "END"; };
template <> struct Traits<Commit> : Row<FrameType::commit, max_control_payload> { static constexpr const char* name = "COMMIT"; };
template <> struct Traits<Result> : Row<FrameType::result, max_control_payload> { static constexpr const char* name = "RESULT"; };
template <> struct Traits<ErrorMsg> : Row<FrameType::error, max_control_payload> { static constexpr const char* name = "ERROR"; };
template <> struct Traits<Ping> : Row<FrameType::ping, 8> { static constexpr const char* name = "PING"; };
template <> struct Traits<Pong> : Row<FrameType::pong, 8> { static constexpr const char* name = "PONG"; };
template <> struct Traits<Stats> : Row<FrameType::stats, max_control_payload> { static constexpr const char* name = "STATS"; };
template <> struct Traits<InfoRequest> : Row<FrameType::info_request, 0> { static constexpr const char* name = "INFO_REQUEST"; };
template <> struct Traits<Info> : Row<FrameType::info, max_control_payload> { static constexpr const char* name = "INFO"; };
template <> struct Traits<Remove> : Row<FrameType::remove, max_control_payload> { static constexpr const char* name = "REMOVE"; };
template <> struct Traits<Done> : Row<FrameType::done, 0> { static constexpr const char* name = "DONE"; };
template <> struct Traits<List> : Row<FrameType::list, max_control_payload> { static constexpr const char* name = "LIST"; };
template <> struct Traits<Listing> : Row<FrameType::listing, max_control_payload> { static constexpr const char* name = "LISTING"; };
template <> struct Traits<Mkdir> : Row<FrameType::mkdir, max_control_payload> { static constexpr const char* name = "MKDIR"; };
template <> struct Traits<Queued> : Row<FrameType::queued, 12> { static constexpr const char* name = "QUEUED"; };
template <> struct Traits<Auth> : Row<FrameType::auth, max_control_payload> { static constexpr const char* name = "AUTH"; };
template <> struct Traits<AuthOk> : Row<FrameType::auth_ok, max_control_payload> { static constexpr const char* name = "AUTH_OK"; };
template <> struct Traits<Have> : Row<FrameType::have, max_control_payload> { static constexpr const char* name = "HAVE"; };
template <> struct Traits<Sum> : Row<FrameType::sum, max_control_payload> { static constexpr const char* name = "SUM"; };
template <> struct Traits<SumOk> : Row<FrameType::sum_ok, max_control_payload> { static constexpr const char* name = "SUM_OK"; };
template <> struct Traits<SetAttributes> : Row<FrameType::set_attributes, max_control_payload> { static constexpr const char* name = "SET_ATTRIBUTES"; };
template <> struct Traits<Stat> : Row<FrameType::stat, max_control_payload> { static constexpr const char* name = "STAT"; };
template <> struct Traits<StatOk> : Row<FrameType::stat_ok, max_control_payload> { static constexpr const char* name = "STAT_OK"; };
template <> struct Traits<Rename> : Row<FrameType::rename, max_control_payload> { static constexpr const char* name = "RENAME"; };
template <> struct Traits<RemoveTree> : Row<FrameType::remove_tree, max_control_payload> { static constexpr const char* name = "REMOVE_TREE"; };
template <> struct Traits<ListChildren> : Row<FrameType::list_children, max_control_payload> { static constexpr const char* name = "LIST_CHILDREN"; };
template <> struct Traits<AttachChallenge> : Row<FrameType::attach_challenge, attach_nonce_size> { static constexpr const char* name = "ATTACH_CHALLENGE"; };
template <> struct Traits<AttachProof> : Row<FrameType::attach_proof, attach_proof_size> { static constexpr const char* name = "ATTACH_PROOF"; };
template <> struct Traits<TpcGrantRequest> : Row<FrameType::tpc_grant_request, max_control_payload> { static constexpr const char* name = "TPC_GRANT_REQUEST"; };
template <> struct Traits<TpcGrant> : Row<FrameType::tpc_grant, max_control_payload> { static constexpr const char* name = "TPC_GRANT"; };
template <> struct Traits<TpcStart> : Row<FrameType::tpc_start, max_control_payload> { static constexpr const char* name = "TPC_START"; };
template <> struct Traits<TpcProgress> : Row<FrameType::tpc_progress, max_control_payload> { static constexpr const char* name = "TPC_PROGRESS"; };
template <> struct Traits<TpcDone> : Row<FrameType::tpc_done, max_control_payload> { static constexpr const char* name = "TPC_DONE"; };
template <> struct Traits<PutSmall> : Row<FrameType::put_small, max_small_payload> { static constexpr const char* name = "PUT_SMALL"; };
template <> struct Traits<PutSmallOk> : Row<FrameType::put_small_ok, max_control_payload> { static constexpr const char* name = "PUT_SMALL_OK"; };
template <> struct Traits<GetSmall> : Row<FrameType::get_small, max_control_payload> { static constexpr const char* name = "GET_SMALL"; };
template <> struct Traits<GetSmallOk> : Row<FrameType::get_small_ok, max_small_payload> { static constexpr const char* name = "GET_SMALL_OK"; };
template <> struct Traits<SmallChannel> : Row<FrameType::small_channel, 0> { static constexpr const char* name = "SMALL_CHANNEL"; };
template <> struct Traits<SmallChannelOk> : Row<FrameType::small_channel_ok, token_size> { static constexpr const char* name = "SMALL_CHANNEL_OK"; };
template <> struct Traits<SmallData> : Row<FrameType::small_data, 4 + block_tag_size + 4 + max_small_file> { static constexpr const char* name = "SMALL_DATA"; };
template <> struct Traits<StreamOpen> : Row<FrameType::stream_open, max_control_payload> { static constexpr const char* name = "STREAM_OPEN"; };
template <> struct Traits<StreamOpenOk> : Row<FrameType::stream_open_ok, 20> { static constexpr const char* name = "STREAM_OPEN_OK"; };
template <> struct Traits<StreamRead> : Row<FrameType::stream_read, 16> { static constexpr const char* name = "STREAM_READ"; };
template <> struct Traits<StreamData> : Row<FrameType::stream_data, 4 + 8 + 1 + 4 + max_stream_chunk> { static constexpr const char* name = "STREAM_DATA"; };
template <> struct Traits<StreamWrite> : Row<FrameType::stream_write, 4 + 8 + 4 + max_stream_chunk> { static constexpr const char* name = "STREAM_WRITE"; };
template <> struct Traits<StreamClose> : Row<FrameType::stream_close, 4> { static constexpr const char* name = "STREAM_CLOSE"; };
template <> struct Traits<Retire> : Row<FrameType::retire, 0> { static constexpr const char* name = "RETIRE"; };

// Two messages on one frame type (as two branches once chose 34 and 35 each) do not compile.
template <std::size_t... I>
constexpr bool distinct_types(std::index_sequence<I...>) {
  constexpr FrameType types[] = {Traits<std::variant_alternative_t<I, Message>>::type...};
  for (std::size_t i = 0; i < sizeof...(I); ++i) {
    if (types[i] == FrameType::block) return false;
    for (std::size_t j = i + 1; j < sizeof...(I); ++j)
      if (types[i] == types[j]) return false;
  }
  return true;
}
static_assert(distinct_types(std::make_index_sequence<std::variant_size_v<Message>>{}),
              "two messages share a frame type (or one uses BLOCK's): give each its own number in wire.hpp");

// Calls f(M{}) for the message whose frame type is `type` and returns true; false when no
// message has that type (BLOCK is no message: its frames go through decode_block_header).
template <class F, std::size_t... I>
bool with_message_type(FrameType type, F&& f, std::index_sequence<I...>) {
  return ((Traits<std::variant_alternative_t<I, Message>>::type == type
               ? (f(std::variant_alternative_t<I, Message>{}), true)
               : false) ||
          ...);
}
template <class F>
bool with_message_type(FrameType type, F&& f) {
  return with_message_type(type, std::forward<F>(f), std::make_index_sequence<std::variant_size_v<Message>>{});
}

}  // namespace pxfer::wire::traits
