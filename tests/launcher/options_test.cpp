// Unit tests of xmsgrun's command-line parsing (no process is launched).
#include "Options.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

using namespace xmsg::launcher;

namespace {

class OptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/xmsg-options-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    exe_ = dir_ + "/prog";
    plain_ = dir_ + "/notexec";
    std::ofstream(exe_) << "#!/bin/sh\n";
    std::ofstream(plain_) << "data\n";
    ::chmod(exe_.c_str(), 0755);
    ::chmod(plain_.c_str(), 0644);
    env_["PATH"] = dir_;
    env_["HOME"] = "/home/someone";
  }
  void TearDown() override {
    ::unlink(exe_.c_str());
    ::unlink(plain_.c_str());
    ::rmdir(dir_.c_str());
  }
  ParseOutcome parse(std::vector<std::string> args) {
    return parse_options(args, [this](const std::string& name) -> std::optional<std::string> {
      auto it = env_.find(name);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    });
  }

  std::string dir_, exe_, plain_;
  std::map<std::string, std::string> env_;
};

TEST_F(OptionsTest, MinimalCommandLine) {
  auto r = parse({"-n", "4", "prog"});
  ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << r.message;
  EXPECT_EQ(r.options.nranks, 4);
  EXPECT_EQ(r.options.nnodes, 1);
  EXPECT_EQ(r.options.bind_to, BindTo::Auto);
  EXPECT_FALSE(r.options.tag_output);
  EXPECT_FALSE(r.options.report_bindings);
  EXPECT_EQ(r.options.timeout_seconds, 0);
  EXPECT_FALSE(r.options.netns);
  EXPECT_EQ(r.options.program_path, exe_);
  EXPECT_EQ(r.options.argv, std::vector<std::string>{"prog"});
}

TEST_F(OptionsTest, EveryOption) {
  auto r = parse({"--np", "6", "--nodes", "3", "--bind-to", "numa", "--report-bindings",
                  "--tag-output", "--netns", "-x", "HOME", "-x", "A=b=c", "--timeout", "2.5", exe_,
                  "x"});
  ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << r.message;
  EXPECT_EQ(r.options.nranks, 6);
  EXPECT_EQ(r.options.nnodes, 3);
  EXPECT_EQ(r.options.bind_to, BindTo::Numa);
  EXPECT_TRUE(r.options.report_bindings);
  EXPECT_TRUE(r.options.tag_output);
  EXPECT_TRUE(r.options.netns);
  EXPECT_DOUBLE_EQ(r.options.timeout_seconds, 2.5);
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(r.options.exports, (std::vector<P>{{"HOME", "/home/someone"}, {"A", "b=c"}}));
  EXPECT_EQ(r.options.argv, (std::vector<std::string>{exe_, "x"}));
}

TEST_F(OptionsTest, OptionsStopAtTheProgram) {
  auto r = parse({"-n", "2", "prog", "-n", "7", "--tag-output", "--unknown"});
  ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << r.message;
  EXPECT_EQ(r.options.nranks, 2);
  EXPECT_FALSE(r.options.tag_output);
  EXPECT_EQ(r.options.argv,
            (std::vector<std::string>{"prog", "-n", "7", "--tag-output", "--unknown"}));
}

TEST_F(OptionsTest, DoubleDashEndsOptions) {
  auto r = parse({"-n", "1", "--", "prog", "-x"});
  ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << r.message;
  EXPECT_EQ(r.options.argv, (std::vector<std::string>{"prog", "-x"}));
}

TEST_F(OptionsTest, BindToValues) {
  EXPECT_EQ(parse({"-n", "1", "--bind-to", "core", "prog"}).options.bind_to, BindTo::Core);
  EXPECT_EQ(parse({"-n", "1", "--bind-to", "none", "prog"}).options.bind_to, BindTo::None);
  auto bad = parse({"-n", "1", "--bind-to", "socket", "prog"});
  EXPECT_EQ(bad.kind, ParseOutcome::Kind::Error);
  EXPECT_NE(bad.message.find("--bind-to"), std::string::npos) << bad.message;
}

TEST_F(OptionsTest, MissingRankCount) {
  auto r = parse({"prog"});
  EXPECT_EQ(r.kind, ParseOutcome::Kind::Error);
  EXPECT_NE(r.message.find("-n"), std::string::npos) << r.message;
}

TEST_F(OptionsTest, RankCountBelowOne) {
  for (const char* n : {"0", "-3"}) {
    auto r = parse({"-n", n, "prog"});
    EXPECT_EQ(r.kind, ParseOutcome::Kind::Error) << n;
    EXPECT_NE(r.message.find("-n"), std::string::npos) << r.message;
  }
  auto r = parse({"-n", "four", "prog"});
  EXPECT_EQ(r.kind, ParseOutcome::Kind::Error);
}

TEST_F(OptionsTest, MoreNodesThanRanks) {
  auto r = parse({"-n", "2", "--nodes", "3", "prog"});
  EXPECT_EQ(r.kind, ParseOutcome::Kind::Error);
  EXPECT_NE(r.message.find("--nodes"), std::string::npos) << r.message;
  EXPECT_EQ(parse({"-n", "2", "--nodes", "0", "prog"}).kind, ParseOutcome::Kind::Error);
}

TEST_F(OptionsTest, UnknownOptionShowsUsage) {
  for (auto args : {std::vector<std::string>{"-n", "2", "--frobnicate", "prog"},
                    std::vector<std::string>{"--frobnicate", "-n", "2", "prog"}}) {
    auto r = parse(args);
    EXPECT_EQ(r.kind, ParseOutcome::Kind::Error);
    EXPECT_NE(r.message.find("--frobnicate"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("Usage"), std::string::npos) << r.message;
  }
}

TEST_F(OptionsTest, MissingProgram) {
  auto none = parse({"-n", "2"});
  EXPECT_EQ(none.kind, ParseOutcome::Kind::Error);
  EXPECT_NE(none.message.find("no program"), std::string::npos) << none.message;
  auto absent = parse({"-n", "2", "no-such-program"});
  EXPECT_EQ(absent.kind, ParseOutcome::Kind::Error);
  EXPECT_NE(absent.message.find("no-such-program"), std::string::npos) << absent.message;
  auto path = parse({"-n", "2", dir_ + "/missing"});
  EXPECT_EQ(path.kind, ParseOutcome::Kind::Error);
  EXPECT_NE(path.message.find("not found"), std::string::npos) << path.message;
}

TEST_F(OptionsTest, NonExecutableProgram) {
  for (const std::string& p : {plain_, std::string("notexec"), dir_}) {
    auto r = parse({"-n", "2", p});
    EXPECT_EQ(r.kind, ParseOutcome::Kind::Error) << p;
    EXPECT_NE(r.message.find("not an executable"), std::string::npos) << r.message;
  }
}

TEST_F(OptionsTest, ExportOfUnsetVariable) {
  auto r = parse({"-n", "1", "-x", "NOT_SET_ANYWHERE", "prog"});
  EXPECT_EQ(r.kind, ParseOutcome::Kind::Error);
  EXPECT_NE(r.message.find("NOT_SET_ANYWHERE"), std::string::npos) << r.message;
  EXPECT_EQ(parse({"-n", "1", "-x", "=v", "prog"}).kind, ParseOutcome::Kind::Error);
}

TEST_F(OptionsTest, BadTimeout) {
  EXPECT_EQ(parse({"-n", "1", "--timeout", "0", "prog"}).kind, ParseOutcome::Kind::Error);
  EXPECT_EQ(parse({"-n", "1", "--timeout", "soon", "prog"}).kind, ParseOutcome::Kind::Error);
}

TEST_F(OptionsTest, MpiexecTimeoutStandsInForTimeout) {
  auto plain = parse({"-n", "1", "prog"});
  ASSERT_EQ(plain.kind, ParseOutcome::Kind::Run) << plain.message;
  EXPECT_EQ(plain.options.timeout_seconds, 0);
  EXPECT_EQ(plain.options.timeout_from, "");

  env_["MPIEXEC_TIMEOUT"] = "7";
  auto r = parse({"-n", "1", "prog"});
  ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << r.message;
  EXPECT_DOUBLE_EQ(r.options.timeout_seconds, 7);
  EXPECT_EQ(r.options.timeout_from, "MPIEXEC_TIMEOUT");
  env_["MPIEXEC_TIMEOUT"] = "2147483647";
  r = parse({"-n", "1", "prog"});
  ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << r.message;
  EXPECT_DOUBLE_EQ(r.options.timeout_seconds, 2147483647.0);

  // An explicit --timeout wins, and the variable is then not read (even a bad one).
  for (const char* v : {"7", "soon"}) {
    env_["MPIEXEC_TIMEOUT"] = v;
    r = parse({"-n", "1", "--timeout", "2.5", "prog"});
    ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << v << ": " << r.message;
    EXPECT_DOUBLE_EQ(r.options.timeout_seconds, 2.5) << v;
    EXPECT_EQ(r.options.timeout_from, "--timeout") << v;
  }
  // Empty counts as unset.
  env_["MPIEXEC_TIMEOUT"] = "";
  r = parse({"-n", "1", "prog"});
  ASSERT_EQ(r.kind, ParseOutcome::Kind::Run) << r.message;
  EXPECT_EQ(r.options.timeout_seconds, 0);
}

TEST_F(OptionsTest, BadMpiexecTimeoutIsAnErrorNamingIt) {
  for (const char* v : {"0", "-5", "+5", "2.5", "10s", "soon", " 5", "5 ", "0x10", "2147483648", "99999999999999999999"}) {
    env_["MPIEXEC_TIMEOUT"] = v;
    auto r = parse({"-n", "1", "prog"});
    EXPECT_EQ(r.kind, ParseOutcome::Kind::Error) << "MPIEXEC_TIMEOUT='" << v << "'";
    EXPECT_NE(r.message.find(std::string("MPIEXEC_TIMEOUT='") + v + "' is not a positive whole number of seconds"),
              std::string::npos)
        << r.message;
  }
}

TEST_F(OptionsTest, Help) {
  auto r = parse({"--help"});
  EXPECT_EQ(r.kind, ParseOutcome::Kind::Help);
  for (const char* opt : {"--np", "--nodes", "--bind-to", "--report-bindings", "--tag-output",
                          "--netns", "-x", "--timeout"})
    EXPECT_NE(r.message.find(opt), std::string::npos) << opt;
}

}  // namespace
