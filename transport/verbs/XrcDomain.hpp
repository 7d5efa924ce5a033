// XrcDomain: the node's shared XRC domain. Ranks of one node share it by opening the same file:
// XrcDomainFile makes that file job- and user-scoped (0600, in a private directory:
// $XMSG_JOB_TMPDIR when set, else $TMPDIR/xmsg-<uid> created 0700), so unrelated jobs never share
// a domain. Anyone may set XMSG_JOB_TMPDIR: a directory there that another user owns or that
// group or others may write is refused, and so is an existing domain file that is not this
// user's 0600 regular file (another user's 0666 file would otherwise become our XRCD key). The file is unlinked once every local rank has opened it (the caller runs a
// node-local barrier first); the domain itself lives on in the opened descriptors.
// XRC-only code: the RC twin needs none of this.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <string_view>

namespace xmsg::verbs {

class Device;

class XrcDomainFile {
 public:
  // Throws std::runtime_error naming the path when the directory is not private or the file
  // cannot be opened; `job_id` must be safe in a file name.
  XrcDomainFile(std::string_view job_id, int node_id);
  ~XrcDomainFile();
  XrcDomainFile(const XrcDomainFile&) = delete;
  XrcDomainFile& operator=(const XrcDomainFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Removes the name; safe when another local rank already did.
  void unlink();

  static std::string private_directory();
  // Throws std::runtime_error naming XMSG_JOB_TMPDIR, `dir` and what is wrong unless `dir` is a
  // directory (symlinks followed) of this user that neither group nor others may write.
  static void check_job_directory(const std::string& dir);

 private:
  void close_and_unlink();

  std::string path_;
  int fd_ = -1;
  bool linked_ = true;
};

class XrcDomain {
 public:
  // Throws VerbsError naming the device when it lacks XRC ("no XRC-capable device").
  XrcDomain(Device& device, std::string_view job_id, int node_id);
  ~XrcDomain();
  XrcDomain(const XrcDomain&) = delete;
  XrcDomain& operator=(const XrcDomain&) = delete;

  ibv_xrcd* get() const { return xrcd_; }
  Device& device() const { return device_; }
  const std::string& path() const { return file_.path(); }
  void unlink_file() { file_.unlink(); }

 private:
  Device& device_;
  XrcDomainFile file_;
  ibv_xrcd* xrcd_ = nullptr;
};

}  // namespace xmsg::verbs
