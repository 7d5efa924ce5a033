// The verbs resource classes against a real device. On a host without RDMA they skip with
// "no RDMA device"; the soft-RoCE ctest runs them inside a qemu guest with rxe0 and sets
// XMSG_REQUIRE_RDMA_DEVICE=1 so a missing device fails there instead of skipping. The XRC tests
// need an XRC-capable device: the project's XRC soft-RoCE device (softroce-run.sh --xrc, label
// softroce-xrc) or hardware (mlx5); elsewhere they skip with "no XRC-capable device".
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "Device.hpp"
#include "QueuePair.hpp"
#include "RegistrationCache.hpp"
#include "SharedReceiveQueue.hpp"
#include "VerbsError.hpp"
#include "VerbsObjects.hpp"
#include "VerbsTransport.hpp"
#include "XrcDomain.hpp"

namespace {

using namespace xmsg::verbs;
namespace fs = std::filesystem;

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A private temporary directory removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "xmsg-verbs-test.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

bool device_required() {
  const char* v = std::getenv("XMSG_REQUIRE_RDMA_DEVICE");
  return v != nullptr && std::string(v) == "1";
}

#define REQUIRE_RDMA_DEVICE()                                                           \
  do {                                                                                  \
    if (list_device_names().empty()) {                                                  \
      if (device_required()) FAIL() << "no RDMA device, but XMSG_REQUIRE_RDMA_DEVICE=1"; \
      GTEST_SKIP() << "no RDMA device";                                                 \
    }                                                                                   \
  } while (0)

bool xrc_required() {
  const char* v = std::getenv("XMSG_REQUIRE_XRC");
  return v != nullptr && std::string(v) == "1";
}

// XRC tests skip on a device without XRC, except where the harness promised one (--xrc guest).
#define REQUIRE_XRC_DEVICE(device)                                                                 \
  do {                                                                                             \
    if (!(device).supports_xrc()) {                                                                \
      if (xrc_required()) FAIL() << "device " << (device).label() << " lacks XRC, but XMSG_REQUIRE_XRC=1"; \
      GTEST_SKIP() << "no XRC-capable device";                                                     \
    }                                                                                              \
  } while (0)

// Polls until `want` completions arrived or ten seconds passed (a guard against hangs, not a
// speed check).
std::vector<ibv_wc> wait_for(CompletionQueue& cq, int want) {
  std::vector<ibv_wc> got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  ibv_wc wc[8];
  while (static_cast<int>(got.size()) < want && std::chrono::steady_clock::now() < deadline) {
    const int n = cq.poll(wc);
    got.insert(got.end(), wc, wc + n);
  }
  return got;
}

std::string describe_all(const std::vector<ibv_wc>& wcs) {
  std::string text = std::to_string(wcs.size()) + " completion(s):";
  for (const auto& wc : wcs) text += " [" + describe_completion(wc) + " opcode " + std::to_string(wc.opcode) + "]";
  return text;
}

RemoteEndpoint endpoint_of(const QueuePair& qp, const Device& device) {
  RemoteEndpoint ep;
  ep.qpn = qp.qpn();
  ep.psn = qp.psn();
  ep.lid = device.address().lid;
  ep.gid = device.address().gid;
  ep.path_mtu = device.address().path_mtu;
  return ep;
}

unsigned char pattern_byte(std::size_t i, int seed) { return static_cast<unsigned char>((i * 131 + seed * 7 + 3) & 0xff); }

// ---- no device needed -----------------------------------------------------------------------

TEST(DeviceSpec, ParsesNameAndPortAndNamesTheVariableOnErrors) {
  auto spec = parse_device_spec("mlx5_0:2");
  EXPECT_EQ(spec.name, "mlx5_0");
  EXPECT_EQ(spec.port, 2);
  spec = parse_device_spec("rxe0");
  EXPECT_EQ(spec.name, "rxe0");
  EXPECT_FALSE(spec.port.has_value());
  for (const char* bad : {"", ":1", "mlx5_0:", "mlx5_0:0", "mlx5_0:x", "mlx5_0:300"}) {
    try {
      parse_device_spec(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("XMSG_IB_DEVICE"), std::string::npos) << e.what();
    }
  }
}

TEST(XrcDomainFile, IsPrivateJobScopedAndUnlinked) {
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", dir.path().string());
  std::string path;
  {
    XrcDomainFile first("job42", 3);
    XrcDomainFile second("job42", 3);  // a second local rank opens the same domain file
    path = first.path();
    EXPECT_EQ(path, (dir.path() / "xrcd-job42-node3").string());
    struct stat a {}, b {};
    ASSERT_EQ(fstat(first.fd(), &a), 0);
    ASSERT_EQ(fstat(second.fd(), &b), 0);
    EXPECT_EQ(a.st_ino, b.st_ino) << "ranks of one node must share one inode (the XRCD key)";
    EXPECT_EQ(a.st_mode & 0777, 0600u);
    first.unlink();
    EXPECT_FALSE(fs::exists(path));
    second.unlink();  // the other rank's unlink finds it gone and is fine
    XrcDomainFile other_job("job43", 3);
    EXPECT_NE(other_job.path(), path);
  }
  EXPECT_TRUE(fs::is_empty(dir.path())) << "domain files left behind";
}

TEST(XrcDomainFile, DestructorUnlinksWhenARankDiesBeforeTheBarrier) {
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", dir.path().string());
  { XrcDomainFile f("job7", 0); }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(XrcDomainFile, RefusesASharedDirectoryAndBadNames) {
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", std::nullopt);
  ScopedEnv tmpdir("TMPDIR", dir.path().string());
  const fs::path mine = dir.path() / ("xmsg-" + std::to_string(getuid()));
  {
    XrcDomainFile f("job1", 0);
    struct stat st {};
    ASSERT_EQ(stat(mine.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  ASSERT_EQ(chmod(mine.c_str(), 0777), 0);
  try {
    XrcDomainFile f("job1", 0);
    ADD_FAILURE() << "a world-writable directory was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("private"), std::string::npos) << e.what();
  }
  EXPECT_THROW(XrcDomainFile("a/b", 0), std::invalid_argument);
  EXPECT_THROW(XrcDomainFile("job", -1), std::invalid_argument);
}

// What a rank of this job opens the domain file with, or the error (empty: opened).
std::string xrc_open_error(const std::string& job) {
  try {
    XrcDomainFile f(job, 0);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

// Anyone may set XMSG_JOB_TMPDIR: a directory another user could write into, or own, would let
// that user plant the domain file. Each refusal names the variable, the path and what is wrong.
TEST(XrcDomainFile, RefusesAJobTmpdirOthersCanWriteOrOwn) {
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", dir.path().string());
  const std::string named = "XMSG_JOB_TMPDIR=" + dir.path().string();
  for (mode_t mode : {0777, 01777, 0770, 0720, 0702}) {
    ASSERT_EQ(chmod(dir.path().c_str(), mode), 0);
    const std::string err = xrc_open_error("job1");
    EXPECT_NE(err.find(named), std::string::npos) << std::oct << mode << ": " << err;
    EXPECT_NE(err.find("writable by group or others"), std::string::npos) << std::oct << mode << ": " << err;
  }
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);  // readable by others is fine
  EXPECT_EQ(xrc_open_error("job1"), "");
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
  EXPECT_EQ(xrc_open_error("job1"), "");
  {
    ScopedEnv missing("XMSG_JOB_TMPDIR", (dir.path() / "missing").string());
    EXPECT_NE(xrc_open_error("job1").find("XMSG_JOB_TMPDIR=" + (dir.path() / "missing").string() + ": cannot use it"),
              std::string::npos);
  }
  if (geteuid() != 0) {
    GTEST_SKIP() << "another user's directory needs root (to chown it)";
  }
  ASSERT_EQ(chown(dir.path().c_str(), 65534, 65534), 0);
  const std::string err = xrc_open_error("job1");
  EXPECT_NE(err.find(named + " is owned by uid 65534, not by this user"), std::string::npos) << err;
  ASSERT_EQ(chown(dir.path().c_str(), 0, 0), 0);
}

// A domain file that already exists is used only when it is this user's 0600 regular file (the
// other local ranks' case); another user's 0666 file, or one of ours left world-writable, would
// become the XRC domain's key. A refused file is left alone, not unlinked.
TEST(XrcDomainFile, RefusesAPlantedDomainFile) {
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", dir.path().string());
  const fs::path planted = dir.path() / "xrcd-job9-node0";
  const int fd = open(planted.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  for (mode_t mode : {0666, 0644, 0660, 0700, 0640}) {
    ASSERT_EQ(chmod(planted.c_str(), mode), 0);
    const std::string err = xrc_open_error("job9");
    EXPECT_NE(err.find("refusing the existing XRC domain file " + planted.string()), std::string::npos) << err;
    char want[32];
    std::snprintf(want, sizeof want, "mode %04o, not 0600", static_cast<unsigned>(mode));
    EXPECT_NE(err.find(want), std::string::npos) << err;
    EXPECT_TRUE(fs::exists(planted));
  }
  ASSERT_EQ(chmod(planted.c_str(), 0600), 0);
  EXPECT_EQ(xrc_open_error("job9"), "");  // ours and 0600: another local rank made it
  // A symlink in its place is not followed.
  fs::remove(planted);
  fs::create_symlink("/etc/hostname", planted);
  EXPECT_NE(xrc_open_error("job9").find("cannot open XRC domain file " + planted.string()), std::string::npos);
  fs::remove(planted);
  if (geteuid() != 0) {
    GTEST_SKIP() << "another user's file needs root (to chown it)";
  }
  const int fd2 = open(planted.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd2, 0);
  ASSERT_EQ(fchown(fd2, 65534, 65534), 0);
  ASSERT_EQ(fchmod(fd2, 0666), 0);
  close(fd2);
  std::string err = xrc_open_error("job9");
  EXPECT_NE(err.find("owned by uid 65534, not by this user"), std::string::npos) << err;
  EXPECT_TRUE(fs::exists(planted));
  ASSERT_EQ(chmod(planted.c_str(), 0600), 0);  // another user's even at 0600
  err = xrc_open_error("job9");
  EXPECT_NE(err.find("owned by uid 65534"), std::string::npos) << err;
}

// A file created under a umask that takes owner bits away still ends up 0600.
TEST(XrcDomainFile, CreatedFileIsExactly0600WhateverTheUmask) {
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", dir.path().string());
  const mode_t old = umask(0277);
  {
    XrcDomainFile f("job5", 1);
    struct stat st {};
    ASSERT_EQ(fstat(f.fd(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }
  umask(old);
}

TEST(Device, UnknownDeviceNamedInTheError) {
  ScopedEnv dev("XMSG_IB_DEVICE", "no_such_hca:1");
  try {
    Device::open_default();
    FAIL() << "opened a device that does not exist";
  } catch (const VerbsError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_hca"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("available"), std::string::npos) << e.what();
  }
}

// ---- a real device --------------------------------------------------------------------------

TEST(Device, OpensAnActivePortWithUsableAddressing) {
  REQUIRE_RDMA_DEVICE();
  Device device = Device::open_default();
  const auto& a = device.address();
  EXPECT_GE(a.port, 1);
  EXPECT_GE(mtu_bytes(a.path_mtu), 256);
  if (a.is_roce()) {
    // RoCE v2 with an IPv4 address: ::ffff:a.b.c.d
    for (int i = 0; i < 10; ++i) EXPECT_EQ(a.gid[static_cast<std::size_t>(i)], 0) << "GID byte " << i;
    EXPECT_EQ(a.gid[10], 0xff);
    EXPECT_EQ(a.gid[11], 0xff);
  } else {
    EXPECT_NE(a.lid, 0);
  }
  // The same device by name and port.
  ScopedEnv dev("XMSG_IB_DEVICE", device.name() + ":" + std::to_string(a.port));
  Device again = Device::open_default();
  EXPECT_EQ(again.label(), device.label());
}

TEST(Device, MissingPortNamedInTheError) {
  REQUIRE_RDMA_DEVICE();
  const std::string name = list_device_names().front();
  try {
    Device::open(DeviceSpec{name, 200});
    FAIL() << "opened port 200";
  } catch (const VerbsError& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("200"), std::string::npos) << e.what();
  }
}

TEST(QueuePair, TgtRefusesToSendOrReachRts) {
  REQUIRE_RDMA_DEVICE();
  Device device = Device::open_default();
  REQUIRE_XRC_DEVICE(device);
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", dir.path().string());
  XrcDomain xrcd(device, "tgtjob", 0);
  auto tgt = QueuePair::create_xrc_tgt(xrcd, "rank 9");
  try {
    tgt->to_rts();
    FAIL() << "a TGT QP reached RTS";
  } catch (const VerbsError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 9"), std::string::npos) << e.what();
  }
}

// Running out of QPs must be an error naming the device and the peer, not a crash. A real
// device has tens of thousands of QPs, too many to exhaust in a test, but each QP also needs a
// mapping of its send queue into the process (rxe maps every queue): lowering the kernel's
// vm.max_map_count a little above what the process already uses makes QP creation run out
// for real after a few dozen. That is a machine-wide setting, so the test only does it where
// told it may (the soft-RoCE guest, a throwaway VM) and restores it.
TEST(QueuePair, RunningOutOfQpsNamesTheDeviceAndThePeer) {
  REQUIRE_RDMA_DEVICE();
  const char* allowed = std::getenv("XMSG_TEST_MAY_LOWER_MAX_MAP_COUNT");
  if (allowed == nullptr || std::string(allowed) != "1") {
    GTEST_SKIP() << "needs XMSG_TEST_MAY_LOWER_MAX_MAP_COUNT=1 (lowers vm.max_map_count for a moment; set in the "
                    "soft-RoCE guest only)";
  }
  const char* knob = "/proc/sys/vm/max_map_count";
  std::string saved;
  {
    std::ifstream in(knob);
    ASSERT_TRUE(std::getline(in, saved)) << "cannot read " << knob;
  }
  Device device = Device::open_default();
  ProtectionDomain pd{device};
  CompletionQueue cq{device, 64, false};
  SharedReceiveQueue srq{pd, 16, 1024};
  std::vector<std::unique_ptr<QueuePair>> qps;
  std::string failure;
  {
    std::size_t maps = 0;
    std::ifstream self("/proc/self/maps");
    for (std::string line; std::getline(self, line);) ++maps;
    std::ofstream out(knob);
    out << maps + 64 << std::endl;
    ASSERT_TRUE(out.good()) << "cannot write " << knob << " (not root?)";
  }
  for (int i = 0; i < 10000 && failure.empty(); ++i) {
    try {
      qps.push_back(QueuePair::create_rc(pd, cq, srq, 4, "rank " + std::to_string(i) + " (node 7)"));
    } catch (const VerbsError& e) {
      failure = e.what();
    }
  }
  qps.clear();
  {
    std::ofstream out(knob);
    out << saved << std::endl;
  }
  ASSERT_FALSE(failure.empty()) << "10000 QPs were created: the map limit did not bite";
  EXPECT_NE(failure.find("creating the RC QP to rank"), std::string::npos) << failure;
  EXPECT_NE(failure.find("(node 7)"), std::string::npos) << failure;
  EXPECT_NE(failure.find(device.label()), std::string::npos) << failure;
  EXPECT_NE(failure.find("out of QPs or memory"), std::string::npos) << failure;
}

TEST(XrcDomain, DeviceWithoutXrcIsRefusedByName) {
  REQUIRE_RDMA_DEVICE();
  Device device = Device::open_default();
  if (device.supports_xrc()) GTEST_SKIP() << "device " << device.label() << " has XRC; the refusal path needs one without";
  TempDir dir;
  ScopedEnv job_dir("XMSG_JOB_TMPDIR", dir.path().string());
  try {
    XrcDomain xrcd(device, "job", 0);
    FAIL() << "opened an XRC domain on a device without IBV_DEVICE_XRC";
  } catch (const VerbsError& e) {
    EXPECT_NE(std::string(e.what()).find("no XRC-capable device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(device.name()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir.path())) << "the domain file was left behind";
}

// ---- XRC on one device ---------------------------------------------------------------------
// The XRC tests share one setup, as rdma-core's tests/base.py shares XRCResources: a PD, a CQ, a
// file-backed domain in a private job directory and an XRC SRQ of 16 x 1 KiB buffers. Their
// fixtures skip on a device without XRC (a failure where XMSG_REQUIRE_XRC=1 promised one).
struct XrcResources {
  explicit XrcResources(const std::string& job, int cq_depth = 64)
      : device(Device::open_default()),
        job_dir("XMSG_JOB_TMPDIR", dir.path().string()),
        pd(device),
        cq(device, cq_depth, false),
        xrcd(device, job, 0),
        srq(pd, xrcd, cq, 16, 1024) {}
  Device device;
  TempDir dir;
  ScopedEnv job_dir;
  ProtectionDomain pd;
  CompletionQueue cq;
  XrcDomain xrcd;
  SharedReceiveQueue srq;
};

class XrcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_RDMA_DEVICE();
    Device probe = Device::open_default();
    REQUIRE_XRC_DEVICE(probe);
  }
};
class XrcQueues : public XrcTest {};
class XrcRefusal : public XrcTest {};  // each a clear error completion or return code, never a hang

// One INI -> TGT connection on one device, the TGT in `tgt_domain`.
struct XrcPair {
  std::unique_ptr<QueuePair> ini;
  std::unique_ptr<QueuePair> tgt;
  XrcPair(ProtectionDomain& pd, CompletionQueue& cq, XrcDomain& tgt_domain, Device& device)
      : ini(QueuePair::create_xrc_ini(pd, cq, 16, "node 0 (loopback)")),
        tgt(QueuePair::create_xrc_tgt(tgt_domain, "rank 0 (loopback)")) {
    ini->connect(endpoint_of(*tgt, device));
    tgt->connect(endpoint_of(*ini, device));
  }
};

// A signaled work request of one SGE naming the remote XRC SRQ `srqn`.
ibv_send_wr xrc_request(ibv_sge& sge, ibv_wr_opcode opcode, std::uint32_t srqn) {
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.qp_type.xrc.remote_srqn = srqn;
  return wr;
}

// An RDMA READ into `sge` of the bytes at `source` (key `rkey`), naming `srqn`.
ibv_send_wr xrc_read(ibv_sge& sge, const void* source, std::uint32_t rkey, std::uint32_t srqn) {
  ibv_send_wr rd = xrc_request(sge, IBV_WR_RDMA_READ, srqn);
  rd.wr.rdma.remote_addr = reinterpret_cast<std::uint64_t>(source);
  rd.wr.rdma.rkey = rkey;
  return rd;
}

// A bare XRC SRQ (the wrapper posts its buffers; these tests need one empty, or in a domain the
// wrapper does not know).
ibv_srq* raw_xrc_srq(Device& device, ibv_xrcd* xrcd, CompletionQueue& cq, ProtectionDomain& pd, int max_wr) {
  ibv_srq_init_attr_ex attr{};
  attr.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
  attr.srq_type = IBV_SRQT_XRC;
  attr.xrcd = xrcd;
  attr.cq = cq.get();
  attr.pd = pd.get();
  attr.attr.max_wr = static_cast<std::uint32_t>(max_wr);
  attr.attr.max_sge = 1;
  return ibv_create_srq_ex(device.context(), &attr);
}

// Sends 64 bytes through `ini` naming `srqn`; returns the completions seen on `cq` in 10 s.
std::vector<ibv_wc> send_naming(QueuePair& ini, ProtectionDomain& pd, CompletionQueue& cq, std::uint32_t srqn,
                                int want) {
  std::vector<unsigned char> buf(64, 0x5a);
  MemoryRegion mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_sge sge{reinterpret_cast<std::uint64_t>(buf.data()), 64, mr.lkey()};
  ibv_send_wr wr = xrc_request(sge, IBV_WR_SEND, srqn);
  ini.post_send(wr);
  return wait_for(cq, want);
}

// ---- one shape for every QP type ------------------------------------------------------------
// As rdma-core's tests/base.py has one resource class per QP type, each class here builds two
// senders on one device (loopback) that deliver into one shared receive queue: RC, two QPs
// connected to each other; XRC, two INI QPs to two TGT QPs of one domain, every request naming
// the XRC SRQ. The typed tests run the same checks over both. Each class says what it needs, and
// a device without it skips the instance with the reason (XRC: "no XRC-capable device").
struct RcLoopback {
  static constexpr bool kXrc = false;
  Device device = Device::open_default();
  ProtectionDomain pd{device};
  CompletionQueue cq{device, 256, false};
  SharedReceiveQueue srq{pd, 16, 1024};
  std::unique_ptr<QueuePair> a = QueuePair::create_rc(pd, cq, srq, 32, "rank 1 (test peer b)");
  std::unique_ptr<QueuePair> b = QueuePair::create_rc(pd, cq, srq, 32, "rank 0 (test peer a)");
  RcLoopback() {
    a->connect(endpoint_of(*b, device));
    b->connect(endpoint_of(*a, device));
  }
  QueuePair& sender(int i) { return i == 0 ? *a : *b; }
  void address(ibv_send_wr&) const {}  // an RC QP has one destination
  // An RC receive completion names the QP it arrived on: the sender's peer.
  void expect_names_sender(const ibv_wc& wc, int i) {
    EXPECT_EQ(wc.qp_num, (i == 0 ? *b : *a).qpn()) << "the completion names the receiving QP";
  }
};

struct XrcLoopback {
  static constexpr bool kXrc = true;
  XrcResources x{"loopback", 256};
  XrcPair first{x.pd, x.cq, x.xrcd, x.device};
  XrcPair second{x.pd, x.cq, x.xrcd, x.device};
  Device& device = x.device;
  ProtectionDomain& pd = x.pd;
  CompletionQueue& cq = x.cq;
  SharedReceiveQueue& srq = x.srq;
  // The transport unlinks the domain file once the node's TGTs exist; the domain lives on.
  XrcLoopback() { x.xrcd.unlink_file(); }
  QueuePair& sender(int i) { return *(i == 0 ? first : second).ini; }
  void address(ibv_send_wr& wr) const { wr.qp_type.xrc.remote_srqn = x.srq.srq_num(); }
  void expect_names_sender(const ibv_wc& wc, int i) {
    EXPECT_EQ(wc.src_qp, sender(i).qpn()) << "an XRC receive names the sending INI QP";
  }
};

template <typename Resources>
class Loopback : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_RDMA_DEVICE();
    if constexpr (Resources::kXrc) {
      Device probe = Device::open_default();
      REQUIRE_XRC_DEVICE(probe);
    }
    lo = std::make_unique<Resources>();
  }
  std::unique_ptr<Resources> lo;
};

struct LoopbackName {
  template <typename T>
  static std::string GetName(int) {
    return T::kXrc ? "Xrc" : "Rc";
  }
};
using LoopbackTypes = ::testing::Types<RcLoopback, XrcLoopback>;
TYPED_TEST_SUITE(Loopback, LoopbackTypes, LoopbackName);

TYPED_TEST(Loopback, SendsIntoTheSharedReceiveQueueAndRefillsIt) {
  auto& lo = *this->lo;
  EXPECT_EQ(lo.srq.posted(), 16);
  EXPECT_EQ(lo.srq.is_xrc(), TypeParam::kXrc);
  if constexpr (!TypeParam::kXrc) {
    EXPECT_EQ(lo.srq.srq_num(), 0u);
  }
  std::vector<unsigned char> send_buf(1024);
  MemoryRegion send_mr(lo.pd, send_buf.data(), send_buf.size(), IBV_ACCESS_LOCAL_WRITE);
  // Five times the SRQ depth, from both senders: only reposting keeps the queue from running dry.
  for (int i = 0; i < 80; ++i) {
    const int from = i % 2;
    const std::size_t len = 1 + static_cast<std::size_t>(i * 37) % 1024;
    for (std::size_t k = 0; k < len; ++k) send_buf[k] = pattern_byte(k, i);
    ibv_sge sge{reinterpret_cast<std::uint64_t>(send_buf.data()), static_cast<std::uint32_t>(len), send_mr.lkey()};
    ibv_send_wr wr{};
    wr.wr_id = 1000 + static_cast<std::uint64_t>(i);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htonl(static_cast<std::uint32_t>(i));
    wr.send_flags = IBV_SEND_SIGNALED;
    lo.address(wr);
    lo.sender(from).post_send(wr);
    const auto wcs = wait_for(lo.cq, 2);
    ASSERT_EQ(wcs.size(), 2u) << "message " << i << " did not complete: " << describe_all(wcs);
    bool saw_recv = false;
    for (const auto& wc : wcs) {
      ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << describe_completion(wc);
      if (wc.opcode == IBV_WC_RECV) {
        saw_recv = true;
        ASSERT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
        EXPECT_EQ(ntohl(wc.imm_data), static_cast<std::uint32_t>(i));
        ASSERT_EQ(wc.byte_len, len);
        lo.expect_names_sender(wc, from);
        const auto bytes = lo.srq.slot(wc.wr_id);
        for (std::size_t k = 0; k < len; ++k) {
          ASSERT_EQ(static_cast<unsigned char>(bytes[k]), pattern_byte(k, i)) << "message " << i << " byte " << k;
        }
        lo.srq.repost(wc.wr_id);
      } else {
        EXPECT_EQ(wc.opcode, IBV_WC_SEND);
        EXPECT_EQ(wc.wr_id, 1000u + static_cast<std::uint64_t>(i));
        EXPECT_EQ(wc.qp_num, lo.sender(from).qpn()) << "the send completion names the sending QP";
      }
    }
    ASSERT_TRUE(saw_recv);
  }
  EXPECT_EQ(lo.srq.posted(), 16);
}

TYPED_TEST(Loopback, RdmaReadCopiesEveryByte) {
  auto& lo = *this->lo;
  constexpr std::size_t kBytes = 256 * 1024 + 13;  // several MTUs and an odd tail
  std::vector<unsigned char> source(kBytes), target(kBytes, 0);
  for (std::size_t k = 0; k < kBytes; ++k) source[k] = pattern_byte(k, 99);
  MemoryRegion source_mr(lo.pd, source.data(), kBytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  MemoryRegion target_mr(lo.pd, target.data(), kBytes, IBV_ACCESS_LOCAL_WRITE);
  ibv_sge sge{reinterpret_cast<std::uint64_t>(target.data()), static_cast<std::uint32_t>(kBytes), target_mr.lkey()};
  ibv_send_wr wr{};
  wr.wr_id = 7;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uint64_t>(source.data());
  wr.wr.rdma.rkey = source_mr.rkey();
  lo.address(wr);
  lo.sender(0).post_send(wr);
  const auto wcs = wait_for(lo.cq, 1);
  ASSERT_EQ(wcs.size(), 1u) << "RDMA READ did not complete: " << describe_all(wcs);
  ASSERT_EQ(wcs[0].status, IBV_WC_SUCCESS) << describe_completion(wcs[0]);
  EXPECT_EQ(wcs[0].opcode, IBV_WC_RDMA_READ);
  for (std::size_t k = 0; k < kBytes; ++k) ASSERT_EQ(target[k], source[k]) << "byte " << k;
}

TYPED_TEST(Loopback, ReadWithAKeyWithoutRemoteReadFailsWithANamedStatus) {
  auto& lo = *this->lo;
  std::vector<unsigned char> source(4096, 1), target(4096, 0);
  MemoryRegion source_mr(lo.pd, source.data(), source.size(), IBV_ACCESS_LOCAL_WRITE);  // no REMOTE_READ
  MemoryRegion target_mr(lo.pd, target.data(), target.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_sge sge{reinterpret_cast<std::uint64_t>(target.data()), 4096, target_mr.lkey()};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uint64_t>(source.data());
  wr.wr.rdma.rkey = source_mr.rkey();
  lo.address(wr);
  lo.sender(0).post_send(wr);
  const auto wcs = wait_for(lo.cq, 1);
  ASSERT_GE(wcs.size(), 1u) << "the refused READ never completed";
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_ACCESS_ERR) << describe_completion(wcs[0]);
  EXPECT_NE(describe_completion(wcs[0]).find("status"), std::string::npos);
  EXPECT_EQ(target[0], 0) << "nothing may arrive through a key without remote read";
}

// ---- XRC only --------------------------------------------------------------------------------
// A send (with immediate data) into an XRC SRQ with nothing posted is RNR-NAKed and retried
// (xmsg asks for unlimited RNR retries), and lands once a receive is posted.
TEST_F(XrcQueues, EmptyXrcSrqIsRnrNakedUntilAReceiveIsPosted) {
  XrcResources x("rnr");
  ibv_srq* empty = raw_xrc_srq(x.device, x.xrcd.get(), x.cq, x.pd, 4);
  ASSERT_NE(empty, nullptr) << "ibv_create_srq_ex: " << std::strerror(errno);
  std::uint32_t srqn = 0;
  ASSERT_EQ(ibv_get_srq_num(empty, &srqn), 0);
  {
    XrcPair pair(x.pd, x.cq, x.xrcd, x.device);
    std::vector<unsigned char> message(100, 0x17);
    MemoryRegion message_mr(x.pd, message.data(), message.size(), IBV_ACCESS_LOCAL_WRITE);
    ibv_sge sge{reinterpret_cast<std::uint64_t>(message.data()), 100, message_mr.lkey()};
    ibv_send_wr wr = xrc_request(sge, IBV_WR_SEND_WITH_IMM, srqn);
    wr.imm_data = htonl(0xfeed);
    pair.ini->post_send(wr);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    ibv_wc early[4];
    while (std::chrono::steady_clock::now() < deadline) {
      ASSERT_EQ(x.cq.poll(early), 0) << "a send into an empty SRQ completed: " << describe_completion(early[0]);
    }
    std::vector<unsigned char> landing(128, 0);
    MemoryRegion landing_mr(x.pd, landing.data(), landing.size(), IBV_ACCESS_LOCAL_WRITE);
    ibv_sge rsge{reinterpret_cast<std::uint64_t>(landing.data()), 128, landing_mr.lkey()};
    ibv_recv_wr rwr{};
    rwr.wr_id = 77;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_srq_recv(empty, &rwr, &bad), 0);
    const auto wcs = wait_for(x.cq, 2);
    ASSERT_EQ(wcs.size(), 2u) << describe_all(wcs);
    for (const auto& wc : wcs) {
      EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << describe_completion(wc);
      if (wc.opcode == IBV_WC_RECV) {
        EXPECT_EQ(wc.wr_id, 77u);
        EXPECT_EQ(wc.byte_len, 100u);
        EXPECT_EQ(wc.src_qp, pair.ini->qpn()) << "an XRC receive names the sending INI QP";
        EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
        EXPECT_EQ(ntohl(wc.imm_data), 0xfeedu);
      }
    }
    EXPECT_EQ(landing[99], 0x17);
  }
  EXPECT_EQ(ibv_destroy_srq(empty), 0);
}

TEST_F(XrcRefusal, SendNamingAnUnknownSrqNumberIsAnInvalidRequest) {
  XrcResources x("badsrqn");
  XrcPair pair(x.pd, x.cq, x.xrcd, x.device);
  const auto wcs = send_naming(*pair.ini, x.pd, x.cq, (x.srq.srq_num() + 4093) & 0xffffff, 1);
  ASSERT_EQ(wcs.size(), 1u) << "the refused send never completed";
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_INV_REQ_ERR) << describe_completion(wcs[0]);
  EXPECT_EQ(wcs[0].qp_num, pair.ini->qpn());
  EXPECT_TRUE(wait_for(x.cq, 1).empty()) << "something arrived in the SRQ through a wrong number";
}

TEST_F(XrcRefusal, SendNamingAnSrqOfAnotherDomainIsAnInvalidRequest) {
  XrcResources x("domains");  // its SRQ is in node 0's domain
  XrcDomain mine(x.device, "domains", 1);
  ASSERT_NE(mine.get(), x.xrcd.get());
  XrcPair pair(x.pd, x.cq, mine, x.device);
  const auto wcs = send_naming(*pair.ini, x.pd, x.cq, x.srq.srq_num(), 1);
  ASSERT_EQ(wcs.size(), 1u) << "the refused send never completed";
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_INV_REQ_ERR) << describe_completion(wcs[0]);
  EXPECT_TRUE(wait_for(x.cq, 1).empty()) << "a TGT delivered into an SRQ of another XRC domain";
}

// An anonymous domain (no file) still holding an SRQ refuses to close (EBUSY) and keeps
// working. A file-backed one, as a node's ranks share it, is closed per handle: one rank closing
// its handle while another's SRQ and TGT QPs use the domain succeeds and leaves them working.
TEST_F(XrcRefusal, ClosingADomainStillInUse) {
  XrcResources x("closing");
  {
    ibv_xrcd_init_attr attr{};
    attr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
    attr.fd = -1;
    attr.oflags = O_CREAT;
    ibv_xrcd* anonymous = ibv_open_xrcd(x.device.context(), &attr);
    ASSERT_NE(anonymous, nullptr) << "ibv_open_xrcd(fd -1): " << std::strerror(errno);
    ibv_srq* srq = raw_xrc_srq(x.device, anonymous, x.cq, x.pd, 4);
    ASSERT_NE(srq, nullptr) << "ibv_create_srq_ex: " << std::strerror(errno);
    EXPECT_EQ(ibv_close_xrcd(anonymous), EBUSY) << "closed a domain that still has an SRQ";
    EXPECT_EQ(ibv_destroy_srq(srq), 0);
    EXPECT_EQ(ibv_close_xrcd(anonymous), 0) << "the domain did not close once its SRQ was gone";
  }
  XrcPair pair(x.pd, x.cq, x.xrcd, x.device);
  const int fd = ::open(x.xrcd.path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << x.xrcd.path();
  ibv_xrcd_init_attr attr{};
  attr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
  attr.fd = fd;
  attr.oflags = 0;
  ibv_xrcd* second_handle = ibv_open_xrcd(x.device.context(), &attr);
  ::close(fd);
  ASSERT_NE(second_handle, nullptr) << "a second handle on the domain file: " << std::strerror(errno);
  EXPECT_EQ(ibv_close_xrcd(second_handle), 0) << "closing one handle of a shared, busy domain";
  const auto wcs = send_naming(*pair.ini, x.pd, x.cq, x.srq.srq_num(), 2);
  ASSERT_EQ(wcs.size(), 2u) << "the domain stopped working when another handle closed: " << describe_all(wcs);
  for (const auto& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << describe_completion(wc);
}

// An RDMA READ through a TGT is checked against the PD of the SRQ the request names (IBA
// A14): a key of another PD is a remote access error, the same key under the right SRQ works.
TEST_F(XrcRefusal, ReadWithAKeyOutsideTheNamedSrqsPdIsARemoteAccessError) {
  XrcResources x("pdcheck");
  ProtectionDomain other_pd(x.device);
  SharedReceiveQueue other_pd_srq(other_pd, x.xrcd, x.cq, 16, 1024);
  std::vector<unsigned char> source(256, 0x42);
  MemoryRegion source_mr(x.pd, source.data(), source.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  auto read_naming = [&](std::uint32_t srqn, std::vector<unsigned char>& target) {
    XrcPair pair(x.pd, x.cq, x.xrcd, x.device);
    MemoryRegion target_mr(x.pd, target.data(), target.size(), IBV_ACCESS_LOCAL_WRITE);
    ibv_sge sge{reinterpret_cast<std::uint64_t>(target.data()), static_cast<std::uint32_t>(target.size()),
                target_mr.lkey()};
    ibv_send_wr rd = xrc_read(sge, source.data(), source_mr.rkey(), srqn);
    pair.ini->post_send(rd);
    return wait_for(x.cq, 1);
  };
  std::vector<unsigned char> refused(256, 0);
  auto wcs = read_naming(other_pd_srq.srq_num(), refused);
  ASSERT_EQ(wcs.size(), 1u) << "the refused READ never completed";
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_ACCESS_ERR) << describe_completion(wcs[0]);
  EXPECT_EQ(refused[0], 0) << "bytes arrived through a key outside the named SRQ's PD";
  std::vector<unsigned char> allowed(256, 0);
  wcs = read_naming(x.srq.srq_num(), allowed);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS) << describe_completion(wcs[0]);
  EXPECT_EQ(allowed, source);
}

// A TGT belongs to whoever created it: when that process dies (here SIGKILLed, as a rank
// would be) the TGT goes, and the sender's next request runs into the transport retry limit, an
// error completion within seconds, not a hang. The SRQ it named lives on in another process.
TEST_F(XrcRefusal, TgtWhoseOwnerDiedFailsTheSenderWithRetryExceeded) {
  XrcResources x("owner");
  auto ini = QueuePair::create_xrc_ini(x.pd, x.cq, 16, "node 1 (the owner's)");
  int to_child[2];
  int to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  const pid_t owner = fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    // The TGT's owner: its own device context and domain handle on the same file.
    close(to_child[1]);
    close(to_parent[0]);
    try {
      Device own = Device::open_default();
      XrcDomain domain(own, "owner", 0);
      auto tgt = QueuePair::create_xrc_tgt(domain, "rank 0 (the sender)");
      std::uint32_t ini_id[2];
      if (read(to_child[0], ini_id, sizeof ini_id) != sizeof ini_id) _exit(3);
      RemoteEndpoint ep = endpoint_of(*tgt, own);
      ep.qpn = ini_id[0];
      ep.psn = ini_id[1];
      tgt->connect(ep);
      const std::uint32_t tgt_id[2] = {tgt->qpn(), tgt->psn()};
      if (write(to_parent[1], tgt_id, sizeof tgt_id) != sizeof tgt_id) _exit(4);
      char never;
      while (read(to_child[0], &never, 1) != 0) {
      }
    } catch (...) {
      _exit(5);
    }
    _exit(0);
  }
  close(to_child[0]);
  close(to_parent[1]);
  const std::uint32_t ini_id[2] = {ini->qpn(), ini->psn()};
  ASSERT_EQ(write(to_child[1], ini_id, sizeof ini_id), static_cast<ssize_t>(sizeof ini_id));
  std::uint32_t tgt_id[2] = {0, 0};
  ASSERT_EQ(read(to_parent[0], tgt_id, sizeof tgt_id), static_cast<ssize_t>(sizeof tgt_id)) << "the owner failed";
  RemoteEndpoint ep = endpoint_of(*ini, x.device);
  ep.qpn = tgt_id[0];
  ep.psn = tgt_id[1];
  ini->connect(ep);
  auto wcs = send_naming(*ini, x.pd, x.cq, x.srq.srq_num(), 2);
  ASSERT_EQ(wcs.size(), 2u) << "the owner's TGT did not deliver: " << describe_all(wcs);
  for (const auto& wc : wcs) {
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << describe_completion(wc);
    if (wc.opcode == IBV_WC_RECV) x.srq.repost(wc.wr_id);
  }

  ASSERT_EQ(kill(owner, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(owner, &status, 0), owner);
  close(to_child[1]);
  close(to_parent[0]);
  const auto killed_at = std::chrono::steady_clock::now();
  std::vector<unsigned char> buf(64, 0x33);
  MemoryRegion mr(x.pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_sge sge{reinterpret_cast<std::uint64_t>(buf.data()), 64, mr.lkey()};
  ibv_send_wr wr = xrc_request(sge, IBV_WR_SEND, x.srq.srq_num());
  ini->post_send(wr);
  std::vector<ibv_wc> after;
  ibv_wc wc[4];
  while (after.empty() && std::chrono::steady_clock::now() - killed_at < std::chrono::seconds(40)) {
    const int n = x.cq.poll(wc);
    after.insert(after.end(), wc, wc + n);
  }
  ASSERT_EQ(after.size(), 1u) << "no completion 40 s after the TGT's owner died";
  EXPECT_EQ(after[0].status, IBV_WC_RETRY_EXC_ERR) << describe_completion(after[0]);
  EXPECT_EQ(after[0].qp_num, ini->qpn());
}

TEST(VerbsTransportConfig, ModeFollowsTheDeviceAndNamesTheVariable) {
  REQUIRE_RDMA_DEVICE();
  Device device = Device::open_default();
  const PlanMode native = device.supports_xrc() ? PlanMode::xrc : PlanMode::rc;
  EXPECT_EQ(choose_mode(device, nullptr), native);
  EXPECT_EQ(choose_mode(device, "auto"), native);
  EXPECT_EQ(choose_mode(device, "rc"), PlanMode::rc);
  try {
    choose_mode(device, "ud");
    ADD_FAILURE() << "accepted XMSG_VERBS_MODE=ud";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("XMSG_VERBS_MODE"), std::string::npos) << e.what();
  }
  if (!device.supports_xrc()) {
    try {
      choose_mode(device, "xrc");
      ADD_FAILURE() << "XMSG_VERBS_MODE=xrc accepted on a device without XRC";
    } catch (const VerbsError& e) {
      EXPECT_NE(std::string(e.what()).find("no XRC-capable device"), std::string::npos) << e.what();
    }
  }
}

TEST(RegistrationCache, SharesRangesInUseAndDeregistersWhenIdle) {
  REQUIRE_RDMA_DEVICE();
  Device device = Device::open_default();
  ProtectionDomain pd(device);
  RegistrationCache cache(pd);
  std::vector<unsigned char> buf(64 * 1024);
  const auto& first = cache.acquire(buf.data(), buf.size(), IBV_ACCESS_REMOTE_READ);
  const auto& second = cache.acquire(buf.data(), buf.size(), IBV_ACCESS_REMOTE_READ);
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(cache.registrations(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  const auto& local = cache.acquire(buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  EXPECT_NE(&local, &first) << "different access rights need their own registration";
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_TRUE(cache.release(buf.data(), buf.size(), IBV_ACCESS_REMOTE_READ));
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_TRUE(cache.release(buf.data(), buf.size(), IBV_ACCESS_REMOTE_READ));
  EXPECT_TRUE(cache.release(buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE));
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_FALSE(cache.release(buf.data(), buf.size(), IBV_ACCESS_REMOTE_READ));
}

}  // namespace
