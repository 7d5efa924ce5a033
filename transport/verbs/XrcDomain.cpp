#include "XrcDomain.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "Device.hpp"
#include "VerbsError.hpp"

namespace xmsg::verbs {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

std::string XrcDomainFile::private_directory() {
  if (const char* job_dir = std::getenv("XMSG_JOB_TMPDIR"); job_dir != nullptr && *job_dir != '\0') {
    return job_dir;  // the launcher made it private to this job
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/xmsg-" + std::to_string(getuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::runtime_error("cannot create private directory " + dir + ": " + errno_text(errno));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + dir + ": " + errno_text(errno));
  // Someone else's directory, a symlink or a group/world-accessible one would let another user
  // join or replace our XRC domain.
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077) != 0) {
    throw std::runtime_error(dir + " is not a private directory of this user (mode 0700 expected)");
  }
  return dir;
}

XrcDomainFile::XrcDomainFile(std::string_view job_id, int node_id) {
  if (job_id.empty() || job_id.find('/') != std::string_view::npos) {
    throw std::invalid_argument("job_id: '" + std::string(job_id) + "' is not usable in a file name");
  }
  if (node_id < 0) throw std::invalid_argument("node_id: must be >= 0, got " + std::to_string(node_id));
  path_ = private_directory() + "/xrcd-" + std::string(job_id) + "-node" + std::to_string(node_id);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot open XRC domain file " + path_ + ": " + errno_text(errno));
}

XrcDomainFile::~XrcDomainFile() {
  // A rank that dies before the node barrier must not leave the name behind.
  if (linked_) ::unlink(path_.c_str());
  if (fd_ >= 0) ::close(fd_);
}

void XrcDomainFile::unlink() {
  if (!linked_) return;
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    throw std::runtime_error("cannot unlink XRC domain file " + path_ + ": " + errno_text(errno));
  }
  linked_ = false;
}

XrcDomain::XrcDomain(Device& device, std::string_view job_id, int node_id)
    : device_(device), file_(job_id, node_id) {
  if (!device.supports_xrc()) {
    file_.unlink();
    throw VerbsError("no XRC-capable device: " + device.label() + " lacks IBV_DEVICE_XRC");
  }
  ibv_xrcd_init_attr attr{};
  attr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
  attr.fd = file_.fd();
  attr.oflags = O_CREAT;
  xrcd_ = ibv_open_xrcd(device.context(), &attr);
  if (xrcd_ == nullptr) {
    const int err = errno;
    file_.unlink();
    throw_verbs_error("ibv_open_xrcd(" + file_.path() + ")", device.label(), err);
  }
}

XrcDomain::~XrcDomain() {
  if (xrcd_ != nullptr) ibv_close_xrcd(xrcd_);
}

}  // namespace xmsg::verbs
