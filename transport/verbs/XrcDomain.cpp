#include "XrcDomain.hpp"

#include <xmsg/bootstrap/parameters.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "Device.hpp"
#include "VerbsError.hpp"

namespace xmsg::verbs {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace

void XrcDomainFile::check_job_directory(const std::string& dir) {
  // stat, not lstat: a user may point the variable at a symlink to a directory of theirs. What
  // matters is the directory the name leads to.
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    throw std::runtime_error("XMSG_JOB_TMPDIR=" + dir + ": cannot use it: " + errno_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error("XMSG_JOB_TMPDIR=" + dir + " is not a directory");
  if (st.st_uid != geteuid()) {
    throw std::runtime_error("XMSG_JOB_TMPDIR=" + dir + " is owned by uid " + std::to_string(st.st_uid) +
                             ", not by this user (uid " + std::to_string(geteuid()) +
                             "): its owner could replace the XRC domain file");
  }
  if ((st.st_mode & 022) != 0) {
    throw std::runtime_error("XMSG_JOB_TMPDIR=" + dir + " has mode " + mode_text(st.st_mode) +
                             ": writable by group or others, who could plant the XRC domain file "
                             "(0700 expected)");
  }
}

std::string XrcDomainFile::private_directory() {
  if (const auto job_dir = params::raw("XMSG_JOB_TMPDIR")) {
    // xmsgrun makes it private to this job, but anyone may set the variable.
    check_job_directory(*job_dir);
    return *job_dir;
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
  // The first local rank creates the file, the others open it. A file that exists must be one
  // of ours, 0600: whoever could write or replace it would share (or spoil) our XRC domain.
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ >= 0) {
    if (::fchmod(fd_, 0600) != 0) {  // the umask could only have taken bits away
      const int err = errno;
      close_and_unlink();
      throw std::runtime_error("cannot set mode 0600 on XRC domain file " + path_ + ": " + errno_text(err));
    }
    return;
  }
  if (errno != EEXIST) throw std::runtime_error("cannot create XRC domain file " + path_ + ": " + errno_text(errno));
  linked_ = false;  // not ours to unlink until it has passed the checks
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd_ < 0) throw std::runtime_error("cannot open XRC domain file " + path_ + ": " + errno_text(errno));
  struct stat st {};
  std::string wrong;
  if (::fstat(fd_, &st) != 0) wrong = std::string("cannot stat it: ") + errno_text(errno);
  else if (!S_ISREG(st.st_mode)) wrong = "it is not a regular file";
  else if (st.st_uid != geteuid()) wrong = "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(geteuid()) + ")";
  else if ((st.st_mode & 07777) != 0600) wrong = "it has mode " + mode_text(st.st_mode) + ", not 0600";
  if (!wrong.empty()) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("refusing the existing XRC domain file " + path_ + ": " + wrong +
                             " (another user may have planted it)");
  }
  linked_ = true;
}

void XrcDomainFile::close_and_unlink() {
  ::unlink(path_.c_str());
  linked_ = false;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
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
