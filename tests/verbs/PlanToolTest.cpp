// Runs the real xmsg_plan binary: its JSON is what people paste into reports, and its argument
// errors are what people see first.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

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
  EXPECT_EQ(j.size(), 13u);

  const auto rc = run_plan("--nodes 16 --ppn 4 --mode rc --json --srq-depth 64");
  ASSERT_EQ(rc.exit_code, 0) << rc.out;
  const auto k = nlohmann::json::parse(rc.out);
  EXPECT_EQ(k.at("mode"), "rc");
  EXPECT_EQ(k.at("qps_per_rank").get<double>(), 60.0);
  EXPECT_EQ(k.at("qps_per_node").get<double>(), 240.0);
  EXPECT_EQ(k.at("recv_memory_per_rank_bytes").get<long long>(), 64LL * 8192);
}

TEST(PlanTool, TextNamesEveryFigure) {
  const auto r = run_plan("--nodes 2 --ppn 3 --rank 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* want : {"QPs per rank", "QPs per node", "receive memory/rank", "PMIx bytes/rank",
                           "rank 4 (node 1", "xrc-ini -> node 0"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << "missing '" << want << "' in:\n" << r.out;
  }
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
  };
  for (const auto& [args, named] : cases) {
    const auto r = run_plan(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(named), std::string::npos) << args << " should name " << named << ", said:\n" << r.out;
  }
}

}  // namespace
