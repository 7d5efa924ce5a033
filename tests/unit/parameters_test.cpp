// The parameter table (bootstrap/src/parameter_table.cpp) and its one parser: the table's own
// entries are well formed, every rule of parameters.hpp holds, and the constants other code
// keeps for its defaults agree with the table.
#include <xmsg/bootstrap/parameters.hpp>

#include "VerbsLimits.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace params = xmsg::params;

namespace {

// Sets a variable for one test and restores the environment after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const params::ParameterError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(ParameterTable, EveryEntryIsWellFormed) {
  std::set<std::string_view> names;
  for (const auto& p : params::table()) {
    SCOPED_TRACE(std::string(p.name));
    EXPECT_TRUE(p.name.starts_with("XMSG_"));
    EXPECT_FALSE(p.name.starts_with("XMSG_TEST_")) << "XMSG_TEST_ is reserved for test harnesses";
    EXPECT_TRUE(names.insert(p.name).second) << "declared twice";
    EXPECT_FALSE(p.doc.empty());
    EXPECT_EQ(p.doc.find('\n'), std::string_view::npos) << "one line of documentation";
    EXPECT_EQ(p.doc.find('|'), std::string_view::npos) << "a '|' would break the docs' Markdown tables";
    if (p.type == params::Type::Integer || p.type == params::Type::Bytes) {
      EXPECT_LT(p.min, p.max);
    }
    if (p.type == params::Type::Choice) {
      EXPECT_NE(p.choices.find('|'), std::string_view::npos);
    }
    if (!p.default_value.empty()) {
      EXPECT_NO_THROW(params::check_value(p, p.default_value));
    }
    EXPECT_EQ(params::find(p.name), &p);
  }
  EXPECT_GE(names.size(), 60u);
}

TEST(ParameterTable, ReadsDefaultsWhenUnsetOrEmpty) {
  ::unsetenv("XMSG_RNDV_FRAGMENT");
  EXPECT_EQ(params::integer("XMSG_RNDV_FRAGMENT"), 64 * 1024);
  EXPECT_EQ(params::source("XMSG_RNDV_FRAGMENT"), "default");
  ScopedEnv empty("XMSG_RNDV_FRAGMENT", "");
  EXPECT_EQ(params::integer("XMSG_RNDV_FRAGMENT"), 64 * 1024);
  EXPECT_EQ(params::integer_if_set("XMSG_EAGER_LIMIT"), std::nullopt);
  EXPECT_EQ(params::choice("XMSG_WAIT_POLICY"), "auto");
  EXPECT_FALSE(params::flag("XMSG_VERBOSE"));
  EXPECT_EQ(params::flag_if_set("XMSG_COLL_OVERSUBSCRIBED"), std::nullopt);
  EXPECT_EQ(params::integer_if_set("XMSG_IB_GID_INDEX"), std::nullopt);
  EXPECT_EQ(params::text("XMSG_TCP_CONGESTION"), "reno");
}

TEST(ParameterTable, BytesTakeBinarySuffixes) {
  const std::pair<const char*, std::int64_t> cases[] = {
      {"0", 0}, {"4096", 4096}, {"8k", 8192}, {"8K", 8192}, {"2m", 2 << 20}, {"1G", 1 << 30}};
  for (const auto& [text, bytes] : cases) {
    ScopedEnv v("XMSG_EAGER_LIMIT", text);
    EXPECT_EQ(params::integer("XMSG_EAGER_LIMIT"), bytes) << text;
    EXPECT_EQ(params::source("XMSG_EAGER_LIMIT"), "environment");
  }
}

TEST(ParameterTable, MalformedValuesNameTheVariableAndWhatItAccepts) {
  struct Case {
    const char* name;
    const char* value;
    const char* says;
  };
  const Case cases[] = {
      {"XMSG_EAGER_LIMIT", "12x", "XMSG_EAGER_LIMIT='12x': expected bytes in 0..1G"},
      {"XMSG_EAGER_LIMIT", "0x100", "XMSG_EAGER_LIMIT='0x100': expected bytes"},
      {"XMSG_EAGER_LIMIT", "2G", "XMSG_EAGER_LIMIT='2G': expected bytes in 0..1G"},
      {"XMSG_EAGER_LIMIT", "-1", "expected bytes"},
      {"XMSG_EAGER_LIMIT", "99999999999999999999", "expected bytes"},
      {"XMSG_SHM_QUEUE_BYTES", "1K", "XMSG_SHM_QUEUE_BYTES='1K': expected bytes in 64K..1G"},
      {"XMSG_SPIN_COUNT", "1K", "XMSG_SPIN_COUNT='1K': expected an integer in 0..1000000000 (polls)"},
      {"XMSG_TCP_CONNECT_TIMEOUT_MS", "5", "expected an integer in 10..86400000 (ms)"},
      {"XMSG_WAIT_POLICY", "busy", "XMSG_WAIT_POLICY='busy': expected one of spin,yield,auto"},
      {"XMSG_VERBOSE", "2", "XMSG_VERBOSE='2': expected a flag: 1, 0, on, off, yes, no, true or false"},
      {"XMSG_IB_GID_INDEX", "70000", "XMSG_IB_GID_INDEX='70000': expected an integer in 0..65535"},
  };
  for (const auto& c : cases) {
    ScopedEnv v(c.name, c.value);
    const params::Parameter* p = params::find(c.name);
    ASSERT_NE(p, nullptr) << c.name;
    std::string message;
    if (p->type == params::Type::Flag) message = error_of([&] { params::flag(c.name); });
    else if (p->type == params::Type::Choice) message = error_of([&] { params::choice(c.name); });
    else if (c.name == std::string("XMSG_IB_GID_INDEX")) message = error_of([&] { params::integer_if_set(c.name); });
    else message = error_of([&] { params::integer(c.name); });
    EXPECT_NE(message.find(c.says), std::string::npos) << c.name << "=" << c.value << ": " << message;
    // check_environment finds the same one.
    EXPECT_NE(error_of([] { params::check_environment(); }).find(c.name), std::string::npos);
  }
}

TEST(ParameterTable, FlagsAcceptTheUsualWords) {
  for (const char* yes : {"1", "on", "ON", "yes", "true", "True"}) {
    ScopedEnv v("XMSG_COLL_TRACE", yes);
    EXPECT_TRUE(params::flag("XMSG_COLL_TRACE")) << yes;
  }
  for (const char* no : {"0", "off", "no", "false", "FALSE"}) {
    ScopedEnv v("XMSG_COLL_SHM", no);
    EXPECT_FALSE(params::flag("XMSG_COLL_SHM")) << no;
  }
  ScopedEnv forced("XMSG_COLL_OVERSUBSCRIBED", "0");
  EXPECT_EQ(params::flag_if_set("XMSG_COLL_OVERSUBSCRIBED"), false);
}

TEST(ParameterTable, ReadingAnUndeclaredNameOrTheWrongTypeIsAProgrammingError) {
  EXPECT_THROW(params::integer("XMSG_NO_SUCH_THING"), std::logic_error);
  EXPECT_THROW(params::flag("XMSG_EAGER_LIMIT"), std::logic_error);
  EXPECT_THROW(params::choice("XMSG_VERBOSE"), std::logic_error);
}

TEST(ParameterTable, UnknownVariablesAreFoundWithTheNearestName) {
  std::vector<std::string> entries = {"XMSG_TRANSPORT=tcp", "XMSG_EAGER_LIMT=1", "XMSG_EAGER_LIMIT=1", "PATH=/bin",
                                      "XMSG_TEST_ANYTHING=1", "XMSG_COMPLETELY_DIFFERENT=1", "NOT_XMSG_X=1"};
  std::vector<char*> environment;
  for (auto& e : entries) environment.push_back(e.data());
  environment.push_back(nullptr);
  const auto unknown = params::unknown_variables(environment.data());
  ASSERT_EQ(unknown.size(), 3u);
  EXPECT_EQ(unknown[0].name, "XMSG_COMPLETELY_DIFFERENT");
  EXPECT_EQ(unknown[0].nearest, "");
  EXPECT_EQ(unknown[1].name, "XMSG_EAGER_LIMT");
  EXPECT_EQ(unknown[1].nearest, "XMSG_EAGER_LIMIT");
  EXPECT_EQ(unknown[2].name, "XMSG_TRANSPORT");
  EXPECT_EQ(unknown[2].nearest, "XMSG_TRANSPORTS");
  EXPECT_EQ(params::describe(unknown[2]),
            "XMSG_TRANSPORT is not an xmsg parameter (did you mean XMSG_TRANSPORTS?); `xmsg_info --parameters` "
            "lists them");
}

// VerbsLimits keeps its defaults as constants for the planner (xmsg_plan works without any
// environment); they must be the table's.
TEST(ParameterTable, VerbsLimitsDefaultsAreTheTables) {
  for (const char* name : {"XMSG_VERBS_SRQ_DEPTH", "XMSG_VERBS_EAGER_BUFFER", "XMSG_VERBS_SEND_DEPTH",
                           "XMSG_VERBS_CONNECT_TIMEOUT"})
    ::unsetenv(name);
  const auto from_table = xmsg::verbs::VerbsLimits::from_environment();
  const xmsg::verbs::VerbsLimits constants;
  EXPECT_EQ(from_table.srq_depth, constants.srq_depth);
  EXPECT_EQ(from_table.eager_buffer_bytes, constants.eager_buffer_bytes);
  EXPECT_EQ(from_table.send_depth, constants.send_depth);
  EXPECT_EQ(from_table.connect_timeout_seconds, constants.connect_timeout_seconds);
}
