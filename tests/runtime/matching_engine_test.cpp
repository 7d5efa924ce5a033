// MatchingEngine alone: ordering rules between source buckets, wildcard lists and arrivals.
#include "MatchingEngine.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace xmsg::rt;

namespace {

struct Fixture : testing::Test {
  ContextQueues q{4};
  std::vector<std::unique_ptr<Request>> owned;
  uint64_t seq = 0;
  Request* post(int source, int tag) {
    owned.push_back(std::make_unique<Request>());
    Request* r = owned.back().get();
    r->peer = source;
    r->tag = tag;
    r->seq = ++seq;
    q.post(r);
    return r;
  }
  std::vector<std::unique_ptr<Unexpected>> msgs;
  Unexpected* arrive(int source, int tag) {
    msgs.push_back(std::make_unique<Unexpected>());
    Unexpected* u = msgs.back().get();
    u->source = source;
    u->tag = tag;
    q.add_unexpected(u);
    return u;
  }
};

TEST_F(Fixture, EarliestPostedWinsBetweenSourceAndWildcard) {
  Request* any_any = post(-1, XMSG_ANY_TAG);
  Request* src_tag = post(2, 5);
  EXPECT_EQ(q.take_posted(2, 5), any_any);  // posted first
  EXPECT_EQ(q.take_posted(2, 5), src_tag);
  EXPECT_EQ(q.take_posted(2, 5), nullptr);
}

TEST_F(Fixture, TagMismatchSkipsToLaterReceive) {
  Request* a = post(1, 7);
  Request* b = post(1, XMSG_ANY_TAG);
  Request* c = post(-1, 8);
  EXPECT_EQ(q.take_posted(1, 8), b);  // a wants tag 7; b (seq 2) beats c (seq 3)
  EXPECT_EQ(q.take_posted(3, 8), c);
  EXPECT_EQ(q.take_posted(1, 7), a);
  EXPECT_EQ(q.take_posted(1, 7), nullptr);
}

TEST_F(Fixture, UnexpectedFoundInArrivalOrderPerSourceAndAcrossSources) {
  Unexpected* m1 = arrive(3, 1);
  Unexpected* m2 = arrive(0, 2);
  Unexpected* m3 = arrive(3, 2);
  EXPECT_EQ(q.find_unexpected(-1, XMSG_ANY_TAG), m1);
  EXPECT_EQ(q.find_unexpected(-1, 2), m2);
  EXPECT_EQ(q.find_unexpected(3, 2), m3);
  EXPECT_EQ(q.find_unexpected(3, XMSG_ANY_TAG), m1);
  q.remove_unexpected(m1);
  EXPECT_EQ(q.find_unexpected(3, XMSG_ANY_TAG), m3);
  EXPECT_EQ(q.find_unexpected(1, XMSG_ANY_TAG), nullptr);
  q.remove_unexpected(m2);
  q.remove_unexpected(m3);
  EXPECT_EQ(q.find_unexpected(-1, XMSG_ANY_TAG), nullptr);
}

TEST_F(Fixture, UnpostRemovesFromTheRightList) {
  Request* a = post(-1, 1);
  Request* b = post(0, 1);
  q.unpost(a);
  EXPECT_FALSE(a->posted);
  EXPECT_EQ(q.take_posted(0, 1), b);
  EXPECT_EQ(q.take_posted(2, 1), nullptr);
}

TEST(MatchingEngine, ContextsAreCreatedLazilyAndIndependent) {
  MatchingEngine m(2);
  Request r;
  r.peer = 1;
  r.tag = 4;
  m.context(9).post(&r);
  EXPECT_EQ(m.context(8).take_posted(1, 4), nullptr);
  EXPECT_EQ(m.context(9).take_posted(1, 4), &r);
  int n = 0;
  m.for_each([&](uint32_t, ContextQueues&) { ++n; });
  EXPECT_EQ(n, 2);
}

}  // namespace
