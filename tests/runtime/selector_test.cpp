// TransportSelector: default rule and XMSG_TRANSPORTS overrides.
#include <xmsg/transport/selector.hpp>

#include <gtest/gtest.h>

using xmsg::transport::TransportSelector;

TEST(TransportSelector, DefaultPrefersShmThenVerbsThenTcp) {
  TransportSelector s("", {"tcp", "shm", "verbs"});
  EXPECT_EQ(s.choose(true, {"shm", "verbs", "tcp"}), "shm");
  EXPECT_EQ(s.choose(false, {"shm", "verbs", "tcp"}), "verbs");
  EXPECT_EQ(s.choose(false, {"shm", "tcp"}), "tcp");  // verbs did not come up here
  EXPECT_EQ(s.choose(false, {"shm"}), std::nullopt);
  EXPECT_EQ(s.wanted(1), std::vector<std::string>{"shm"});
  EXPECT_EQ(s.wanted(2), (std::vector<std::string>{"shm", "verbs", "tcp"}));
}

TEST(TransportSelector, OverrideForcesTcpEvenOnOneNode) {
  TransportSelector s("tcp", {"shm", "tcp"});
  EXPECT_EQ(s.choose(true, {"tcp"}), "tcp");
  EXPECT_EQ(s.wanted(1), std::vector<std::string>{"tcp"});
}

TEST(TransportSelector, OverrideOrderIsRespected) {
  TransportSelector s("tcp,shm", {"shm", "tcp"});
  EXPECT_EQ(s.choose(true, {"shm", "tcp"}), "tcp");
  TransportSelector only_shm("shm", {"shm", "tcp"});
  EXPECT_EQ(only_shm.choose(false, {"shm"}), std::nullopt);
}

TEST(TransportSelector, BadNamesAreRejectedByName) {
  try {
    TransportSelector s("shm,carrier-pigeon", {"shm"});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("carrier-pigeon"), std::string::npos);
  }
  EXPECT_THROW(TransportSelector("verbs", {"shm", "tcp"}), std::invalid_argument);  // not built
  EXPECT_THROW(TransportSelector(",", {"shm"}), std::invalid_argument);
}

// The runtime tells verbs (ConnectOptions) that it carries same-node pairs: only when
// XMSG_TRANSPORTS names it first, so every rank plans the same layout.
TEST(TransportSelector, SameNodePairsGoToTheTransportListedFirst) {
  const std::vector<std::string> built{"shm", "verbs", "tcp"};
  EXPECT_FALSE(TransportSelector("", built).carries_same_node_pairs("verbs"));
  EXPECT_TRUE(TransportSelector("", built).carries_same_node_pairs("shm"));
  EXPECT_TRUE(TransportSelector("verbs", built).carries_same_node_pairs("verbs"));
  EXPECT_TRUE(TransportSelector("verbs,tcp", built).carries_same_node_pairs("verbs"));
  EXPECT_TRUE(TransportSelector(",verbs", built).carries_same_node_pairs("verbs"));
  EXPECT_FALSE(TransportSelector("shm,verbs", built).carries_same_node_pairs("verbs"));
  EXPECT_FALSE(TransportSelector("tcp,verbs", built).carries_same_node_pairs("verbs"));
  EXPECT_TRUE(TransportSelector("tcp,verbs", built).carries_same_node_pairs("tcp"));
}
