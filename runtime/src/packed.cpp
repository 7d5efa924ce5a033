// Packed messages: the data of a non-contiguous buffer travels as its packed byte stream, and
// the MPI layer's datatype engine (xmsgi_layout) packs each piece straight into the transport's
// buffer on the sending side and unpacks it straight out of the transport's buffer (or a
// chunk-sized bounce buffer) on the receiving side. No copy of the whole message is made on
// either side. docs/protocols.md, "Packed messages", has the exchanges.
#include "World.hpp"

#include "xmsg_internal.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

namespace {

// A remote read of a packed receive goes through a bounce buffer of this size: small enough to
// stay in the cache between the read and the unpack, large enough that the per-read cost (a
// process_vm_readv, an RDMA READ round trip, a tcp read request) is spread over many bytes.
constexpr uint64_t kPackedChunk = 128 << 10;

struct LayoutWriter final : transport::PayloadWriter {
  const xmsgi_layout* layout;
  uint64_t offset;
  LayoutWriter(const xmsgi_layout* l, uint64_t o) : layout(l), offset(o) {}
  void write(std::byte* dst, size_t n) override { layout->pack(offset, dst, n); }
};

// An orphaned packed request's layout (World::orphan).
struct PrivateStream final : xmsgi_layout {
  std::vector<std::byte> bytes;
  void pack(uint64_t offset, void* dst, uint64_t n) const override { std::memcpy(dst, bytes.data() + offset, n); }
  void unpack(uint64_t, const void*, uint64_t) const override {}
};
struct Sink final : xmsgi_layout {
  void pack(uint64_t, void* dst, uint64_t n) const override { std::memset(dst, 0, n); }
  void unpack(uint64_t, const void*, uint64_t) const override {}
};

}  // namespace

void World::orphan(Request* r) {
  if (r->done || !r->layout || r->owned_layout) return;
  if (r->type == ReqType::kSend) {
    auto copy = std::make_shared<PrivateStream>();
    copy->bytes.resize(r->bytes);
    if (r->bytes) r->layout->pack(0, copy->bytes.data(), r->bytes);
    r->owned_layout = std::move(copy);
  } else {
    r->owned_layout = std::make_shared<Sink>();
  }
  r->layout = r->owned_layout.get();
}

int World::isend_packed(uint32_t context, const Comm* comm, int dest, int tag, const xmsgi_layout* layout,
                        uint64_t len, Request** out, const char* func, bool synchronous) {
  Request* r = new_request(ReqType::kSend);
  r->context = context;
  r->comm = comm;
  r->peer = dest;
  r->tag = tag;
  r->layout = layout;
  r->bytes = len;
  r->handle = {};
  *out = r;
  if (dest == rank_) {
    // The matching receive may be contiguous or packed: hand it the packed stream.
    std::vector<std::byte> stream(len);
    if (len) layout->pack(0, stream.data(), len);
    on_message(header(context, tag, MessageKind::kEager, len), stream);
    complete(r, XMSG_SUCCESS);
    return XMSG_SUCCESS;
  }
  if (dead_[dest]) {
    release(r);
    *out = nullptr;
    return peer_failed_error(func, comm, dest);
  }
  Peer& p = peers_[dest];
  if (len <= p.eager_limit && !synchronous) {
    r->stage = SendStage::kEager;
    if (p.queue.empty() && try_send_packed_piece(dest, header(context, tag, MessageKind::kEager, len), r, 0, len)) {
      complete(r, XMSG_SUCCESS);
      return XMSG_SUCCESS;
    }
  } else {
    // Nothing is exposed: the RTS says so (kPackedFlag) and the receiver answers with a CTS.
    r->stage = SendStage::kRts;
    if (p.queue.empty() && try_send_rts(dest, r)) return XMSG_SUCCESS;
  }
  enqueue(dest, r);
  return XMSG_SUCCESS;
}

bool World::try_send_packed_piece(int peer, const WireHeader& h, const Request* r, uint64_t offset, uint64_t n) {
  LayoutWriter writer(r->layout, offset);
  return peers_[peer].transport->try_send_packed(peer, h, n, writer);
}

void World::unpack_eager(Request* r, std::span<const std::byte> payload) {
  const uint64_t n = std::min<uint64_t>(payload.size(), r->bytes);
  if (n) r->layout->unpack(0, payload.data(), n);
}

// The receiving side of a rendezvous where the sender's data is packed, or the receive is:
// a packed sender exposed nothing, so it streams fragments after a CTS (its transport packs
// them in place); a contiguous sender's buffer is read chunk by chunk into a bounce buffer
// and unpacked from there (over tcp the first chunk takes the head pushed behind the RTS).
void World::start_packed_receive(Request* r, int source, bool sender_packed) {
  if (!sender_packed && peers_[source].remote_read) {
    r->offset = 0;
    r->bounce.reset(new std::byte[std::min(kPackedChunk, r->status_bytes)]);
    r->read_done.req = r;
    r->read_done.world = this;
    r->read_done.callback = [](World* w, Request* req, bool ok, const std::string&) {
      w->on_packed_chunk_read(req, ok);
    };
    read_packed_chunks(r);
    return;
  }
  ask_for_stream(r, source);
}

// Reads chunk after chunk while the transport completes them inside read_remote() (CMA);
// one that completes later (RDMA READ, tcp) goes on from on_packed_chunk_read.
void World::read_packed_chunks(Request* r) {
  const int source = r->status_source;
  while (r->offset < r->status_bytes) {
    const uint64_t n = std::min(kPackedChunk, r->status_bytes - r->offset);
    r->chunk_reading = true;
    r->chunk_done = false;
    peers_[source].transport->read_remote(source, r->handle, r->offset, {r->bounce.get(), n}, r->read_done);
    r->chunk_reading = false;
    if (!r->chunk_done) return;
  }
  r->bounce.reset();
  send_control(source, MessageKind::kRendezvousFin, protocol::RendezvousFin{r->remote_req});
  complete(r, r->message_length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
}

void World::on_packed_chunk_read(Request* r, bool ok) {
  const int source = r->status_source;
  r->chunk_done = false;
  if (!ok) {
    r->bounce.reset();
    if (dead_[source]) {
      fail_request(r, source);
      return;
    }
    // The read was refused (CMA not permitted): the sender streams the whole message instead.
    peers_[source].remote_read = false;
    ask_for_stream(r, source);
    return;
  }
  const uint64_t n = std::min(kPackedChunk, r->status_bytes - r->offset);
  r->layout->unpack(r->offset, r->bounce.get(), n);
  r->offset += n;
  if (r->chunk_reading) {
    r->chunk_done = true;  // the loop in read_packed_chunks reads the next one
    return;
  }
  read_packed_chunks(r);
}

}  // namespace xmsg::rt
