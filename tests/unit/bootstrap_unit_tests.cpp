// The bootstrap without a launcher: singleton detection and the singleton's key-value store.
#include <xmsg/bootstrap/bootstrap.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

using xmsg::bootstrap::BootstrapError;

namespace {

// Sets (or clears) an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::span<const std::byte> bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

}  // namespace

TEST(PmixDetection, NoServerWithoutNamespace) {
  ScopedEnv ns("PMIX_NAMESPACE", nullptr);
  ScopedEnv rank("PMIX_RANK", "0");
  ScopedEnv uri("PMIX_SERVER_URI41", "pmix-server.1;tcp4://127.0.0.1:1");
  EXPECT_FALSE(xmsg::bootstrap::pmix_server_present());
}

TEST(PmixDetection, NoServerWithoutUri) {
  ScopedEnv ns("PMIX_NAMESPACE", "job");
  ScopedEnv rank("PMIX_RANK", "0");
  ScopedEnv u1("PMIX_SERVER_URI41", nullptr), u2("PMIX_SERVER_URI4", nullptr), u3("PMIX_SERVER_URI3", nullptr),
      u4("PMIX_SERVER_URI21", nullptr), u5("PMIX_SERVER_URI2", nullptr);
  EXPECT_FALSE(xmsg::bootstrap::pmix_server_present());
}

TEST(PmixDetection, ServerWhenNamespaceRankAndUri) {
  ScopedEnv ns("PMIX_NAMESPACE", "job");
  ScopedEnv rank("PMIX_RANK", "3");
  ScopedEnv uri("PMIX_SERVER_URI3", "pmix-server.1;tcp4://127.0.0.1:1");
  EXPECT_TRUE(xmsg::bootstrap::pmix_server_present());
}

TEST(PmixBootstrap, UnreachableServerIsAnErrorNotAHang) {
  // A server URI that names nothing: PMIx_Init must fail and say why.
  ScopedEnv ns("PMIX_NAMESPACE", "xmsg-unit-missing");
  ScopedEnv rank("PMIX_RANK", "0");
  ScopedEnv uri("PMIX_SERVER_URI41", "pmix-server.999999;tcp4://127.0.0.1:1");
  ScopedEnv u4("PMIX_SERVER_URI4", nullptr), u3("PMIX_SERVER_URI3", nullptr);
  try {
    auto b = xmsg::bootstrap::make_pmix_bootstrap();
    FAIL() << "PMIx_Init succeeded without a server";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("PMIx_Init"), std::string::npos) << e.what();
  }
}

TEST(Singleton, IsAOneRankJob) {
  ScopedEnv ns("PMIX_NAMESPACE", nullptr);
  auto b = xmsg::bootstrap::make_bootstrap();
  EXPECT_EQ(b->rank(), 0);
  EXPECT_EQ(b->size(), 1);
  EXPECT_EQ(b->local_rank(), 0);
  EXPECT_EQ(b->local_size(), 1);
  EXPECT_EQ(b->node_id(), 0);
  EXPECT_EQ(b->num_nodes(), 1);
  EXPECT_EQ(b->local_peers(), std::vector<int>{0});
  EXPECT_EQ(b->node_of(0), 0);
  EXPECT_FALSE(b->hostname().empty());
  EXPECT_NE(b->job_id().find(std::to_string(::getpid())), std::string::npos);
  EXPECT_FALSE(b->job_value("xmsg.job_secret").has_value());
}

TEST(Singleton, PutCommitFenceGetRoundTrips) {
  auto b = xmsg::bootstrap::make_singleton_bootstrap();
  std::string big(64 * 1024, 'x');
  big[12345] = 'y';
  b->put("empty", {});
  b->put("one", bytes("1"));
  b->put("big", bytes(big));
  b->commit();
  b->fence(true);
  EXPECT_TRUE(b->get(0, "empty").empty());
  EXPECT_EQ(b->get_string(0, "one"), "1");
  EXPECT_EQ(b->get_string(0, "big"), big);
}

TEST(Singleton, UncommittedValueIsNotVisible) {
  auto b = xmsg::bootstrap::make_singleton_bootstrap();
  b->put("k", bytes("v"));
  EXPECT_THROW(b->get(0, "k"), BootstrapError);
  b->commit();
  EXPECT_EQ(b->get_string(0, "k"), "v");
}

TEST(Singleton, BadRankAndMissingKeyAreNamedErrors) {
  auto b = xmsg::bootstrap::make_singleton_bootstrap();
  try {
    b->get(1, "k");
    FAIL() << "rank 1 accepted";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  try {
    b->get(0, "nope");
    FAIL() << "missing key accepted";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b->node_of(-1), BootstrapError);
}

TEST(Singleton, AbortEndsTheProcessWithTheCodeAndMessage) {
  EXPECT_EXIT(xmsg::bootstrap::make_singleton_bootstrap()->abort(7, "bad input"), ::testing::ExitedWithCode(7),
              "rank 0 aborted: bad input");
}
