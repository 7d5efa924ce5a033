// xmsgrun --stats FILE: the per-node counts of fence and direct-modex traffic must agree with
// what the ranks exchanged. bootstrap_check puts 0 B + 1 B + 64 KiB per rank, so on 4 ranks
// over 2 nodes every node contributes at least 2 x 65537 bytes and receives at least the other
// node's 2 x 65537. Only lower bounds, generous upper bounds (PMIx adds a few bytes per key)
// and relations that hold by construction are checked, never PMIx's exact encoding.
#include "Options.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

constexpr std::uint64_t kValueBytesPerRank = 0 + 1 + 64 * 1024;  // bootstrap_check's three keys
constexpr std::uint64_t kOverheadPerRank = 1024;                 // far above PMIx's key names etc.

struct JobRun {
  int status = -1;
  std::string output;
};

std::string quote(const std::string& s) {
  std::string out(1, '\'');
  for (char c : s) {
    if (c == '\'') out.append("'\\''");
    else out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

JobRun run(const std::vector<std::string>& args) {
  std::string cmd = quote(XMSGRUN);
  for (const auto& a : args) cmd.append(" ").append(quote(a));
  cmd.append(" 2>&1");
  JobRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

std::string stats_path(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path(tmp && *tmp ? tmp : "/tmp");
  path.append("/xmsgrun_stats_test.").append(std::to_string(::getpid())).append(".").append(name).append(".json");
  return path;
}

json read_stats(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "no stats file " << path;
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not JSON";
  std::remove(path.c_str());
  return j;
}

std::uint64_t u(const json& node, const char* key) {
  EXPECT_TRUE(node.contains(key) && node[key].is_number_unsigned()) << "missing " << key << " in " << node.dump();
  return node.value(key, std::uint64_t{0});
}

const char* kCounters[] = {"fences",           "fences_with_data",      "fence_bytes_sent",
                           "fence_bytes_received", "fence_bytes_received_remote", "dmodex_asked",
                           "dmodex_answered",  "dmodex_failed",         "dmodex_bytes_sent",
                           "dmodex_bytes_received"};

// Shape shared by every stats file: job fields, one entry per node, totals = sums.
void check_shape(const json& j, int ranks, int nodes, int exit_status) {
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.value("ranks", -1), ranks);
  EXPECT_EQ(j.value("nodes", -1), nodes);
  EXPECT_EQ(j.value("exit_status", -1), exit_status);
  EXPECT_TRUE(j.value("nspace", std::string()).starts_with("xmsg."));
  ASSERT_TRUE(j["per_node"].is_array());
  ASSERT_EQ(j["per_node"].size(), static_cast<size_t>(nodes));
  int rank_sum = 0;
  for (int k = 0; k < nodes; ++k) {
    EXPECT_EQ(j["per_node"][k].value("node", -1), k);
    rank_sum += j["per_node"][k].value("ranks", 0);
  }
  EXPECT_EQ(rank_sum, ranks);
  for (const char* c : kCounters) {
    std::uint64_t sum = 0;
    for (const auto& n : j["per_node"]) sum += u(n, c);
    EXPECT_EQ(u(j["totals"], c), sum) << c;
  }
  ASSERT_TRUE(j["wall_s"].is_number());
  EXPECT_GT(j["wall_s"].get<double>(), 0.0);
}

TEST(Stats, OptionIsParsed) {
  using namespace xmsg::launcher;
  auto env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto out = parse_options({"-n", "2", "--stats", "s.json", "/bin/true"}, env);
  ASSERT_EQ(out.kind, ParseOutcome::Kind::Run) << out.message;
  EXPECT_EQ(out.options.stats_path, "s.json");
  out = parse_options({"-n", "2", "/bin/true"}, env);
  ASSERT_EQ(out.kind, ParseOutcome::Kind::Run) << out.message;
  EXPECT_TRUE(out.options.stats_path.empty());
  out = parse_options({"-n", "2", "--stats", "", "/bin/true"}, env);
  EXPECT_EQ(out.kind, ParseOutcome::Kind::Error);
}

TEST(Stats, CollectedFenceBringsEveryNodeTheOtherNodesBytes) {
  const std::string path = stats_path("collect");
  JobRun r = run({"-n", "4", "--nodes", "2", "--stats", path, BOOTSTRAP_CHECK, "--nodes", "2"});
  ASSERT_EQ(r.status, 0) << r.output;
  json j = read_stats(path);
  check_shape(j, 4, 2, 0);
  std::uint64_t all_sent = 0;
  for (const auto& n : j["per_node"]) all_sent += u(n, "fence_bytes_sent");
  for (const auto& n : j["per_node"]) {
    SCOPED_TRACE(n.dump());
    // One fence with data (the exchange), one without (before finalize).
    EXPECT_GE(u(n, "fences"), 2u);
    EXPECT_GE(u(n, "fences_with_data"), 1u);
    const std::uint64_t sent = u(n, "fence_bytes_sent");
    EXPECT_GE(sent, 2 * kValueBytesPerRank);
    EXPECT_LE(sent, 2 * (kValueBytesPerRank + kOverheadPerRank));
    // The coordinator hands every node all contributions, its own included.
    EXPECT_EQ(u(n, "fence_bytes_received"), all_sent);
    EXPECT_EQ(u(n, "fence_bytes_received_remote"), all_sent - sent);
    EXPECT_GE(u(n, "fence_bytes_received_remote"), 2 * kValueBytesPerRank);
    // Collected data is local: no rank had to ask another node.
    EXPECT_EQ(u(n, "dmodex_asked"), 0u);
    EXPECT_EQ(u(n, "dmodex_bytes_received"), 0u);
    ASSERT_TRUE(n["first_fence_done_s"].is_number());
  }
  ASSERT_TRUE(j["startup_s"].is_number());
  ASSERT_TRUE(j["last_fence_s"].is_number());
  EXPECT_GT(j["startup_s"].get<double>(), 0.0);
  EXPECT_LE(j["startup_s"].get<double>(), j["last_fence_s"].get<double>());
  EXPECT_LE(j["last_fence_s"].get<double>(), j["wall_s"].get<double>());
  EXPECT_GE(j.value("fence_rounds", 0), 2);
}

TEST(Stats, DirectModexIsCountedOnBothSides) {
  const std::string path = stats_path("dmodex");
  JobRun r = run({"-n", "4", "--nodes", "2", "--stats", path, BOOTSTRAP_CHECK, "--nodes", "2", "--no-collect"});
  ASSERT_EQ(r.status, 0) << r.output;
  json j = read_stats(path);
  check_shape(j, 4, 2, 0);
  const auto& n0 = j["per_node"][0];
  const auto& n1 = j["per_node"][1];
  for (const auto* n : {&n0, &n1}) {
    SCOPED_TRACE(n->dump());
    EXPECT_GE(u(*n, "fences"), 2u);
    // Fences without data collection carry (next to) nothing.
    EXPECT_LE(u(*n, "fence_bytes_received"), 2 * kOverheadPerRank);
    // Each node needs both remote ranks' data: at least one request per remote rank, at most
    // one per (local rank, remote rank) pair when the server does not merge them.
    EXPECT_GE(u(*n, "dmodex_asked"), 2u);
    EXPECT_LE(u(*n, "dmodex_asked"), 4u);
    EXPECT_EQ(u(*n, "dmodex_failed"), 0u);
    EXPECT_GE(u(*n, "dmodex_bytes_received"), 2 * kValueBytesPerRank);
    EXPECT_LE(u(*n, "dmodex_bytes_received"), u(*n, "dmodex_asked") * (kValueBytesPerRank + kOverheadPerRank));
  }
  // Every request reaches the other node and is answered there, bytes for bytes.
  EXPECT_EQ(u(n0, "dmodex_asked"), u(n1, "dmodex_answered"));
  EXPECT_EQ(u(n1, "dmodex_asked"), u(n0, "dmodex_answered"));
  EXPECT_EQ(u(n0, "dmodex_bytes_received"), u(n1, "dmodex_bytes_sent"));
  EXPECT_EQ(u(n1, "dmodex_bytes_received"), u(n0, "dmodex_bytes_sent"));
}

TEST(Stats, WrittenAlsoWhenTheJobTimesOut) {
  const std::string path = stats_path("timeout");
  JobRun r = run({"-n", "2", "--nodes", "2", "--timeout", "1", "--stats", path, JOB_ACTIONS, "sleep", "30"});
  ASSERT_EQ(r.status, 124) << r.output;
  json j = read_stats(path);
  check_shape(j, 2, 2, 124);
  // job_actions fences once before it sleeps.
  ASSERT_TRUE(j["startup_s"].is_number());
  for (const auto& n : j["per_node"]) EXPECT_GE(u(n, "fences"), 1u);
}

TEST(Stats, UnwritablePathFailsBeforeTheJobStarts) {
  JobRun r = run({"-n", "2", "--stats", "/nonexistent-dir/stats.json", JOB_ACTIONS, "env", "HOME"});
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--stats: cannot open /nonexistent-dir/stats.json"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("rank 0 HOME"), std::string::npos) << "the job ran: " << r.output;
}

}  // namespace
