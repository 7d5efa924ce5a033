// Every collective against a reference computed locally from deterministic per-rank inputs.
// One launch covers many communicator sizes: besides the world, each rank joins one
// communicator from each of three splits of the world (16 ranks: sizes 9+7, 8+5+3 with keys
// reversing the order, 6+4+3+2+1), so sizes 1-9 and 16 run side by side, and sub-communicators
// made by split are what most checks use. Checks use EXPECT (never ASSERT) so every rank makes
// the same sequence of collective calls even after a failure.
#include <gtest/gtest.h>
#include <xmsg/xmsg.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "reference.hpp"

using namespace colltest;

namespace {

struct TestComm {
  xmsg_comm_t handle;
  std::string name;
  int rank;
  int size;
};

std::vector<TestComm> g_comms;
int g_world_rank = 0, g_world_size = 1;

// Group index of `rank` in a partition of the world into consecutive groups of `sizes`.
int group_of(int rank, const std::vector<int>& sizes) {
  int start = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    if (rank < start + sizes[g]) return static_cast<int>(g);
    start += sizes[g];
  }
  return static_cast<int>(sizes.size());
}

void make_comms() {
  g_comms.push_back({XMSG_COMM_WORLD, "world", g_world_rank, g_world_size});
  const std::vector<std::vector<int>> partitions = {{9, 7}, {8, 5, 3}, {6, 4, 3, 2, 1}};
  for (size_t p = 0; p < partitions.size(); ++p) {
    const int color = group_of(g_world_rank, partitions[p]);
    const int key = p == 1 ? -g_world_rank : g_world_rank;  // partition 1 reverses rank order
    xmsg_comm_t comm = XMSG_COMM_NULL;
    if (xmsg_comm_split(XMSG_COMM_WORLD, color, key, &comm) != XMSG_SUCCESS) {
      std::fprintf(stderr, "xmsg_comm_split failed: %s\n", xmsg_last_error_message());
      continue;
    }
    TestComm t{comm, "", 0, 0};
    xmsg_comm_rank(comm, &t.rank);
    xmsg_comm_size(comm, &t.size);
    t.name = "split" + std::to_string(p) + "/color" + std::to_string(color) + "/size" + std::to_string(t.size);
    g_comms.push_back(t);
  }
}

std::string where(const TestComm& c, const std::string& what) {
  return c.name + " rank " + std::to_string(c.rank) + ": " + what;
}

template <class T>
::testing::AssertionResult same_arrays(const T* got, const T* want, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!same(got[i], want[i])) return ::testing::AssertionFailure() << "first difference at element " << i << " of " << n;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult ok(int code) {
  if (code == XMSG_SUCCESS) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "error " << code << " (" << xmsg_error_string(code)
                                       << "): " << xmsg_last_error_message();
}

const int64_t kMiB = 1 << 20;

}  // namespace

TEST(Split, SizesRanksAndKeyOrder) {
  for (const auto& c : g_comms) {
    EXPECT_GE(c.size, 1) << c.name;
    EXPECT_LT(c.rank, c.size) << c.name;
    // Gathering world ranks shows the order split chose: by key, i.e. reversed in split1.
    std::vector<int> world_ranks(c.size, -1);
    EXPECT_TRUE(ok(xmsg_allgather(&g_world_rank, 1, XMSG_INT, world_ranks.data(), 1, XMSG_INT, c.handle))) << c.name;
    for (int i = 1; i < c.size; ++i) {
      if (c.name.rfind("split1", 0) == 0) {
        EXPECT_GT(world_ranks[i - 1], world_ranks[i]) << c.name;
      } else {
        EXPECT_LT(world_ranks[i - 1], world_ranks[i]) << c.name;
      }
    }
  }
  if (g_world_size == 16) {
    std::vector<int> seen(17, 0);
    for (size_t i = 1; i < g_comms.size(); ++i) seen[g_comms[i].size] = 1;
    int total = 0;
    // Across all ranks, each of the sizes 1-9 occurs in some split.
    std::vector<int> all(16 * 17);
    EXPECT_TRUE(ok(xmsg_allgather(seen.data(), 17, XMSG_INT, all.data(), 17, XMSG_INT, XMSG_COMM_WORLD)));
    for (int s = 1; s <= 9; ++s) {
      int any = 0;
      for (int r = 0; r < 16; ++r) any |= all[r * 17 + s];
      total += any;
    }
    EXPECT_EQ(total, 9);
  }
}

// One barrier with `late` arriving 2 ms after the others; on one machine xmsg_wtime is a
// shared monotonic clock, so every exit must come after the last arrival.
static void expect_barrier_waits_for_everyone(const TestComm& c, int late, const std::string& what) {
  if (c.rank == late) usleep(2000);
  const double arrived = xmsg_wtime();
  EXPECT_TRUE(ok(xmsg_barrier(c.handle))) << c.name;
  const double left = xmsg_wtime();
  double times[2] = {arrived, left};
  std::vector<double> all(2 * c.size);
  EXPECT_TRUE(ok(xmsg_allgather(times, 2, XMSG_DOUBLE, all.data(), 2, XMSG_DOUBLE, c.handle)));
  double last_arrival = 0, first_exit = 1e300;
  for (int i = 0; i < c.size; ++i) {
    last_arrival = std::max(last_arrival, all[2 * i]);
    first_exit = std::min(first_exit, all[2 * i + 1]);
  }
  EXPECT_LE(last_arrival, first_exit) << where(c, "a rank left the barrier before the last one arrived" + what);
}

TEST(Barrier, NobodyLeavesBeforeEveryoneArrived) {
  for (const auto& c : g_comms) {
    for (int round = 0; round < 3; ++round) expect_barrier_waits_for_everyone(c, (c.size - 1 + round) % c.size, "");
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(ok(xmsg_barrier(c.handle))) << c.name;
  }
}

// A barrier right after a rooted collective may be rooted at that collective's root (2 ranks
// with a core each): with every root, the root or another rank arriving last.
TEST(Barrier, AfterRootedCollectivesNobodyLeavesEarly) {
  for (const auto& c : g_comms) {
    for (int root = 0; root < c.size; ++root) {
      for (int late : {root, (root + 1) % c.size}) {
        const std::string what = " (after a rooted collective, root " + std::to_string(root) + ", late rank " +
                                 std::to_string(late) + ")";
        int value = c.rank == root ? 42 + root : -1;
        EXPECT_TRUE(ok(xmsg_bcast(&value, 1, XMSG_INT, root, c.handle))) << c.name;
        EXPECT_EQ(value, 42 + root) << where(c, "bcast" + what);
        expect_barrier_waits_for_everyone(c, late, what);
        int64_t mine = c.rank + 1, sum = 0;
        EXPECT_TRUE(ok(xmsg_reduce(&mine, &sum, 1, XMSG_INT64_T, XMSG_SUM, root, c.handle))) << c.name;
        if (c.rank == root) {
          EXPECT_EQ(sum, int64_t{c.size} * (c.size + 1) / 2) << where(c, "reduce" + what);
        }
        expect_barrier_waits_for_everyone(c, late, what);
        // Back-to-back barriers after a rooted one (the rooted, then the pairwise variant).
        EXPECT_TRUE(ok(xmsg_bcast(&value, 1, XMSG_INT, root, c.handle))) << c.name;
        for (int i = 0; i < 3; ++i) EXPECT_TRUE(ok(xmsg_barrier(c.handle))) << c.name;
      }
    }
  }
}

TEST(Bcast, EveryRootCountAndSomeTypes) {
  const int64_t counts[] = {0, 1, 37, 1001};
  for (const auto& c : g_comms) {
    for (int root = 0; root < c.size; ++root) {
      for (int64_t count : counts) {
        int salt = root * 3 + static_cast<int>(count);
        std::vector<int> ints(count), want_ints(count);
        for (int64_t i = 0; i < count; ++i) want_ints[i] = static_cast<int>(pattern(root, 0, i, salt)) * 1000 + static_cast<int>(i);
        if (c.rank == root) ints = want_ints;
        EXPECT_TRUE(ok(xmsg_bcast(ints.data(), count, XMSG_INT, root, c.handle))) << c.name;
        EXPECT_TRUE(same_arrays(ints.data(), want_ints.data(), count)) << where(c, "bcast INT root " + std::to_string(root) + " count " + std::to_string(count));

        std::vector<double> d(count, -1.0), want_d(count);
        for (int64_t i = 0; i < count; ++i) want_d[i] = static_cast<double>(i) * 0.5 + root;
        if (c.rank == root) d = want_d;
        EXPECT_TRUE(ok(xmsg_bcast(d.data(), count, XMSG_DOUBLE, root, c.handle))) << c.name;
        EXPECT_TRUE(same_arrays(d.data(), want_d.data(), count)) << where(c, "bcast DOUBLE root " + std::to_string(root));
      }
    }
  }
}

TEST(Bcast, OneMiBAndOddLarge) {
  for (const auto& c : g_comms) {
    for (int64_t bytes : {kMiB, kMiB + 13}) {
      for (int root : {0, c.size - 1, c.size / 2}) {
        std::vector<unsigned char> buf(bytes, 0), want(bytes);
        for (int64_t i = 0; i < bytes; ++i) want[i] = pattern(root, 1, i, static_cast<int>(bytes & 7));
        if (c.rank == root) buf = want;
        EXPECT_TRUE(ok(xmsg_bcast(buf.data(), bytes, XMSG_BYTE, root, c.handle))) << c.name;
        EXPECT_TRUE(same_arrays(buf.data(), want.data(), bytes)) << where(c, "bcast " + std::to_string(bytes) + " B root " + std::to_string(root));
      }
    }
  }
}

namespace {

// reduce (root rotating with the case) and allreduce of one op over one type, checked against
// the in-order reference; ops MPI does not define for the type must fail with XMSG_ERR_OP.
// std::vector<bool> has no data(); the reductions need a plain array of every type.
template <class T>
class Array {
 public:
  explicit Array(int64_t n) : data_(new T[static_cast<size_t>(n)]()), n_(n) {}
  Array& operator=(const Array& other) {
    std::copy(other.data_.get(), other.data_.get() + n_, data_.get());
    return *this;
  }
  T& operator[](int64_t i) { return data_[i]; }
  T* data() { return data_.get(); }

 private:
  std::unique_ptr<T[]> data_;
  int64_t n_;
};

template <class Info>
void check_reduction(const TestComm& c, const Info& info, xmsg_op_t op, int64_t count, int root, int salt,
                     bool in_place) {
  using T = typename Info::type;
  const std::string label = std::string(op_label(op)) + " over " + info.name + " count " + std::to_string(count) +
                            " root " + std::to_string(root) + (in_place ? " in place" : "");
  Array<T> send(count), got(count), want(count);
  for (int64_t i = 0; i < count; ++i) {
    send[i] = input<T>(c.rank, i, salt, op);
    want[i] = input<T>(0, i, salt, op);
    for (int r = 1; r < c.size; ++r) want[i] = apply(op, want[i], input<T>(r, i, salt, op));
  }
  if (!op_defined(op, info.group)) {
    EXPECT_EQ(xmsg_allreduce(send.data(), got.data(), count, info.handle, op, c.handle), XMSG_ERR_OP) << where(c, label);
    EXPECT_NE(std::string(xmsg_last_error_message()).find("not defined for datatype"), std::string::npos)
        << xmsg_last_error_message();
    return;
  }
  if (in_place) {
    got = send;
    EXPECT_TRUE(ok(xmsg_allreduce(XMSG_IN_PLACE, got.data(), count, info.handle, op, c.handle))) << where(c, label);
  } else {
    EXPECT_TRUE(ok(xmsg_allreduce(send.data(), got.data(), count, info.handle, op, c.handle))) << where(c, label);
  }
  EXPECT_TRUE(same_arrays(got.data(), want.data(), count)) << where(c, "allreduce " + label);

  Array<T> at_root(count);
  const bool root_in_place = in_place && c.rank == root;
  if (root_in_place) at_root = send;
  EXPECT_TRUE(ok(xmsg_reduce(root_in_place ? XMSG_IN_PLACE : send.data(), at_root.data(), count, info.handle, op,
                             root, c.handle)))
      << where(c, label);
  if (c.rank == root) {
    EXPECT_TRUE(same_arrays(at_root.data(), want.data(), count)) << where(c, "reduce " + label);
  }
}

}  // namespace

TEST(Reduce, EveryOpOverEveryType) {
  // The op table does not depend on the algorithm: the world and the reversed-key split (three
  // sizes at once) are enough, with a count of 7 (count 1 runs in EveryRootCountsAndInPlace).
  for (size_t i : {size_t{0}, size_t{2}}) {
    if (i >= g_comms.size()) continue;
    const auto& c = g_comms[i];
    int salt = 0;
    for (xmsg_op_t op = XMSG_SUM; op < XMSG_OP_LAST; ++op) {
      for_each_type([&](auto info) {
        ++salt;
        check_reduction(c, info, op, 7, salt % c.size, salt, false);
      });
    }
  }
}

namespace {

// One reduction over a 1-byte character type with values chosen per rank, against C's own
// arithmetic on that type: SUM adds and converts back (wrapping modulo 256), MIN/MAX compare as
// the type compares (char as signed or unsigned as the platform's char is). Returns the
// allreduce result for the caller's literal checks.
template <class T, size_t N, class Value>
std::array<T, N> check_char_case(const TestComm& c, xmsg_datatype_t type, const char* name, xmsg_op_t op,
                                 Value value) {
  static_assert(sizeof(T) == 1);
  const std::string label = std::string(op_label(op)) + " over " + name;
  std::array<T, N> send{}, got{}, at_root{}, want{};
  for (size_t i = 0; i < N; ++i) {
    send[i] = static_cast<T>(value(c.rank, i));
    want[i] = static_cast<T>(value(0, i));
    for (int r = 1; r < c.size; ++r) {
      const T v = static_cast<T>(value(r, i));
      if (op == XMSG_SUM) want[i] = static_cast<T>(want[i] + v);
      else if (op == XMSG_MAX) want[i] = std::max(want[i], v);
      else want[i] = std::min(want[i], v);
    }
  }
  EXPECT_TRUE(ok(xmsg_allreduce(send.data(), got.data(), N, type, op, c.handle))) << where(c, label);
  const int root = c.size - 1;
  EXPECT_TRUE(ok(xmsg_reduce(send.data(), at_root.data(), N, type, op, root, c.handle))) << where(c, label);
  for (size_t i = 0; i < N; ++i) {
    EXPECT_EQ(static_cast<int>(got[i]), static_cast<int>(want[i])) << where(c, "allreduce " + label) << " element " << i;
    if (c.rank == root) {
      EXPECT_EQ(static_cast<int>(at_root[i]), static_cast<int>(want[i])) << where(c, "reduce " + label) << " element " << i;
    }
  }
  return got;
}

}  // namespace

TEST(Reduce, CharTypesAreIntegersThatWrapLikeC) {
  // XMSG_CHAR, SIGNED_CHAR and UNSIGNED_CHAR take the arithmetic ops (CHAR as MPICH and Open MPI
  // take MPI_CHAR: OSU's reduce benchmarks use it). Sums of two or more ranks overflow 8 bits.
  constexpr bool char_signed = std::numeric_limits<char>::is_signed;
  for (const auto& c : g_comms) {
    const int n = c.size;
    // CHAR SUM: 100 from everyone (100 * n wraps), the rank, and -1 from everyone.
    auto sum = check_char_case<char, 3>(c, XMSG_CHAR, "CHAR", XMSG_SUM, [](int r, size_t i) {
      return i == 0 ? 100 : i == 1 ? r : -1;
    });
    EXPECT_EQ(static_cast<int>(sum[0]), static_cast<int>(static_cast<char>((100 * n) % 256))) << where(c, "CHAR SUM");
    EXPECT_EQ(static_cast<int>(sum[1]), static_cast<int>(static_cast<char>(n * (n - 1) / 2))) << where(c, "CHAR SUM");
    EXPECT_EQ(static_cast<int>(sum[2]), static_cast<int>(static_cast<char>(-n))) << where(c, "CHAR SUM");
    if (n == 3) {
      EXPECT_EQ(sum[0], 44) << where(c, "CHAR SUM of 100 over 3 ranks is (char)300");
    }
    // CHAR MAX: 127 at rank 0 against -128 elsewhere (which of them wins depends on char's
    // signedness), and rank * 60, which passes 127 from rank 3 on.
    auto max = check_char_case<char, 2>(c, XMSG_CHAR, "CHAR", XMSG_MAX, [](int r, size_t i) {
      return i == 0 ? (r == 0 ? 127 : -128) : r * 60;
    });
    if (n > 1) {
      EXPECT_EQ(static_cast<int>(max[0]), char_signed ? 127 : 128) << where(c, "CHAR MAX of 127 and -128");
    }
    if (n == 16 && char_signed) {
      // rank * 60 as a signed char: 0, 60, 120, then 180 -> -76, ...: none above 120.
      EXPECT_EQ(static_cast<int>(max[1]), 120) << where(c, "CHAR MAX of rank * 60");
    }
    check_char_case<char, 2>(c, XMSG_CHAR, "CHAR", XMSG_MIN, [](int r, size_t i) { return i == 0 ? r * 60 : -r; });

    // SIGNED_CHAR: 127 from everyone wraps negative from two ranks on; MAX/MIN at the ends.
    auto ssum = check_char_case<signed char, 2>(c, XMSG_SIGNED_CHAR, "SIGNED_CHAR", XMSG_SUM,
                                                [](int r, size_t i) { return i == 0 ? 127 : -100 - r; });
    if (n == 2) {
      EXPECT_EQ(ssum[0], -2) << where(c, "SIGNED_CHAR SUM 127 + 127");
      EXPECT_EQ(ssum[1], 55) << where(c, "SIGNED_CHAR SUM -100 + -101");
    }
    auto smax = check_char_case<signed char, 2>(c, XMSG_SIGNED_CHAR, "SIGNED_CHAR", XMSG_MAX,
                                                [](int r, size_t i) { return i == 0 ? -128 + r : -r; });
    EXPECT_EQ(smax[0], -128 + (n - 1)) << where(c, "SIGNED_CHAR MAX");
    EXPECT_EQ(smax[1], 0) << where(c, "SIGNED_CHAR MAX");

    // UNSIGNED_CHAR: 200 from everyone wraps modulo 256; MAX of 255 - rank is 255.
    auto usum = check_char_case<unsigned char, 1>(c, XMSG_UNSIGNED_CHAR, "UNSIGNED_CHAR", XMSG_SUM,
                                                  [](int, size_t) { return 200; });
    EXPECT_EQ(usum[0], (200 * n) % 256) << where(c, "UNSIGNED_CHAR SUM");
    auto umax = check_char_case<unsigned char, 2>(c, XMSG_UNSIGNED_CHAR, "UNSIGNED_CHAR", XMSG_MAX,
                                                  [](int r, size_t i) { return i == 0 ? 255 - r : r * 17; });
    EXPECT_EQ(umax[0], 255) << where(c, "UNSIGNED_CHAR MAX");
    if (n <= 16) {
      EXPECT_EQ(umax[1], (n - 1) * 17) << where(c, "UNSIGNED_CHAR MAX");
    }
  }
}

TEST(Reduce, EveryRootCountsAndInPlace) {
  for (const auto& c : g_comms) {
    for (int root = 0; root < c.size; ++root) {
      for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{37}}) {
        check_reduction(c, TypeInfo<int>{XMSG_INT, "INT", Group::Integer}, XMSG_SUM, count, root, root, false);
        check_reduction(c, TypeInfo<double>{XMSG_DOUBLE, "DOUBLE", Group::Floating}, XMSG_MAX, count, root, root, true);
        check_reduction(c, TypeInfo<ValueInt<double>>{XMSG_DOUBLE_INT, "DOUBLE_INT", Group::Pair}, XMSG_MINLOC, count,
                        root, root, false);
      }
    }
  }
}

TEST(Reduce, OneMiBVectors) {
  // 1 MiB vectors take the large-message paths (Rabenseifner allreduce).
  for (const auto& c : g_comms) {
    check_reduction(c, TypeInfo<double>{XMSG_DOUBLE, "DOUBLE", Group::Floating}, XMSG_SUM, kMiB / 8, c.size - 1, 1, false);
    check_reduction(c, TypeInfo<int>{XMSG_INT, "INT", Group::Integer}, XMSG_BXOR, kMiB / 4 + 3, 0, 2, true);
    check_reduction(c, TypeInfo<ValueInt<float>>{XMSG_FLOAT_INT, "FLOAT_INT", Group::Pair}, XMSG_MAXLOC, kMiB / 8 + 1,
                    c.size / 2, 3, false);
    check_reduction(c, TypeInfo<unsigned char>{XMSG_BYTE, "BYTE", Group::Byte}, XMSG_BOR, kMiB + 1, 0, 4, false);
  }
}

namespace {

// x -> a*x + b (mod 2^32) as an XMSG_2INT element; "f then g" is associative but not
// commutative, so any algorithm that reorders operands gives a different answer.
void compose_affine(const void* in, void* inout, int64_t count, xmsg_datatype_t datatype, void* user_data) {
  auto* calls = static_cast<int*>(user_data);
  ++*calls;
  EXPECT_EQ(datatype, XMSG_2INT);
  const auto* f = static_cast<const ValueInt<int>*>(in);
  auto* g = static_cast<ValueInt<int>*>(inout);
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t fa = static_cast<uint32_t>(f[i].value), fb = static_cast<uint32_t>(f[i].index);
    const uint32_t ga = static_cast<uint32_t>(g[i].value), gb = static_cast<uint32_t>(g[i].index);
    g[i].value = static_cast<int>(ga * fa);
    g[i].index = static_cast<int>(ga * fb + gb);
  }
}

ValueInt<int> affine_input(int rank, int64_t i) {
  return ValueInt<int>{static_cast<int>(2 * ((rank * 5 + i) % 7) + 1), static_cast<int>(rank * 1000 + i % 97)};
}

ValueInt<int> compose_reference(ValueInt<int> f, ValueInt<int> g) {
  int calls = 0;
  compose_affine(&f, &g, 1, XMSG_2INT, &calls);
  return g;
}

// Sum modulo the number user_data points at (commutative).
void sum_modulo(const void* in, void* inout, int64_t count, xmsg_datatype_t, void* user_data) {
  const int64_t m = *static_cast<int64_t*>(user_data);
  const auto* a = static_cast<const int64_t*>(in);
  auto* b = static_cast<int64_t*>(inout);
  for (int64_t i = 0; i < count; ++i) b[i] = (a[i] + b[i]) % m;
}

}  // namespace

TEST(UserOp, NonCommutativeKeepsRankOrder) {
  int calls = 0;
  xmsg_op_t op = XMSG_OP_NULL;
  ASSERT_TRUE(ok(xmsg_op_create(&compose_affine, 0, &calls, &op)));
  EXPECT_GE(op, XMSG_OP_LAST);
  for (const auto& c : g_comms) {
    for (int64_t count : {int64_t{1}, int64_t{7}, int64_t{1000}, kMiB / 8 + 5}) {
      std::vector<ValueInt<int>> send(count), got(count), want(count);
      for (int64_t i = 0; i < count; ++i) {
        send[i] = affine_input(c.rank, i);
        want[i] = affine_input(0, i);
        for (int r = 1; r < c.size; ++r) want[i] = compose_reference(want[i], affine_input(r, i));
      }
      EXPECT_TRUE(ok(xmsg_allreduce(send.data(), got.data(), count, XMSG_2INT, op, c.handle))) << c.name;
      EXPECT_TRUE(same_arrays(got.data(), want.data(), count)) << where(c, "non-commutative allreduce count " + std::to_string(count));
      const int roots[] = {0, c.size - 1, (c.size + 1) / 3};
      for (int root : roots) {
        std::vector<ValueInt<int>> at_root(count);
        EXPECT_TRUE(ok(xmsg_reduce(send.data(), at_root.data(), count, XMSG_2INT, op, root, c.handle))) << c.name;
        if (c.rank == root) {
          EXPECT_TRUE(same_arrays(at_root.data(), want.data(), count))
              << where(c, "non-commutative reduce root " + std::to_string(root) + " count " + std::to_string(count));
        }
      }
    }
  }
  if (g_world_size > 1) {
    EXPECT_GT(calls, 0);
  }
  EXPECT_TRUE(ok(xmsg_op_free(&op)));
  EXPECT_EQ(op, XMSG_OP_NULL);
}

TEST(UserOp, CommutativeWithUserDataEveryRoot) {
  int64_t modulus = 1000;
  xmsg_op_t op = XMSG_OP_NULL;
  ASSERT_TRUE(ok(xmsg_op_create(&sum_modulo, 1, &modulus, &op)));
  for (const auto& c : g_comms) {
    for (int root = 0; root < c.size; ++root) {
      const int64_t count = 5 + root;
      std::vector<int64_t> send(count), got(count), want(count, 0);
      for (int64_t i = 0; i < count; ++i) {
        send[i] = (c.rank * 997 + i * 31) % modulus;
        for (int r = 0; r < c.size; ++r) want[i] = (want[i] + (r * 997 + i * 31) % modulus) % modulus;
      }
      EXPECT_TRUE(ok(xmsg_reduce(send.data(), got.data(), count, XMSG_INT64_T, op, root, c.handle))) << c.name;
      if (c.rank == root) {
        EXPECT_TRUE(same_arrays(got.data(), want.data(), count)) << where(c, "user sum_modulo reduce");
      }
    }
  }
  EXPECT_TRUE(ok(xmsg_op_free(&op)));
}

TEST(UserOp, HandlesAndErrors) {
  int calls = 0;
  xmsg_op_t a = XMSG_OP_NULL, b = XMSG_OP_NULL;
  ASSERT_TRUE(ok(xmsg_op_create(&compose_affine, 0, &calls, &a)));
  ASSERT_TRUE(ok(xmsg_op_create(&compose_affine, 1, &calls, &b)));
  EXPECT_NE(a, b);
  xmsg_op_t freed = a;
  EXPECT_TRUE(ok(xmsg_op_free(&a)));
  EXPECT_EQ(xmsg_op_free(&freed), XMSG_ERR_OP);
  EXPECT_NE(std::string(xmsg_last_error_message()).find("not a valid op"), std::string::npos) << xmsg_last_error_message();
  int x = 1, y = 0;
  EXPECT_EQ(xmsg_allreduce(&x, &y, 1, XMSG_INT, freed, XMSG_COMM_SELF), XMSG_ERR_OP);
  xmsg_op_t sum = XMSG_SUM;
  EXPECT_EQ(xmsg_op_free(&sum), XMSG_ERR_OP);
  EXPECT_NE(std::string(xmsg_last_error_message()).find("predefined"), std::string::npos) << xmsg_last_error_message();
  EXPECT_EQ(xmsg_op_create(nullptr, 1, nullptr, &a), XMSG_ERR_ARG);
  EXPECT_NE(std::string(xmsg_last_error_message()).find("function"), std::string::npos);
  EXPECT_EQ(xmsg_op_create(&compose_affine, 1, nullptr, nullptr), XMSG_ERR_ARG);
  EXPECT_TRUE(ok(xmsg_op_free(&b)));
}

TEST(Gather, EveryRootCountAndInPlace) {
  for (const auto& c : g_comms) {
    for (int root = 0; root < c.size; ++root) {
      for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{37}, kMiB / c.size + 1}) {
        const int salt = static_cast<int>(count % 251) + root;
        std::vector<unsigned char> send(count), got(count * c.size, 0), want(count * c.size);
        for (int64_t i = 0; i < count; ++i) send[i] = pattern(c.rank, root, i, salt);
        for (int r = 0; r < c.size; ++r)
          for (int64_t i = 0; i < count; ++i) want[r * count + i] = pattern(r, root, i, salt);
        const bool in_place = c.rank == root && root % 2 == 1;
        if (in_place) std::copy(send.begin(), send.end(), got.begin() + c.rank * count);
        EXPECT_TRUE(ok(xmsg_gather(in_place ? XMSG_IN_PLACE : send.data(), count, XMSG_BYTE, got.data(), count,
                                   XMSG_BYTE, root, c.handle)))
            << c.name;
        if (c.rank == root) {
          EXPECT_TRUE(same_arrays(got.data(), want.data(), count * c.size))
              << where(c, "gather root " + std::to_string(root) + " count " + std::to_string(count));
        }
      }
    }
  }
}

TEST(Gather, VariableCountsGapsAndReversedLayout) {
  for (const auto& c : g_comms) {
    for (int root = 0; root < c.size; ++root) {
      // Rank r sends (r * 3 + root) % 5 ints (some zero), placed in reverse rank order with gaps.
      std::vector<int64_t> counts(c.size), displs(c.size);
      int64_t offset = 0;
      for (int r = c.size - 1; r >= 0; --r) {
        counts[r] = (r * 3 + root) % 5;
        displs[r] = offset + 1;
        offset += counts[r] + 2;
      }
      std::vector<int> send(counts[c.rank]), got(offset, -7), want(offset, -7);
      for (int64_t i = 0; i < counts[c.rank]; ++i) send[i] = c.rank * 100 + static_cast<int>(i);
      for (int r = 0; r < c.size; ++r)
        for (int64_t i = 0; i < counts[r]; ++i) want[displs[r] + i] = r * 100 + static_cast<int>(i);
      EXPECT_TRUE(ok(xmsg_gatherv(send.data(), counts[c.rank], XMSG_INT, got.data(), counts.data(), displs.data(),
                                  XMSG_INT, root, c.handle)))
          << c.name;
      if (c.rank == root) {
        EXPECT_TRUE(same_arrays(got.data(), want.data(), offset)) << where(c, "gatherv root " + std::to_string(root));
      }

      // scatterv is the inverse: the root hands each rank back its block.
      std::vector<int> back(counts[c.rank], -1);
      EXPECT_TRUE(ok(xmsg_scatterv(want.data(), counts.data(), displs.data(), XMSG_INT, back.data(), counts[c.rank],
                                   XMSG_INT, root, c.handle)))
          << c.name;
      EXPECT_TRUE(same_arrays(back.data(), send.data(), counts[c.rank])) << where(c, "scatterv root " + std::to_string(root));
    }
  }
}

TEST(Scatter, EveryRootCountAndInPlace) {
  for (const auto& c : g_comms) {
    for (int root = 0; root < c.size; ++root) {
      for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{37}, kMiB / c.size + 3}) {
        const int salt = static_cast<int>(count % 253) + root;
        std::vector<unsigned char> all(count * c.size), got(count, 0), want(count);
        for (int r = 0; r < c.size; ++r)
          for (int64_t i = 0; i < count; ++i) all[r * count + i] = pattern(root, r, i, salt);
        for (int64_t i = 0; i < count; ++i) want[i] = pattern(root, c.rank, i, salt);
        const bool in_place = c.rank == root && root % 2 == 1;
        EXPECT_TRUE(ok(xmsg_scatter(all.data(), count, XMSG_BYTE, in_place ? XMSG_IN_PLACE : got.data(), count,
                                    XMSG_BYTE, root, c.handle)))
            << c.name;
        if (!in_place) {
          EXPECT_TRUE(same_arrays(got.data(), want.data(), count))
              << where(c, "scatter root " + std::to_string(root) + " count " + std::to_string(count));
        }
      }
    }
  }
}

TEST(Allgather, CountsInPlaceAndVariable) {
  for (const auto& c : g_comms) {
    // 100: two stamped lines; 3001: a slot
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{100}, int64_t{3001}, kMiB / c.size + 1}) {
      for (bool in_place : {false, true}) {
        const int salt = static_cast<int>(count % 241) + in_place;
        std::vector<unsigned char> send(count), got(count * c.size, 0), want(count * c.size);
        for (int64_t i = 0; i < count; ++i) send[i] = pattern(c.rank, 2, i, salt);
        for (int r = 0; r < c.size; ++r)
          for (int64_t i = 0; i < count; ++i) want[r * count + i] = pattern(r, 2, i, salt);
        if (in_place) std::copy(send.begin(), send.end(), got.begin() + c.rank * count);
        EXPECT_TRUE(ok(xmsg_allgather(in_place ? XMSG_IN_PLACE : send.data(), count, XMSG_BYTE, got.data(), count,
                                      XMSG_BYTE, c.handle)))
            << c.name;
        EXPECT_TRUE(same_arrays(got.data(), want.data(), count * c.size))
            << where(c, "allgather count " + std::to_string(count) + (in_place ? " in place" : ""));
      }
    }
    // allgatherv: rank r contributes (r * 7) % 4 doubles, packed in rank order with gaps.
    std::vector<int64_t> counts(c.size), displs(c.size);
    int64_t offset = 0;
    for (int r = 0; r < c.size; ++r) {
      counts[r] = (r * 7) % 4;
      displs[r] = offset;
      offset += counts[r] + 1;
    }
    std::vector<double> send(counts[c.rank]), got(offset, -1), want(offset, -1);
    for (int64_t i = 0; i < counts[c.rank]; ++i) send[i] = c.rank + 0.25 * static_cast<double>(i);
    for (int r = 0; r < c.size; ++r)
      for (int64_t i = 0; i < counts[r]; ++i) want[displs[r] + i] = r + 0.25 * static_cast<double>(i);
    EXPECT_TRUE(ok(xmsg_allgatherv(send.data(), counts[c.rank], XMSG_DOUBLE, got.data(), counts.data(), displs.data(),
                                   XMSG_DOUBLE, c.handle)))
        << c.name;
    EXPECT_TRUE(same_arrays(got.data(), want.data(), offset)) << where(c, "allgatherv");
  }
}

// reduce_scatter: uneven counts (zeros included), small and large vectors (the latter cross
// many pipeline chunks), SUM exact in any order and MAX, in place and not, checked against the
// sum every rank can compute; a user op that is not commutative takes the allreduce route.
TEST(ReduceScatter, UnevenCountsOpsAndInPlace) {
  for (const auto& c : g_comms) {
    for (int64_t scale : {int64_t{1}, int64_t{300}, kMiB / 8 / c.size + 17}) {
      std::vector<int64_t> counts(c.size);
      for (int r = 0; r < c.size; ++r) counts[r] = (r % 3 == 1) ? 0 : scale + r;
      int64_t total = 0, mine_lo = 0;
      for (int r = 0; r < c.size; ++r) {
        if (r < c.rank) mine_lo += counts[r];
        total += counts[r];
      }
      for (bool in_place : {false, true}) {
        for (xmsg_op_t op : {XMSG_SUM, XMSG_MAX}) {
          std::vector<int64_t> send(total), got(in_place ? total : std::max<int64_t>(counts[c.rank], 1), -1);
          for (int64_t i = 0; i < total; ++i) send[i] = (c.rank + 1) * (i % 1000) - c.rank;
          if (in_place) got = send;
          ASSERT_TRUE(ok(xmsg_reduce_scatter(in_place ? XMSG_IN_PLACE : send.data(), got.data(), counts.data(),
                                             XMSG_INT64_T, op, c.handle)))
              << c.name;
          for (int64_t i = 0; i < counts[c.rank]; ++i) {
            const int64_t g = mine_lo + i;
            int64_t want = op == XMSG_SUM ? 0 : INT64_MIN;
            for (int r = 0; r < c.size; ++r) {
              const int64_t v = (r + 1) * (g % 1000) - r;
              want = op == XMSG_SUM ? want + v : std::max(want, v);
            }
            if (got[i] != want) {
              ADD_FAILURE() << where(c, "reduce_scatter total " + std::to_string(total) + (in_place ? " in place" : "") +
                                            " element " + std::to_string(i) + ": got " + std::to_string(got[i]) +
                                            ", want " + std::to_string(want));
              break;
            }
          }
        }
      }
    }
  }
}

TEST(ReduceScatter, BadArgumentsAreRefused) {
  std::vector<int64_t> counts(g_world_size, 1), send(g_world_size), got(1);
  EXPECT_EQ(xmsg_reduce_scatter(send.data(), got.data(), nullptr, XMSG_INT64_T, XMSG_SUM, XMSG_COMM_WORLD), XMSG_ERR_ARG);
  counts[0] = -1;
  EXPECT_EQ(xmsg_reduce_scatter(send.data(), got.data(), counts.data(), XMSG_INT64_T, XMSG_SUM, XMSG_COMM_WORLD),
            XMSG_ERR_COUNT);
  counts[0] = 1;
  EXPECT_EQ(xmsg_reduce_scatter(send.data(), XMSG_IN_PLACE, counts.data(), XMSG_INT64_T, XMSG_SUM, XMSG_COMM_WORLD),
            XMSG_ERR_BUFFER);
  EXPECT_EQ(xmsg_reduce_scatter(send.data(), got.data(), counts.data(), XMSG_FLOAT, XMSG_BAND, XMSG_COMM_WORLD), XMSG_ERR_OP);
}

TEST(Alltoall, CountsAcrossAlgorithmsAndInPlace) {
  for (const auto& c : g_comms) {
    // 20 and 60: a block in two stamped lines at 2 ranks, blocks across a line's end at 4
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{20}, int64_t{37}, int64_t{60}, int64_t{1000}, kMiB / c.size + 1}) {
      for (bool in_place : {false, true}) {
        const int salt = static_cast<int>(count % 239) + in_place;
        std::vector<unsigned char> send(count * c.size), got(count * c.size, 0), want(count * c.size);
        for (int peer = 0; peer < c.size; ++peer)
          for (int64_t i = 0; i < count; ++i) {
            send[peer * count + i] = pattern(c.rank, peer, i, salt);
            want[peer * count + i] = pattern(peer, c.rank, i, salt);
          }
        if (in_place) got = send;
        EXPECT_TRUE(ok(xmsg_alltoall(in_place ? XMSG_IN_PLACE : send.data(), count, XMSG_BYTE, got.data(), count,
                                     XMSG_BYTE, c.handle)))
            << c.name;
        EXPECT_TRUE(same_arrays(got.data(), want.data(), count * c.size))
            << where(c, "alltoall count " + std::to_string(count) + (in_place ? " in place" : ""));
      }
    }
  }
}

// One alltoallv where rank s sends amount(s, d) ints to rank d, with gaps between the blocks
// (send_gap / recv_gap ints) so a block that lands in the wrong place shows; every int says
// where it came from and where it went. A value test, no reference collective.
template <class Amount>
void check_alltoallv(const TestComm& c, Amount amount, int64_t send_gap, int64_t recv_gap, int from_scale, int to_scale,
                     const std::string& what) {
  std::vector<int64_t> scounts(c.size), sdispls(c.size), rcounts(c.size), rdispls(c.size);
  int64_t soff = 0, roff = 0;
  for (int p = 0; p < c.size; ++p) {
    scounts[p] = amount(c.rank, p);
    sdispls[p] = soff;
    soff += scounts[p] + send_gap;
    rcounts[p] = amount(p, c.rank);
    rdispls[p] = roff;
    roff += rcounts[p] + recv_gap;
  }
  std::vector<int> send(soff, -5), got(roff, -9), want(roff, -9);
  for (int p = 0; p < c.size; ++p) {
    for (int64_t i = 0; i < scounts[p]; ++i) send[sdispls[p] + i] = c.rank * from_scale + p * to_scale + static_cast<int>(i);
    for (int64_t i = 0; i < rcounts[p]; ++i) want[rdispls[p] + i] = p * from_scale + c.rank * to_scale + static_cast<int>(i);
  }
  EXPECT_TRUE(ok(xmsg_alltoallv(send.data(), scounts.data(), sdispls.data(), XMSG_INT, got.data(), rcounts.data(),
                                rdispls.data(), XMSG_INT, c.handle)))
      << c.name;
  EXPECT_TRUE(same_arrays(got.data(), want.data(), roff)) << where(c, what);
}

TEST(Alltoall, VariableCounts) {
  for (const auto& c : g_comms) {
    for (int variant = 0; variant < 3; ++variant) {
      // Rank s sends (s + 2 * d + variant) % 4 * 3 ints to rank d (zeros included).
      auto amount = [&](int s, int d) { return static_cast<int64_t>(((s + 2 * d + variant) % 4) * 3); };
      check_alltoallv(c, amount, 1, 2, 10000, 100, "alltoallv variant " + std::to_string(variant));
    }
    // Writers of every size side by side (on one node each writer picks its own way per call:
    // its slot, point-to-point messages, single copy): ranks send 40000, 3000 or 5 ints (+ d)
    // to each rank d by rank mod 3, rotating between calls so each writer's choice changes.
    for (int variant = 0; variant < 3; ++variant) {
      auto amount = [&](int s, int d) {
        static constexpr int64_t kBase[3] = {40000, 3000, 5};
        return kBase[(s + variant) % 3] + d;
      };
      check_alltoallv(c, amount, 3, 1, 100000, 5000, "alltoallv large/small writers " + std::to_string(variant));
    }
    // Small writers side by side: 2 (inline), 14-16 (2 ranks: the posted line continued in a
    // second line) and 40 ints (+ d) a peer, rotating between calls.
    for (int variant = 0; variant < 3; ++variant) {
      auto amount = [&](int s, int d) {
        static constexpr int64_t kBase[3] = {2, 14, 40};
        return kBase[(s + variant) % 3] + d;
      };
      check_alltoallv(c, amount, 1, 2, 100000, 5000, "alltoallv small writers " + std::to_string(variant));
    }
    // Ranks 0 and 1 exchange 40000 ints (+ d) both ways, every other pair 5: off the one-node
    // path ranks 0 and 1 take the pairwise form and the others the linear one, in one call.
    check_alltoallv(c, [](int s, int d) { return (s < 2 && d < 2 ? int64_t{40000} : int64_t{5}) + d; }, 2, 1, 100000,
                    5000, "alltoallv two large ranks");
    // In place: same counts both ways (symmetric amount).
    std::vector<int64_t> counts(c.size), displs(c.size);
    int64_t off = 0;
    for (int p = 0; p < c.size; ++p) {
      counts[p] = (c.rank + p) % 3 + 1;
      displs[p] = off;
      off += counts[p];
    }
    std::vector<int> buf(off), want(off);
    for (int p = 0; p < c.size; ++p)
      for (int64_t i = 0; i < counts[p]; ++i) {
        buf[displs[p] + i] = c.rank * 1000 + p * 10 + static_cast<int>(i);
        want[displs[p] + i] = p * 1000 + c.rank * 10 + static_cast<int>(i);
      }
    EXPECT_TRUE(ok(xmsg_alltoallv(XMSG_IN_PLACE, nullptr, nullptr, XMSG_INT, buf.data(), counts.data(), displs.data(),
                                  XMSG_INT, c.handle)))
        << c.name;
    EXPECT_TRUE(same_arrays(buf.data(), want.data(), off)) << where(c, "alltoallv in place");
  }
}

namespace {

// Many collectives back to back with no barrier between them, roots and sizes changing every
// call: on a communicator that lives on one node they run through its shared-memory region,
// where a fast root may be a collective or two ahead of the slowest reader. Sizes straddle the
// default slot (16 KiB) and the 256-byte one of the coll_n9_shm_small_slot run, so each call
// may switch between the region and point-to-point.
void back_to_back_mix(const TestComm& c, int salt) {
  const int64_t sizes[] = {1, 13, 56, 57, 256, 257, 8192, 8193, 16385};
  const int n = c.size;
  for (int iter = 0; iter < 2 * n + 9; ++iter) {
    const int root = (iter * 5 + salt) % n;
    const int64_t bytes = sizes[iter % 9];
    // A burst of bcasts from one root: the root runs ahead while the others still copy.
    for (int burst = 0; burst < 4; ++burst) {
      std::vector<unsigned char> buf(bytes, 0), want(bytes);
      for (int64_t i = 0; i < bytes; ++i) want[i] = pattern(root, burst, i, iter + salt);
      if (c.rank == root) buf = want;
      EXPECT_TRUE(ok(xmsg_bcast(buf.data(), bytes, XMSG_BYTE, root, c.handle))) << c.name;
      EXPECT_TRUE(same_arrays(buf.data(), want.data(), bytes))
          << where(c, "bcast root " + std::to_string(root) + " bytes " + std::to_string(bytes));
    }
    const int64_t count = std::max<int64_t>(1, bytes / 8);
    std::vector<int64_t> send(count), sum(count, -1), sum_want(count, 0), max_at_root(count, -1), max_want(count);
    for (int64_t i = 0; i < count; ++i) {
      send[i] = c.rank * 1000 + i + iter;
      for (int r = 0; r < n; ++r) sum_want[i] += r * 1000 + i + iter;
      max_want[i] = (n - 1) * 1000 + i + iter;
    }
    EXPECT_TRUE(ok(xmsg_allreduce(send.data(), sum.data(), count, XMSG_INT64_T, XMSG_SUM, c.handle))) << c.name;
    EXPECT_TRUE(same_arrays(sum.data(), sum_want.data(), count)) << where(c, "allreduce count " + std::to_string(count));
    EXPECT_TRUE(ok(xmsg_reduce(send.data(), max_at_root.data(), count, XMSG_INT64_T, XMSG_MAX, root, c.handle)))
        << c.name;
    if (c.rank == root) {
      EXPECT_TRUE(same_arrays(max_at_root.data(), max_want.data(), count))
          << where(c, "reduce root " + std::to_string(root) + " count " + std::to_string(count));
    }
    const int64_t block = std::max<int64_t>(1, bytes / n);
    std::vector<unsigned char> a2a_send(block * n), a2a_got(block * n, 0), a2a_want(block * n);
    for (int peer = 0; peer < n; ++peer)
      for (int64_t i = 0; i < block; ++i) {
        a2a_send[peer * block + i] = pattern(c.rank, peer, i, iter + salt);
        a2a_want[peer * block + i] = pattern(peer, c.rank, i, iter + salt);
      }
    EXPECT_TRUE(ok(xmsg_alltoall(a2a_send.data(), block, XMSG_BYTE, a2a_got.data(), block, XMSG_BYTE, c.handle)))
        << c.name;
    EXPECT_TRUE(same_arrays(a2a_got.data(), a2a_want.data(), block * n))
        << where(c, "alltoall block " + std::to_string(block));
    if (iter % 3 == 0) {
      EXPECT_TRUE(ok(xmsg_barrier(c.handle))) << c.name;
    }
  }
}

}  // namespace

TEST(NodeShm, BackToBackOnSplitDupAndReusedHandles) {
  for (const auto& c : g_comms) back_to_back_mix(c, 0);
  // Dups are new communicators with their own regions; freeing one and duplicating again
  // reuses the handle, which must not find the freed communicator's region.
  for (int round = 0; round < 2; ++round) {
    for (const auto& base : g_comms) {
      xmsg_comm_t dup = XMSG_COMM_NULL;
      EXPECT_TRUE(ok(xmsg_comm_dup(base.handle, &dup))) << base.name;
      if (dup == XMSG_COMM_NULL) continue;
      back_to_back_mix(TestComm{dup, base.name + "/dup" + std::to_string(round), base.rank, base.size}, round + 1);
      EXPECT_TRUE(ok(xmsg_comm_free(&dup))) << base.name;
    }
  }
}

// Sizes around the large-data paths of one-node communicators: the 64 KiB pipeline chunk
// (4 KiB in the small-chunk runs) and past a ring of 4 chunks, and the
// single-copy (CMA) runs; bcast from every root, allreduce with a commutative built-in op
// (pipelined) and a non-commutative user op (single-copy or point-to-point), in place and not,
// alltoall with blocks that do not divide into chunks. Back to back, no barrier in between.
TEST(NodeShm, LargeSizesAroundChunksEveryRoot) {
  const int64_t sizes[] = {4095, 4097, 65535, 65537, 4 * 65536 + 13};
  for (const auto& c : g_comms) {
    for (int64_t bytes : sizes) {
      for (int root = 0; root < c.size; ++root) {
        std::vector<unsigned char> buf(bytes, 0), want(bytes);
        for (int64_t i = 0; i < bytes; ++i) want[i] = pattern(root, 7, i, static_cast<int>(bytes % 101));
        if (c.rank == root) buf = want;
        EXPECT_TRUE(ok(xmsg_bcast(buf.data(), bytes, XMSG_BYTE, root, c.handle))) << c.name;
        EXPECT_TRUE(same_arrays(buf.data(), want.data(), bytes))
            << where(c, "bcast " + std::to_string(bytes) + " B root " + std::to_string(root));
      }
      const int64_t count = bytes / 8 + c.size;  // some segments a chunk and a bit, never empty
      for (bool in_place : {false, true}) {
        std::vector<double> send(count), got(count, -1.0), want(count, 0.0);
        for (int64_t i = 0; i < count; ++i) {
          send[i] = static_cast<double>((c.rank + 1) * (i % 1000));  // exact in any order
          for (int r = 0; r < c.size; ++r) want[i] += static_cast<double>((r + 1) * (i % 1000));
        }
        if (in_place) got = send;
        EXPECT_TRUE(ok(xmsg_allreduce(in_place ? XMSG_IN_PLACE : send.data(), got.data(), count, XMSG_DOUBLE,
                                      XMSG_SUM, c.handle)))
            << c.name;
        EXPECT_TRUE(same_arrays(got.data(), want.data(), count))
            << where(c, "allreduce SUM count " + std::to_string(count) + (in_place ? " in place" : ""));
      }
      const int64_t block = bytes / c.size + 1;
      std::vector<unsigned char> a2a_send(block * c.size), a2a_got(block * c.size, 0), a2a_want(block * c.size);
      for (int peer = 0; peer < c.size; ++peer)
        for (int64_t i = 0; i < block; ++i) {
          a2a_send[peer * block + i] = pattern(c.rank, peer, i, static_cast<int>(block % 13));
          a2a_want[peer * block + i] = pattern(peer, c.rank, i, static_cast<int>(block % 13));
        }
      EXPECT_TRUE(ok(xmsg_alltoall(a2a_send.data(), block, XMSG_BYTE, a2a_got.data(), block, XMSG_BYTE, c.handle)))
          << c.name;
      EXPECT_TRUE(same_arrays(a2a_got.data(), a2a_want.data(), block * c.size))
          << where(c, "alltoall block " + std::to_string(block));
    }
    // Non-commutative: rank order must hold on every large path (x -> a*x + b composition).
    int calls = 0;
    xmsg_op_t op = XMSG_OP_NULL;
    EXPECT_TRUE(ok(xmsg_op_create(&compose_affine, 0, &calls, &op)));
    for (bool in_place : {false, true}) {
      const int64_t count = 65536 / 8 + 3;
      std::vector<ValueInt<int>> send(count), got(count), want(count);
      for (int64_t i = 0; i < count; ++i) {
        send[i] = affine_input(c.rank, i);
        want[i] = affine_input(0, i);
        for (int r = 1; r < c.size; ++r) want[i] = compose_reference(want[i], affine_input(r, i));
      }
      if (in_place) got = send;
      EXPECT_TRUE(ok(xmsg_allreduce(in_place ? XMSG_IN_PLACE : send.data(), got.data(), count, XMSG_2INT, op,
                                    c.handle)))
          << c.name;
      EXPECT_TRUE(same_arrays(got.data(), want.data(), count))
          << where(c, std::string("allreduce non-commutative") + (in_place ? " in place" : ""));
    }
    EXPECT_TRUE(ok(xmsg_op_free(&op)));
  }
}

namespace {

void expect_error(int code, int expected, const char* needle, const char* what) {
  EXPECT_EQ(code, expected) << what << ": " << xmsg_last_error_message();
  EXPECT_NE(std::string(xmsg_last_error_message()).find(needle), std::string::npos)
      << what << ": message \"" << xmsg_last_error_message() << "\" does not mention \"" << needle << "\"";
}

}  // namespace

TEST(Errors, EachBadArgumentIsNamed) {
  // Every rank makes the same bad call, so no rank is left waiting in a collective; checks
  // that only the root makes run on XMSG_COMM_SELF.
  int x[4] = {1, 2, 3, 4}, y[64] = {};
  const xmsg_comm_t W = XMSG_COMM_WORLD, S = XMSG_COMM_SELF;
  const int64_t one[1] = {1}, negative[1] = {-1}, zero[1] = {0};
  expect_error(xmsg_barrier(12345), XMSG_ERR_COMM, "xmsg_barrier", "barrier on an invalid comm");
  expect_error(xmsg_bcast(x, 1, XMSG_INT, g_world_size, W), XMSG_ERR_ROOT, "root", "bcast root == size");
  expect_error(xmsg_bcast(x, 1, XMSG_INT, -1, W), XMSG_ERR_ROOT, "root -1", "bcast root -1");
  expect_error(xmsg_bcast(x, -3, XMSG_INT, 0, W), XMSG_ERR_COUNT, "count -3", "bcast negative count");
  expect_error(xmsg_bcast(nullptr, 2, XMSG_INT, 0, W), XMSG_ERR_BUFFER, "buf", "bcast NULL buffer");
  expect_error(xmsg_bcast(XMSG_IN_PLACE, 2, XMSG_INT, 0, W), XMSG_ERR_BUFFER, "XMSG_IN_PLACE", "bcast in place");
  expect_error(xmsg_bcast(x, 1, 999, 0, W), XMSG_ERR_TYPE, "datatype", "bcast bad datatype");
  EXPECT_EQ(xmsg_bcast(nullptr, 0, XMSG_INT, 0, W), XMSG_SUCCESS) << "NULL with count 0 is fine";
  expect_error(xmsg_reduce(x, y, 1, XMSG_C_BOOL, XMSG_SUM, 0, W), XMSG_ERR_OP, "XMSG_SUM is not defined for datatype XMSG_C_BOOL", "reduce SUM over C_BOOL");
  expect_error(xmsg_allreduce(x, y, 1, XMSG_FLOAT, XMSG_BAND, W), XMSG_ERR_OP, "XMSG_BAND", "allreduce BAND over FLOAT");
  expect_error(xmsg_allreduce(x, y, 1, XMSG_INT, XMSG_OP_NULL, W), XMSG_ERR_OP, "XMSG_OP_NULL", "allreduce OP_NULL");
  expect_error(xmsg_allreduce(x, y, 1, XMSG_INT, 4242, W), XMSG_ERR_OP, "op 4242", "allreduce unknown op");
  expect_error(xmsg_allreduce(x, y, 1, XMSG_CHAR, XMSG_MAXLOC, W), XMSG_ERR_OP, "XMSG_MAXLOC is not defined for datatype XMSG_CHAR", "allreduce MAXLOC over CHAR");
  expect_error(xmsg_allreduce(nullptr, y, 1, XMSG_INT, XMSG_SUM, W), XMSG_ERR_BUFFER, "sendbuf", "allreduce NULL sendbuf");
  expect_error(xmsg_allreduce(x, XMSG_IN_PLACE, 1, XMSG_INT, XMSG_SUM, W), XMSG_ERR_BUFFER, "recvbuf", "allreduce recvbuf in place");
  expect_error(xmsg_reduce(x, y, -1, XMSG_INT, XMSG_SUM, 0, W), XMSG_ERR_COUNT, "count -1", "reduce negative count");
  expect_error(xmsg_reduce(x, nullptr, 1, XMSG_INT, XMSG_SUM, 0, S), XMSG_ERR_BUFFER, "recvbuf", "reduce NULL recvbuf at root");
  expect_error(xmsg_reduce(x, y, 1, XMSG_INT, XMSG_SUM, 1, S), XMSG_ERR_ROOT, "root 1", "reduce root out of range");
  expect_error(xmsg_gather(x, 1, XMSG_INT, y, 2, XMSG_INT, 0, S), XMSG_ERR_COUNT, "recvcount", "gather mismatched counts");
  expect_error(xmsg_gather(x, -1, XMSG_INT, y, 1, XMSG_INT, 0, W), XMSG_ERR_COUNT, "sendcount -1", "gather negative sendcount");
  expect_error(xmsg_gatherv(x, 1, XMSG_INT, y, nullptr, zero, XMSG_INT, 0, S), XMSG_ERR_ARG, "recvcounts is NULL", "gatherv NULL recvcounts");
  expect_error(xmsg_gatherv(x, 1, XMSG_INT, y, negative, zero, XMSG_INT, 0, S), XMSG_ERR_COUNT, "recvcounts[0] = -1", "gatherv negative recvcount");
  expect_error(xmsg_gatherv(x, 1, XMSG_INT, y, one, negative, XMSG_INT, 0, S), XMSG_ERR_ARG, "displs[0] = -1", "gatherv negative displ");
  expect_error(xmsg_scatter(x, 1, XMSG_INT, y, 1, XMSG_INT, 3, S), XMSG_ERR_ROOT, "root 3", "scatter root out of range");
  expect_error(xmsg_scatter(nullptr, 1, XMSG_INT, y, 1, XMSG_INT, 0, S), XMSG_ERR_BUFFER, "sendbuf", "scatter NULL sendbuf at root");
  expect_error(xmsg_scatterv(x, one, nullptr, XMSG_INT, y, 1, XMSG_INT, 0, S), XMSG_ERR_ARG, "displs is NULL", "scatterv NULL displs");
  expect_error(xmsg_allgather(x, 1, XMSG_INT, nullptr, 1, XMSG_INT, W), XMSG_ERR_BUFFER, "recvbuf", "allgather NULL recvbuf");
  expect_error(xmsg_allgather(x, 1, XMSG_INT, y, 1, 0, W), XMSG_ERR_TYPE, "recvtype", "allgather bad recvtype");
  expect_error(xmsg_allgatherv(x, 1, XMSG_INT, y, nullptr, nullptr, XMSG_INT, W), XMSG_ERR_ARG, "recvcounts", "allgatherv NULL arrays");
  expect_error(xmsg_alltoall(x, 1, XMSG_INT, y, -2, XMSG_INT, W), XMSG_ERR_COUNT, "recvcount -2", "alltoall negative recvcount");
  expect_error(xmsg_alltoall(x, 1, XMSG_INT, y, 1, XMSG_INT, XMSG_COMM_NULL), XMSG_ERR_COMM, "xmsg_alltoall", "alltoall COMM_NULL");
  expect_error(xmsg_alltoallv(x, one, zero, XMSG_INT, y, one, nullptr, XMSG_INT, S), XMSG_ERR_ARG, "rdispls is NULL", "alltoallv NULL rdispls");
  expect_error(xmsg_alltoallv(x, negative, zero, XMSG_INT, y, one, zero, XMSG_INT, S), XMSG_ERR_COUNT, "sendcounts[0] = -1", "alltoallv negative sendcount");
  // The job still works after all that.
  EXPECT_TRUE(ok(xmsg_barrier(W)));
}

TEST(Types, ReductionLayoutMatchesRuntimeSizes) {
  for_each_type([](auto info) {
    size_t size = 0;
    EXPECT_TRUE(ok(xmsg_type_size(info.handle, &size))) << info.name;
    EXPECT_EQ(size, sizeof(typename decltype(info)::type)) << info.name;
  });
}

namespace {

// Non-zero ranks print only their failures, prefixed with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", g_world_rank, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) {
    std::fprintf(stderr, "xmsg_init failed: %s\n", xmsg_last_error_message());
    return 1;
  }
  xmsg_comm_rank(XMSG_COMM_WORLD, &g_world_rank);
  xmsg_comm_size(XMSG_COMM_WORLD, &g_world_size);
  make_comms();
  if (g_world_rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter);
  }
  int result = RUN_ALL_TESTS();
  for (auto& c : g_comms)
    if (c.handle != XMSG_COMM_WORLD) xmsg_comm_free(&c.handle);
  xmsg_finalize();
  return result;
}
