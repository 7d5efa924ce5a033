// Runs the real xmsg_plan binary: its JSON is what people paste into reports, and its argument
// errors are what people see first.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <utility>

// Only for sizeof: the card the lazy wire-up publishes (the test target has no include path to
// the transport, and the figures below must follow the card if it changes size).
#include "../../transport/verbs/WireUpCard.hpp"

namespace {

struct Run {
  int exit_code;
  std::string out;  // stdout and stderr together
};

Run run_plan(const std::string& args) {
  const std::string command = std::string(XMSG_PLAN_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(PlanTool, JsonHasTheDocumentedKeysAndValues) {
  const auto xrc = run_plan("--nodes 16 --ppn 4 --json");
  ASSERT_EQ(xrc.exit_code, 0) << xrc.out;
  const auto j = nlohmann::json::parse(xrc.out);
  EXPECT_EQ(j.at("mode"), "xrc");
  EXPECT_EQ(j.at("nodes"), 16);
  EXPECT_EQ(j.at("ppn"), 4);
  EXPECT_EQ(j.at("qps_per_rank").get<double>(), 30.0);
  EXPECT_EQ(j.at("qps_per_node").get<double>(), 120.0);
  EXPECT_EQ(j.at("recv_memory_per_rank_bytes").get<long long>(), 256LL * 8192);
  EXPECT_EQ(j.at("pmix_bytes_per_rank").get<double>(), 36.0 + 8 * 30 + 4);
  // Today's wire-up: every rank's record (+ node key) reaches every node; a rank decodes the
  // records of the 60 ranks on other nodes and reads all 64 node keys; every QP at start-up.
  EXPECT_EQ(j.at("wireup_scheme"), "eager");
  EXPECT_EQ(j.at("pmix_bytes_per_node").get<double>(), 64.0 * (36 + 8 * 30 + 4));
  EXPECT_EQ(j.at("wireup_memory_per_rank_bytes").get<double>(), 60.0 * (36 + 8 * 30) + 4.0 * 64);
  EXPECT_EQ(j.at("gets_per_rank").get<double>(), 64.0 + 60.0);
  EXPECT_EQ(j.at("qps_at_start_per_rank").get<double>(), 30.0);
  EXPECT_EQ(j.at("qps_after_alltoall_per_rank").get<double>(), 30.0);
  // The 13 keys above, plus the per-scheme "wireup" object and the "tcp" object.
  EXPECT_EQ(j.size(), 15u);
  // wireup.eager repeats the top-level figures; traffic adds nothing to them.
  const auto& e = j.at("wireup").at("eager");
  EXPECT_EQ(e.at("wireup_scheme"), "eager");
  for (const char* key : {"pmix_bytes_per_rank", "pmix_bytes_per_node", "wireup_memory_per_rank_bytes", "gets_per_rank",
                          "qps_at_start_per_rank", "qps_after_alltoall_per_rank"}) {
    EXPECT_EQ(e.at(key), j.at(key)) << key;
  }
  EXPECT_EQ(e.at("wireup_memory_after_alltoall_per_rank_bytes"), j.at("wireup_memory_per_rank_bytes"));
  EXPECT_EQ(e.at("gets_after_alltoall_per_rank"), j.at("gets_per_rank"));
  EXPECT_EQ(e.at("handshakes_after_alltoall_per_rank").get<double>(), 0.0);
  EXPECT_EQ(e.size(), 10u);

  const auto rc = run_plan("--nodes 16 --ppn 4 --mode rc --json --srq-depth 64");
  ASSERT_EQ(rc.exit_code, 0) << rc.out;
  const auto k = nlohmann::json::parse(rc.out);
  EXPECT_EQ(k.at("mode"), "rc");
  EXPECT_EQ(k.at("qps_per_rank").get<double>(), 60.0);
  EXPECT_EQ(k.at("qps_per_node").get<double>(), 240.0);
  EXPECT_EQ(k.at("recv_memory_per_rank_bytes").get<long long>(), 64LL * 8192);
}

constexpr double kCard = sizeof(xmsg::verbs::WireUpCard);
constexpr double kRoute = 16;  // VerbsTransport::Route per remote peer talked to

nlohmann::json plan_json(const std::string& args) {
  const auto r = run_plan(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

struct LazyCase {
  int nodes, ppn;
  const char* mode;
  double qps_after;   // per rank, as the eager plan
  double handshakes;  // XRC: one per remote node; RC: one per remote rank
};

TEST(PlanTool, LazySchemeIsOneCardAndConnectionsOnDemand) {
  // By hand: ranks = N*P, remote = (N-1)*P. XRC QPs = (N-1) INI + (N-1)P/P TGT; RC QPs = remote.
  const LazyCase cases[] = {
      {2, 2, "xrc", 1 + 1, 1},  // 4 ranks, 2 remote
      {2, 2, "rc", 2, 2},
      {4, 3, "xrc", 3 + 3, 3},  // 12 ranks, 9 remote
      {4, 3, "rc", 9, 9},
  };
  for (const auto& c : cases) {
    const std::string args = "--nodes " + std::to_string(c.nodes) + " --ppn " + std::to_string(c.ppn) + " --mode " + c.mode;
    const auto j = plan_json(args);
    ASSERT_TRUE(j.contains("wireup")) << args;
    const auto& w = j.at("wireup").at("lazy");
    const double ranks = c.nodes * c.ppn;
    const double remote = (c.nodes - 1) * c.ppn;
    const double before = 2 * ranks + kCard;
    EXPECT_EQ(w.at("wireup_scheme"), "lazy") << args;
    EXPECT_EQ(w.at("card_bytes").get<double>(), kCard) << args;
    EXPECT_EQ(w.at("pmix_bytes_per_rank").get<double>(), kCard) << args;
    EXPECT_EQ(w.at("pmix_bytes_per_node").get<double>(), 0.0) << args;
    EXPECT_EQ(w.at("wireup_memory_per_rank_bytes").get<double>(), before) << args;
    EXPECT_EQ(w.at("gets_per_rank").get<double>(), 0.0) << args;
    EXPECT_EQ(w.at("qps_at_start_per_rank").get<double>(), 0.0) << args;
    EXPECT_EQ(w.at("qps_after_alltoall_per_rank").get<double>(), c.qps_after) << args;
    EXPECT_EQ(w.at("qps_after_alltoall_per_rank"), j.at("qps_per_rank")) << args;
    EXPECT_EQ(w.at("wireup_memory_after_alltoall_per_rank_bytes").get<double>(), before + remote * (kCard + kRoute))
        << args;
    EXPECT_EQ(w.at("gets_after_alltoall_per_rank").get<double>(), remote) << args;
    EXPECT_EQ(w.at("handshakes_after_alltoall_per_rank").get<double>(), c.handshakes) << args;
    EXPECT_EQ(w.size(), 11u) << args;
  }
  // 2 x 2 XRC spelled out: 8 + card before traffic, + 2 x (card + 16) after.
  const auto small = plan_json("--nodes 2 --ppn 2");
  EXPECT_EQ(small.at("wireup").at("lazy").at("wireup_memory_after_alltoall_per_rank_bytes").get<double>(),
            8 + kCard + 2 * (kCard + 16));
}

TEST(PlanTool, EagerFiguresUnchangedBySchemeSelection) {
  // Top-level keys describe eager whatever --scheme says; --scheme only picks wireup's entries.
  const auto both = plan_json("--nodes 4 --ppn 3");
  const auto lazy = plan_json("--nodes 4 --ppn 3 --scheme lazy");
  const auto eager = plan_json("--nodes 4 --ppn 3 --scheme eager");
  // 4 x 3 XRC by hand: 6 QPs, record 36 + 8*6, node key 4; 12 records to every node; 9 remote
  // records decoded + 12 node keys; 12 node-key gets + 9 record gets.
  EXPECT_EQ(both.at("wireup_scheme"), "eager");
  EXPECT_EQ(both.at("pmix_bytes_per_rank").get<double>(), 36 + 8 * 6 + 4);
  EXPECT_EQ(both.at("pmix_bytes_per_node").get<double>(), 12.0 * (36 + 8 * 6 + 4));
  EXPECT_EQ(both.at("wireup_memory_per_rank_bytes").get<double>(), 9.0 * (36 + 8 * 6) + 4 * 12);
  EXPECT_EQ(both.at("gets_per_rank").get<double>(), 12.0 + 9);
  EXPECT_EQ(both.at("qps_at_start_per_rank").get<double>(), 6.0);
  for (const auto* j : {&lazy, &eager}) {
    for (const char* key : {"mode", "nodes", "ppn", "qps_per_rank", "qps_per_node", "recv_memory_per_rank_bytes",
                            "pmix_bytes_per_rank", "wireup_scheme", "pmix_bytes_per_node", "wireup_memory_per_rank_bytes",
                            "gets_per_rank", "qps_at_start_per_rank", "qps_after_alltoall_per_rank", "tcp"}) {
      EXPECT_EQ(j->at(key), both.at(key)) << key;
    }
  }
  EXPECT_EQ(both.at("wireup").size(), 2u);
  EXPECT_EQ(lazy.at("wireup").size(), 1u);
  EXPECT_EQ(lazy.at("wireup").at("lazy"), both.at("wireup").at("lazy"));
  EXPECT_EQ(eager.at("wireup").size(), 1u);
  EXPECT_EQ(eager.at("wireup").at("eager"), both.at("wireup").at("eager"));
}

TEST(PlanTool, LazyMeetsIssue18TargetsAt1000x64Xrc) {
  const auto j = plan_json("--nodes 1000 --ppn 64 --mode xrc");
  const auto& w = j.at("wireup").at("lazy");
  EXPECT_LE(w.at("pmix_bytes_per_node").get<double>(), 8.0 * 1024 * 1024);
  EXPECT_LE(w.at("wireup_memory_per_rank_bytes").get<double>(), 1.0 * 1024 * 1024);
  EXPECT_EQ(w.at("qps_at_start_per_rank").get<double>(), 0.0);
  EXPECT_EQ(w.at("wireup_memory_per_rank_bytes").get<double>(), 2 * 64000 + kCard);
  EXPECT_EQ(w.at("qps_after_alltoall_per_rank").get<double>(), 2 * 999);
  EXPECT_EQ(w.at("gets_after_alltoall_per_rank").get<double>(), 999 * 64);
  EXPECT_EQ(w.at("handshakes_after_alltoall_per_rank").get<double>(), 999);
  // The eager scheme does not (978 MiB per node, 1998 QPs before any traffic).
  const auto& e = j.at("wireup").at("eager");
  EXPECT_GT(e.at("pmix_bytes_per_node").get<double>(), 8.0 * 1024 * 1024);
  EXPECT_EQ(e.at("qps_at_start_per_rank").get<double>(), 2 * 999);
}

TEST(PlanTool, TcpWireUpReadsAddressesOnFirstConnect) {
  // 4 x 3: 12 ranks, 9 peers (ranks on other nodes). Address at most 21 bytes; rank 0's secret
  // 64 bytes (no launcher secret), the only data at start-up; per peer a sockaddr_in (16), per
  // job rank a pointer; the address of each peer read (and kept) on first connect.
  for (const char* mode : {"xrc", "rc"}) {
    const auto j = plan_json(std::string("--nodes 4 --ppn 3 --mode ") + mode);
    const auto& t = j.at("tcp");
    EXPECT_EQ(t.at("peers_per_rank").get<double>(), 9.0);
    EXPECT_EQ(t.at("address_bytes").get<double>(), 21.0);
    EXPECT_EQ(t.at("secret_bytes").get<double>(), 64.0);
    EXPECT_EQ(t.at("pmix_bytes_per_rank").get<double>(), 21.0);
    EXPECT_EQ(t.at("pmix_bytes_per_node").get<double>(), 64.0);
    EXPECT_EQ(t.at("wireup_memory_per_rank_bytes").get<double>(), 12.0 * sizeof(void*) + 9.0 * 16);
    EXPECT_EQ(t.at("gets_per_rank").get<double>(), 1.0);
    EXPECT_EQ(t.at("connections_at_start_per_rank").get<double>(), 0.0);
    EXPECT_EQ(t.at("connections_after_alltoall_per_rank").get<double>(), 9.0);
    EXPECT_EQ(t.at("wireup_memory_after_alltoall_per_rank_bytes").get<double>(),
              12.0 * sizeof(void*) + 9.0 * (21 + 16));
    EXPECT_EQ(t.at("gets_after_alltoall_per_rank").get<double>(), 10.0);
    EXPECT_EQ(t.at("handshakes_after_alltoall_per_rank").get<double>(), 9.0);
    EXPECT_EQ(t.size(), 12u);
  }
  const auto big = plan_json("--nodes 1000 --ppn 64");
  EXPECT_EQ(big.at("tcp").at("pmix_bytes_per_node").get<double>(), 64.0);
  EXPECT_EQ(big.at("tcp").at("gets_per_rank").get<double>(), 1.0);
  EXPECT_EQ(big.at("tcp").at("gets_after_alltoall_per_rank").get<double>(), 999.0 * 64 + 1);
}

TEST(PlanTool, TableCoversTheGridQuickly) {
  const auto r = run_plan("--table");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("| N | ppn | transport | scheme | PMIx B published/rank | PMIx B received/node at start |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("- lazy: 0 B received per node"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("targets met"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("- eager: 978.03 MiB received per node"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| 1000 | 64 | verbs xrc | eager | 15.65 KiB | 978.03 MiB | 977.05 MiB | 127936 | 1998 | 1998 |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| 1000 | 64 | verbs rc | lazy | " + std::to_string(static_cast<int>(kCard)) + " B | 0 B |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| 1000 | 64 | tcp | - | 21 B | 64 B |"), std::string::npos) << r.out;
  // 12 jobs x (eager, lazy) x (xrc, rc) + 12 tcp rows.
  std::size_t rows = 0;
  for (std::size_t at = r.out.find("\n| "); at != std::string::npos; at = r.out.find("\n| ", at + 1)) ++rows;
  EXPECT_EQ(rows, 1u + 12 * 5);

  const auto lazy_only = run_plan("--table --scheme lazy");
  ASSERT_EQ(lazy_only.exit_code, 0) << lazy_only.out;
  EXPECT_EQ(lazy_only.out.find("| eager |"), std::string::npos) << lazy_only.out;
  EXPECT_NE(lazy_only.out.find("| lazy |"), std::string::npos) << lazy_only.out;
}

TEST(PlanTool, TextNamesEveryFigure) {
  const auto r = run_plan("--nodes 2 --ppn 3 --rank 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* want : {"QPs per rank", "QPs per node", "receive memory/rank", "PMIx bytes/rank",
                           "rank 4 (node 1", "xrc-ini -> node 0", "scheme eager", "scheme lazy", "tcp (",
                           "after all-to-all", "issue-18 targets", "xmsg.verbs.card", "xmsg.tcp.addr"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << "missing '" << want << "' in:\n" << r.out;
  }
  const auto eager_only = run_plan("--nodes 2 --ppn 3 --scheme eager");
  ASSERT_EQ(eager_only.exit_code, 0) << eager_only.out;
  EXPECT_NE(eager_only.out.find("scheme eager"), std::string::npos) << eager_only.out;
  EXPECT_EQ(eager_only.out.find("scheme lazy"), std::string::npos) << eager_only.out;
}

TEST(PlanTool, BadArgumentsExitTwoNamingTheArgument) {
  const std::pair<const char*, const char*> cases[] = {
      {"--nodes 0 --ppn 2", "--nodes"},
      {"--nodes 2 --ppn 0", "--ppn"},
      {"--nodes -4 --ppn 2", "--nodes"},
      {"--nodes abc --ppn 2", "--nodes"},
      {"--ppn 2", "--nodes"},
      {"--nodes 2", "--ppn"},
      {"--nodes 2 --ppn 2 --mode ud", "--mode"},
      {"--nodes 100000 --ppn 1000", "--nodes"},
      {"--nodes 2 --ppn 2 --srq-depth 1", "--srq-depth"},
      {"--nodes 2 --ppn 2 --eager-buffer 3", "--eager-buffer"},
      {"--nodes 2 --ppn 2 --rank 4", "--rank"},
      {"--nodes 2 --ppn 2 --frobnicate", "--frobnicate"},
      {"--nodes 2 --ppn 2 --scheme fast", "--scheme"},
      {"--nodes 2 --ppn 2 --scheme", "--scheme"},
      {"--table --scheme none", "--scheme"},
      {"--table --nodes 2", "--nodes"},
      {"--table --json", "--json"},
  };
  for (const auto& [args, named] : cases) {
    const auto r = run_plan(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(named), std::string::npos) << args << " should name " << named << ", said:\n" << r.out;
  }
}

}  // namespace
