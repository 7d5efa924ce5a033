// Seeded random stress: every rank derives the same global plan of messages (source,
// destination, tag, size) from the seed, sends its part through windows of isends and
// receives its part with windows of ANY_SOURCE/ANY_TAG receives, checking every byte, the
// per-sender order and the count. Exit code 0 only when every rank saw exactly the plan.
//   stress <messages> <seed>
#include <xmsg/xmsg.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

namespace {

struct Planned {
  uint32_t id;
  uint16_t src, dst;
  int32_t tag;
  uint32_t size;
};

uint8_t byte_of(uint32_t id, uint64_t i) {
  uint64_t x = (uint64_t{id} + 1) * 0x9E3779B97F4A7C15ull + i * 0xC2B2AE3D27D4EB4Full;
  return static_cast<uint8_t>(x >> 57 ^ x);
}

uint32_t random_size(std::mt19937_64& g) {
  const uint64_t r = g() % 1000;
  if (r < 700) return static_cast<uint32_t>(g() % 65);       // one or two cells
  if (r < 960) return static_cast<uint32_t>(g() % 2048);     // eager
  if (r < 995) return static_cast<uint32_t>(g() % 40000);    // around the eager limit
  return static_cast<uint32_t>(65536 + g() % 300000);        // rendezvous, fragmented
}

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      std::fprintf(stderr, "[rank %d] ", rank);                 \
      std::fprintf(stderr, __VA_ARGS__);                        \
      std::fprintf(stderr, "\n");                               \
      std::exit(1);                                             \
    }                                                           \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const uint64_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1000000;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 12345;
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) {
    std::fprintf(stderr, "xmsg_init: %s\n", xmsg_last_error_message());
    return 2;
  }
  int rank = 0, size = 1;
  xmsg_comm_rank(XMSG_COMM_WORLD, &rank);
  xmsg_comm_size(XMSG_COMM_WORLD, &size);

  // The plan, identical on every rank; only our own sends and receives are kept.
  std::mt19937_64 g(seed);
  std::vector<Planned> sends;
  std::vector<std::deque<Planned>> expect(size);  // per source, in send order
  uint64_t to_receive = 0;
  for (uint64_t k = 0; k < total; ++k) {
    Planned p;
    p.id = static_cast<uint32_t>(k);
    p.src = static_cast<uint16_t>(g() % size);
    p.dst = static_cast<uint16_t>(g() % size);
    p.tag = static_cast<int32_t>(g() % 8);
    p.size = random_size(g);
    if (p.src == rank) sends.push_back(p);
    if (p.dst == rank) {
      expect[p.src].push_back(p);
      ++to_receive;
    }
  }

  constexpr size_t kWindow = 32;
  constexpr size_t kMaxSize = 65536 + 300000;
  struct SendSlot {
    xmsg_request_t req = XMSG_REQUEST_NULL;
    std::vector<uint8_t> buf;
  };
  struct RecvSlot {
    xmsg_request_t req = XMSG_REQUEST_NULL;
    std::vector<uint8_t> buf = std::vector<uint8_t>(kMaxSize);
  };
  std::vector<SendSlot> sslots(kWindow);
  std::deque<RecvSlot*> posted;  // in posting order = matching order
  std::vector<RecvSlot> rslots(kWindow);
  std::vector<RecvSlot*> free_r;
  for (auto& s : rslots) free_r.push_back(&s);

  size_t next_send = 0;
  uint64_t received = 0, posted_count = 0;
  size_t active_sends = 0;
  while (next_send < sends.size() || active_sends > 0 || received < to_receive) {
    // Top up sends.
    for (auto& s : sslots) {
      if (s.req != XMSG_REQUEST_NULL) {
        int flag = 0;
        CHECK(xmsg_test(&s.req, &flag, XMSG_STATUS_IGNORE) == XMSG_SUCCESS, "test send: %s", xmsg_last_error_message());
        if (!flag) continue;
        --active_sends;
      }
      if (next_send >= sends.size()) continue;
      const Planned& p = sends[next_send++];
      s.buf.resize(p.size);
      for (uint32_t i = 0; i < p.size; ++i) s.buf[i] = byte_of(p.id, i);
      CHECK(xmsg_isend(s.buf.data(), p.size, XMSG_BYTE, p.dst, p.tag, XMSG_COMM_WORLD, &s.req) == XMSG_SUCCESS,
            "isend: %s", xmsg_last_error_message());
      ++active_sends;
    }
    // Top up receives.
    while (!free_r.empty() && posted_count < to_receive) {
      RecvSlot* r = free_r.back();
      free_r.pop_back();
      CHECK(xmsg_irecv(r->buf.data(), kMaxSize, XMSG_BYTE, XMSG_ANY_SOURCE, XMSG_ANY_TAG, XMSG_COMM_WORLD, &r->req) ==
                XMSG_SUCCESS,
            "irecv: %s", xmsg_last_error_message());
      posted.push_back(r);
      ++posted_count;
    }
    // Check completed receives, oldest first.
    while (!posted.empty()) {
      RecvSlot* r = posted.front();
      int flag = 0;
      xmsg_status_t st;
      CHECK(xmsg_test(&r->req, &flag, &st) == XMSG_SUCCESS, "test recv: %s", xmsg_last_error_message());
      if (!flag) break;
      posted.pop_front();
      CHECK(st.source >= 0 && st.source < size, "bad source %d", st.source);
      CHECK(!expect[st.source].empty(), "unexpected extra message from %d", st.source);
      const Planned p = expect[st.source].front();
      expect[st.source].pop_front();
      CHECK(st.tag == p.tag && st.bytes == p.size, "from %d: got tag %d size %lld, expected message %u tag %d size %u",
            st.source, st.tag, static_cast<long long>(st.bytes), p.id, p.tag, p.size);
      for (uint32_t i = 0; i < p.size; ++i)
        CHECK(r->buf[i] == byte_of(p.id, i), "message %u from %d: byte %u differs", p.id, st.source, i);
      ++received;
      free_r.push_back(r);
    }
  }
  for (int s = 0; s < size; ++s) CHECK(expect[s].empty(), "%zu messages from %d never arrived", expect[s].size(), s);
  std::printf("[rank %d] sent %zu, received %llu messages: all bytes, tags and orders correct\n", rank, sends.size(),
              static_cast<unsigned long long>(received));
  return xmsg_finalize() == XMSG_SUCCESS ? 0 : 3;
}
