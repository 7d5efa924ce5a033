// Helpers shared by the multi-rank point-to-point tests.
#pragma once

#include <xmsg/xmsg.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#define XMSG_OK(call)                                                                   \
  do {                                                                                  \
    int xmsg_rc_ = (call);                                                              \
    ASSERT_EQ(xmsg_rc_, XMSG_SUCCESS) << #call << ": " << xmsg_last_error_message();    \
  } while (0)

inline int world_rank() {
  int r = -1;
  xmsg_comm_rank(XMSG_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = -1;
  xmsg_comm_size(XMSG_COMM_WORLD, &s);
  return s;
}

// Barrier built on point-to-point only (the collectives live in another component):
// everyone reports to rank 0, rank 0 releases everyone. Uses a private communicator so it
// never matches a test's traffic.
inline void p2p_barrier() {
  static xmsg_comm_t comm = XMSG_COMM_NULL;
  if (comm == XMSG_COMM_NULL) {
    ASSERT_EQ(xmsg_comm_dup(XMSG_COMM_WORLD, &comm), XMSG_SUCCESS);
  }
  const int rank = world_rank(), size = world_size();
  char token = 0;
  if (rank == 0) {
    for (int i = 1; i < size; ++i) XMSG_OK(xmsg_recv(&token, 1, XMSG_CHAR, XMSG_ANY_SOURCE, 0, comm, nullptr));
    for (int i = 1; i < size; ++i) XMSG_OK(xmsg_send(&token, 1, XMSG_CHAR, i, 1, comm));
  } else {
    XMSG_OK(xmsg_send(&token, 1, XMSG_CHAR, 0, 0, comm));
    XMSG_OK(xmsg_recv(&token, 1, XMSG_CHAR, 0, 1, comm, nullptr));
  }
}

// Deterministic content: byte i of message `id` from `src`.
inline uint8_t pattern(uint64_t id, int src, uint64_t i) {
  uint64_t x = (id + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(src) << 40) ^ (i * 0xff51afd7ed558ccdull);
  return static_cast<uint8_t>(x >> 56);
}
inline std::vector<uint8_t> make_payload(uint64_t id, int src, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = pattern(id, src, i);
  return v;
}
