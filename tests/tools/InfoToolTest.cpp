// Runs the real xmsg_info binary: its JSON is what people paste into bug reports, and it must
// say why a transport is unusable rather than leave it out.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <utility>

namespace {

struct Run {
  int exit_code;
  std::string out;  // stdout (and stderr when `merge`)
};

Run run_info(const std::string& args, const std::string& env = "", bool merge = true) {
  const std::string command = (env.empty() ? "" : "env " + env + " ") + std::string(XMSG_INFO_PATH) + " " + args +
                              (merge ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

nlohmann::json info_json(const std::string& env = "") {
  // stderr apart: libibverbs may warn there on a host without RDMA.
  const auto r = run_info("--json", env, false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

TEST(InfoTool, TextRunsAndNamesEverySection) {
  const auto r = run_info("");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* want : {"version", "transports", "shm   :", "tcp   :", "verbs :", "topology", "cores",
                           "environment", "parameters", "[runtime]", "XMSG_RNDV_FRAGMENT=64K", "[verbs]"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << "missing '" << want << "' in:\n" << r.out;
  }
}

TEST(InfoTool, JsonHasVersionTransportsTopology) {
  const auto j = info_json();
  EXPECT_FALSE(j.at("version").get<std::string>().empty());
  EXPECT_TRUE(j.at("build").at("transports").is_array());
  EXPECT_TRUE(j.at("build").at("libraries").contains("pmix"));
  const auto& t = j.at("transports");
  for (const char* name : {"shm", "tcp", "verbs"}) {
    ASSERT_TRUE(t.contains(name)) << name;
    EXPECT_TRUE(t.at(name).at("usable").is_boolean()) << name;
    // Unusable always comes with the reason.
    if (!t.at(name).at("usable").get<bool>()) {
      EXPECT_FALSE(t.at(name).at("reason").get<std::string>().empty()) << name;
    }
  }
  EXPECT_TRUE(t.at("shm").at("usable").get<bool>()) << t.at("shm").dump();
  EXPECT_TRUE(t.at("tcp").at("usable").get<bool>()) << t.at("tcp").dump();
  EXPECT_TRUE(t.at("tcp").at("interfaces").is_array());
  EXPECT_TRUE(t.at("verbs").at("devices").is_array());
  const auto& topo = j.at("topology");
  EXPECT_GE(topo.at("cores").get<int>(), 1) << topo.dump();
  EXPECT_GE(topo.at("pus").get<int>(), topo.at("cores").get<int>()) << topo.dump();
  EXPECT_GE(topo.at("numa_nodes").get<int>(), 1) << topo.dump();
  EXPECT_TRUE(topo.at("rdma_devices").is_array());
  EXPECT_TRUE(j.at("parameters").at("declared").is_array());
}

// Every parameter of the table, each with its default, what it accepts, its documentation and
// where its value came from; a malformed value and an undeclared XMSG_* name are reported.
TEST(InfoTool, JsonNamesEveryDeclaredParameter) {
  const auto j = info_json("XMSG_EAGER_LIMIT=16K XMSG_SHM_QUEUE_BYTES=1x XMSG_TRANSPORT=tcp");
  const auto& declared = j.at("parameters").at("declared");
  std::set<std::string> names;
  for (const auto& p : declared) {
    const std::string name = p.at("name");
    names.insert(name);
    for (const char* field : {"layer", "type", "default", "accepts", "doc", "source"})
      EXPECT_TRUE(p.contains(field)) << name << " lacks " << field;
    EXPECT_FALSE(p.at("doc").get<std::string>().empty()) << name;
  }
  EXPECT_GE(names.size(), 60u);
  for (const char* name : {"XMSG_TRANSPORTS", "XMSG_EAGER_LIMIT", "XMSG_COLL_SHM_SLOT", "XMSG_SHM_QUEUE_BYTES",
                           "XMSG_TCP_POLL", "XMSG_VERBS_CONNECT", "XMSG_JOB_TMPDIR", "XMSG_LAUNCHER_TRACE"})
    EXPECT_TRUE(names.contains(name)) << name;
  for (const auto& p : declared) {
    if (p.at("name") == "XMSG_EAGER_LIMIT") {
      EXPECT_EQ(p.at("value"), "16K");
      EXPECT_EQ(p.at("source"), "environment");
      EXPECT_FALSE(p.contains("error")) << p.dump();
    }
    if (p.at("name") == "XMSG_SHM_QUEUE_BYTES") {
      EXPECT_NE(p.at("error").get<std::string>().find("XMSG_SHM_QUEUE_BYTES='1x': expected bytes in 64K..1G"),
                std::string::npos) << p.dump();
    }
    if (p.at("name") == "XMSG_TCP_POLL") {
      EXPECT_TRUE(p.at("value").is_null());
      EXPECT_EQ(p.at("source"), "default");
      EXPECT_EQ(p.at("default"), "recv");
    }
  }
  const auto& unknown = j.at("parameters").at("unknown");
  ASSERT_EQ(unknown.size(), 1u) << unknown.dump();
  EXPECT_EQ(unknown[0].at("name"), "XMSG_TRANSPORT");
  EXPECT_EQ(unknown[0].at("nearest"), "XMSG_TRANSPORTS");
  const auto only = run_info("--parameters", "XMSG_TRANSPORT=tcp");
  EXPECT_EQ(only.exit_code, 0) << only.out;
  EXPECT_NE(only.out.find("did you mean XMSG_TRANSPORTS?"), std::string::npos) << only.out;
  EXPECT_EQ(only.out.find("topology"), std::string::npos) << "--parameters prints only them";
  const auto bad_layer = run_info("--parameters-markdown nosuchlayer");
  EXPECT_EQ(bad_layer.exit_code, 2) << bad_layer.out;
  EXPECT_NE(bad_layer.out.find("nosuchlayer"), std::string::npos) << bad_layer.out;
}

TEST(InfoTool, VerbsSaysNoRdmaDeviceWhereThereIsNone) {
  const auto j = info_json();
  const auto& verbs = j.at("transports").at("verbs");
  if (!verbs.at("devices").empty()) GTEST_SKIP() << "this host has an RDMA device: " << verbs.dump();
  EXPECT_FALSE(verbs.at("usable").get<bool>());
  EXPECT_NE(verbs.at("reason").get<std::string>().find("no RDMA device"), std::string::npos) << verbs.dump();
  const auto text = run_info("");
  EXPECT_NE(text.out.find("verbs : not usable: no RDMA device"), std::string::npos) << text.out;
}

TEST(InfoTool, EnvironmentListsXmsgVariables) {
  const auto j = info_json("XMSG_FOO=1 XMSG_INFO_TEST_EMPTY= NOT_XMSG_BAR=2");
  const auto& env = j.at("environment");
  EXPECT_EQ(env.at("XMSG_FOO"), "1") << env.dump();
  EXPECT_EQ(env.at("XMSG_INFO_TEST_EMPTY"), "") << env.dump();
  EXPECT_FALSE(env.contains("NOT_XMSG_BAR")) << env.dump();
  const auto text = run_info("", "XMSG_FOO=1");
  EXPECT_NE(text.out.find("  XMSG_FOO=1\n"), std::string::npos) << text.out;
}

TEST(InfoTool, TcpInterfaceOverrideIsReported) {
  const auto bad = info_json("XMSG_TCP_IF=xmsg-no-such-if0");
  const auto& tcp = bad.at("transports").at("tcp");
  EXPECT_FALSE(tcp.at("usable").get<bool>());
  EXPECT_NE(tcp.at("reason").get<std::string>().find("xmsg-no-such-if0"), std::string::npos) << tcp.dump();
  const auto lo = info_json("XMSG_TCP_IF=127.0.0.1");
  EXPECT_EQ(lo.at("transports").at("tcp").at("listen_address"), "127.0.0.1");
}

TEST(InfoTool, HelpAndBadOptions) {
  const auto help = run_info("--help");
  EXPECT_EQ(help.exit_code, 0) << help.out;
  EXPECT_NE(help.out.find("--json"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("Usage"), std::string::npos) << help.out;
  const std::pair<const char*, const char*> cases[] = {
      {"--frobnicate", "--frobnicate"}, {"--json --frob", "--frob"}, {"-x", "-x"}, {"extra", "extra"}};
  for (const auto& [args, named] : cases) {
    const auto r = run_info(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(named), std::string::npos) << args << " should name " << named << ", said:\n" << r.out;
    EXPECT_EQ(r.out.find("transports"), std::string::npos) << args << ": printed a report anyway:\n" << r.out;
  }
}

}  // namespace
