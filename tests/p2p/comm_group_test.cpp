// xmsg_comm_create_group and xmsg_comm_create_from_world: collective over the listed ranks only,
// in the listed order, while other ranks create their own groups at the same time.
#include "p2p_util.hpp"

#include <xmsg/xmsg.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace {

// Checks `comm`, made from the world ranks `members` in that order: its rank and size, a ring
// exchange between its ranks while the same peers send decoys with the same tag on the world
// (which its receives must not take), a barrier, and allreduces that rebuild the member list.
void check_group(xmsg_comm_t comm, const std::vector<int>& members, const std::string& what) {
  SCOPED_TRACE(what);
  const int me = world_rank();
  const int n = static_cast<int>(members.size());
  const auto pos = std::find(members.begin(), members.end(), me);
  ASSERT_NE(pos, members.end());
  const int expected_rank = static_cast<int>(pos - members.begin());
  int rank = -1, size = -1;
  XMSG_OK(xmsg_comm_rank(comm, &rank));
  XMSG_OK(xmsg_comm_size(comm, &size));
  ASSERT_EQ(rank, expected_rank);
  ASSERT_EQ(size, n);

  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  const int tag = 5;
  int decoy = -1 - me, mine = me, got = -100, got_decoy = -100;
  xmsg_request_t reqs[2];
  XMSG_OK(xmsg_isend(&decoy, 1, XMSG_INT, members[next], tag, XMSG_COMM_WORLD, &reqs[0]));
  XMSG_OK(xmsg_isend(&mine, 1, XMSG_INT, next, tag, comm, &reqs[1]));
  xmsg_status_t st{};
  XMSG_OK(xmsg_recv(&got, 1, XMSG_INT, prev, tag, comm, &st));
  EXPECT_EQ(got, members[prev]) << "the group's receive took another message";
  EXPECT_EQ(st.source, prev);
  EXPECT_EQ(st.tag, tag);
  XMSG_OK(xmsg_recv(&got_decoy, 1, XMSG_INT, members[prev], tag, XMSG_COMM_WORLD, &st));
  EXPECT_EQ(got_decoy, -1 - members[prev]);
  XMSG_OK(xmsg_waitall(2, reqs, XMSG_STATUSES_IGNORE));

  XMSG_OK(xmsg_barrier(comm));
  int sum = 0;
  XMSG_OK(xmsg_allreduce(&mine, &sum, 1, XMSG_INT, XMSG_SUM, comm));
  EXPECT_EQ(sum, std::accumulate(members.begin(), members.end(), 0));
  // Slot r of the table holds comm rank r's world rank: the group's order as its ranks see it.
  std::vector<int> table(static_cast<size_t>(n), 0), world_of(static_cast<size_t>(n), -1);
  table[static_cast<size_t>(rank)] = me + 1;
  XMSG_OK(xmsg_allreduce(table.data(), world_of.data(), n, XMSG_INT, XMSG_SUM, comm));
  for (int& w : world_of) --w;
  EXPECT_EQ(world_of, members);
}

// Ring traffic on `a` and on `b` between the same world ranks with the same tag, `a`'s sent
// first: each receive must take the message of its own communicator (they must have different
// context ids). The calling rank's ring neighbours in `a_members` must be members of `b`.
void expect_apart(xmsg_comm_t a, const std::vector<int>& a_members, xmsg_comm_t b, const std::vector<int>& b_members,
                  const std::string& what) {
  SCOPED_TRACE(what);
  const int me = world_rank();
  auto index_in = [](const std::vector<int>& v, int w) {
    return static_cast<int>(std::find(v.begin(), v.end(), w) - v.begin());
  };
  const int n = static_cast<int>(a_members.size());
  const int i = index_in(a_members, me);
  const int next = a_members[static_cast<size_t>((i + 1) % n)], prev = a_members[static_cast<size_t>((i + n - 1) % n)];
  int on_a = -1 - me, on_b = me, got_a = -100, got_b = -100;
  xmsg_request_t reqs[2];
  XMSG_OK(xmsg_isend(&on_a, 1, XMSG_INT, index_in(a_members, next), 9, a, &reqs[0]));
  XMSG_OK(xmsg_isend(&on_b, 1, XMSG_INT, index_in(b_members, next), 9, b, &reqs[1]));
  XMSG_OK(xmsg_recv(&got_b, 1, XMSG_INT, index_in(b_members, prev), 9, b, XMSG_STATUS_IGNORE));
  XMSG_OK(xmsg_recv(&got_a, 1, XMSG_INT, index_in(a_members, prev), 9, a, XMSG_STATUS_IGNORE));
  XMSG_OK(xmsg_waitall(2, reqs, XMSG_STATUSES_IGNORE));
  EXPECT_EQ(got_b, prev) << "a receive on the second communicator took the first one's message";
  EXPECT_EQ(got_a, -1 - prev);
}

std::vector<int> world_ranks_where(bool (*pick)(int)) {
  std::vector<int> v;
  for (int r = 0; r < world_size(); ++r)
    if (pick(r)) v.push_back(r);
  return v;
}

void expect_error(int code, int expected, const std::string& needle, const std::string& what) {
  EXPECT_EQ(code, expected) << what << ": " << xmsg_last_error_message();
  EXPECT_NE(std::string(xmsg_last_error_message()).find(needle), std::string::npos)
      << what << ": message \"" << xmsg_last_error_message() << "\" does not mention \"" << needle << "\"";
}

}  // namespace

TEST(CommCreateGroup, OddsReversedWhileEvensBuildTheirOwn) {
  const int me = world_rank();
  std::vector<int> odds = world_ranks_where([](int r) { return r % 2 == 1; });
  std::reverse(odds.begin(), odds.end());
  const std::vector<int> evens = world_ranks_where([](int r) { return r % 2 == 0; });
  xmsg_comm_t group = XMSG_COMM_NULL, extra = XMSG_COMM_NULL;
  if (me % 2 == 1) {
    XMSG_OK(xmsg_comm_create_group(XMSG_COMM_WORLD, static_cast<int>(odds.size()), odds.data(), 11, &group));
    check_group(group, odds, "odd ranks, reversed");
  } else {
    XMSG_OK(xmsg_comm_create_from_world(static_cast<int>(evens.size()), evens.data(), 12, &group));
    check_group(group, evens, "even ranks, from world");
    // The evens move on by one more communicator, so the two halves' next context ids differ.
    XMSG_OK(xmsg_comm_dup(group, &extra));
    check_group(extra, evens, "dup of the even ranks' group");
  }
  // Every rank in one group, led by an odd rank, whose next context id is below the evens': the
  // id agreed must be above every member's, not the one the odd leader would pick alone (which
  // the evens' `extra` holds).
  std::vector<int> odds_first = odds;
  odds_first.insert(odds_first.end(), evens.begin(), evens.end());
  xmsg_comm_t mixed = XMSG_COMM_NULL;
  XMSG_OK(xmsg_comm_create_from_world(world_size(), odds_first.data(), 13, &mixed));
  check_group(mixed, odds_first, "every rank, odd ranks first");
  if (me % 2 == 0) expect_apart(extra, evens, mixed, odds_first, "the evens' dup and the group of everyone");
  expect_apart(group, me % 2 == 1 ? odds : evens, mixed, odds_first, "each half's group and the group of everyone");
  XMSG_OK(xmsg_comm_free(&mixed));
  // A communicator over everyone made by dup has to agree a context id above every member's
  // too: traffic on it must not reach the groups, which stay alive (same tags on all of them).
  xmsg_comm_t all = XMSG_COMM_NULL;
  XMSG_OK(xmsg_comm_dup(XMSG_COMM_WORLD, &all));
  std::vector<int> everyone(static_cast<size_t>(world_size()));
  std::iota(everyone.begin(), everyone.end(), 0);
  check_group(all, everyone, "dup of the world after the groups");
  check_group(group, me % 2 == 1 ? odds : evens, "the group again, after the dup of the world");
  XMSG_OK(xmsg_comm_free(&all));
  if (extra != XMSG_COMM_NULL) XMSG_OK(xmsg_comm_free(&extra));
  XMSG_OK(xmsg_comm_free(&group));
  EXPECT_EQ(group, XMSG_COMM_NULL);
  p2p_barrier();
}

TEST(CommCreateGroup, OverlappingPairsOfASplitOneAfterAnother) {
  // The parent orders the world backwards, so parent rank p is world rank size-1-p. Each rank
  // joins the pair {2k, 2k+1} of parent ranks, then the pair {2k+1, 2k+2} (same order at both
  // members), listed high rank first for even k; pairs overlap, and a rank's second call runs
  // while its neighbours are still in their first.
  const int size = world_size();
  xmsg_comm_t parent = XMSG_COMM_NULL;
  XMSG_OK(xmsg_comm_split(XMSG_COMM_WORLD, 0, -world_rank(), &parent));
  int p = -1;
  XMSG_OK(xmsg_comm_rank(parent, &p));
  ASSERT_EQ(p, size - 1 - world_rank());
  auto pair_with = [&](int low, const std::string& what) {
    if (low < 0 || low + 1 >= size) return;
    std::vector<int> ranks = (low / 2) % 2 == 0 ? std::vector<int>{low + 1, low} : std::vector<int>{low, low + 1};
    xmsg_comm_t pair = XMSG_COMM_NULL;
    XMSG_OK(xmsg_comm_create_group(parent, 2, ranks.data(), 1000 + low, &pair));
    std::vector<int> members;
    for (int r : ranks) members.push_back(size - 1 - r);
    check_group(pair, members, what + " {" + std::to_string(ranks[0]) + ", " + std::to_string(ranks[1]) + "}");
    XMSG_OK(xmsg_comm_free(&pair));
  };
  const int first = p % 2 == 0 ? p : p - 1;
  pair_with(first, "first pair");
  pair_with(first == p ? p - 1 : p, "second pair");
  XMSG_OK(xmsg_comm_free(&parent));
  p2p_barrier();
}

TEST(CommCreateGroup, MismatchedListsFailAtEveryCaller) {
  // World rank 0 lists {0, 1}; rank 1 lists {0, 1, 2}; rank 2 does not call. Rank 0 hears rank
  // 1's different list and both fail alike instead of building different communicators.
  if (world_size() < 3) GTEST_SKIP() << "needs 3 ranks";
  const int me = world_rank();
  xmsg_comm_t c = XMSG_COMM_NULL;
  const int two[] = {0, 1}, three[] = {0, 1, 2};
  if (me == 0)
    expect_error(xmsg_comm_create_from_world(2, two, 3, &c), XMSG_ERR_ARG, "rank 1 of comm passed a different n",
                 "rank 0");
  if (me == 1)
    expect_error(xmsg_comm_create_from_world(3, three, 3, &c), XMSG_ERR_ARG, "rank 1 of comm passed a different n",
                 "rank 1");
  EXPECT_EQ(c, XMSG_COMM_NULL);
  p2p_barrier();
}

TEST(CommCreateGroup, BadArgumentsAreNamed) {
  // Checked locally before any message, so each rank's bad call fails at once.
  const int me = world_rank(), size = world_size();
  const xmsg_comm_t W = XMSG_COMM_WORLD;
  xmsg_comm_t c = XMSG_COMM_NULL;
  const int self[] = {me}, out_of_range[] = {size}, negative[] = {-1};
  if (size > 1) {
    const int other[] = {(me + 1) % size};
    expect_error(xmsg_comm_create_group(W, 1, other, 0, &c), XMSG_ERR_RANK, "calling rank " + std::to_string(me) +
                 " is not in ranks", "caller not listed");
    expect_error(xmsg_comm_create_from_world(1, other, 0, &c), XMSG_ERR_RANK, "not in world_ranks",
                 "from world, caller not listed");
    const int twice[] = {me, me};
    expect_error(xmsg_comm_create_group(W, 2, twice, 0, &c), XMSG_ERR_ARG,
                 "ranks[1] = " + std::to_string(me) + " repeats ranks[0]", "duplicate rank");
  }
  expect_error(xmsg_comm_create_group(W, 1, out_of_range, 0, &c), XMSG_ERR_RANK,
               "ranks[0] = " + std::to_string(size) + " out of range", "rank == size");
  expect_error(xmsg_comm_create_group(W, 1, negative, 0, &c), XMSG_ERR_RANK, "ranks[0] = -1 out of range",
               "negative rank");
  expect_error(xmsg_comm_create_group(W, 1, self, -1, &c), XMSG_ERR_TAG, "tag -1", "negative tag");
  expect_error(xmsg_comm_create_group(W, 1, self, XMSG_TAG_UB + 1, &c), XMSG_ERR_TAG,
               "tag " + std::to_string(XMSG_TAG_UB + 1), "tag above XMSG_TAG_UB");
  expect_error(xmsg_comm_create_group(W, 0, self, 0, &c), XMSG_ERR_ARG, "n 0", "n 0");
  expect_error(xmsg_comm_create_group(W, size + 1, self, 0, &c), XMSG_ERR_ARG, "n " + std::to_string(size + 1),
               "n above the size");
  expect_error(xmsg_comm_create_group(W, 1, nullptr, 0, &c), XMSG_ERR_ARG, "ranks is NULL", "NULL ranks");
  expect_error(xmsg_comm_create_group(W, 1, self, 0, nullptr), XMSG_ERR_ARG, "newcomm is NULL", "NULL newcomm");
  expect_error(xmsg_comm_create_group(4242, 1, self, 0, &c), XMSG_ERR_COMM, "xmsg_comm_create_group",
               "invalid comm");
  EXPECT_EQ(c, XMSG_COMM_NULL);

  // A group of the caller alone needs nobody else; the largest tag is allowed.
  XMSG_OK(xmsg_comm_create_group(W, 1, self, XMSG_TAG_UB, &c));
  check_group(c, {me}, "the caller alone");
  XMSG_OK(xmsg_comm_free(&c));
  p2p_barrier();
}
