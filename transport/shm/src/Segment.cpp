#include "Segment.hpp"

#include <xmsg/transport/transport.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <unistd.h>

namespace xmsg::transport::shm {

namespace {
std::string errno_text(const char* what, const std::string& name) {
  return std::string(what) + "(/dev/shm" + name + ") failed: " + std::strerror(errno);
}
// What a failed reservation says: which segment, how much it needs, how much /dev/shm has left,
// and what to change.
std::string shortage_text(const std::string& name, size_t bytes, int err) {
  std::string text = "cannot reserve " + std::to_string(bytes) + " bytes for /dev/shm" + name + ": " + std::strerror(err);
  struct statvfs fs{};
  if (::statvfs("/dev/shm", &fs) == 0) {
    const unsigned long long free_bytes = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
    const unsigned long long total = static_cast<unsigned long long>(fs.f_blocks) * fs.f_frsize;
    text += " (/dev/shm has " + std::to_string(free_bytes) + " of " + std::to_string(total) + " bytes free)";
  }
  if (err == ENOSPC) {
    text += "; give /dev/shm more room (containers: docker run --shm-size=1g, or a larger tmpfs) or use smaller "
            "rings (XMSG_SHM_QUEUE_BYTES, docs/shm.md), or run fewer ranks per node";
  }
  return text;
}

}  // namespace

Segment Segment::create(const std::string& name, size_t bytes) {
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Left over by a killed job that reused this id: it is ours (0600), replace it.
    ::shm_unlink(name.c_str());
    fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  }
  if (fd < 0) throw TransportError("shm: " + errno_text("shm_open", name));
  // Reserve every page now: ftruncate alone leaves a sparse file, and the first touch past what
  // tmpfs can hold (Docker's 64 MiB /dev/shm) kills the rank with SIGBUS instead of an error.
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    ::close(fd);
    ::shm_unlink(name.c_str());
    throw TransportError("shm: " + shortage_text(name, bytes, err));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int saved = errno;
  ::close(fd);
  if (p == MAP_FAILED) {
    errno = saved;
    std::string msg = errno_text("mmap", name);
    ::shm_unlink(name.c_str());
    throw TransportError("shm: " + msg);
  }
  Segment s;
  s.name_ = name;
  s.data_ = p;
  s.bytes_ = bytes;
  s.owner_linked_ = true;
  return s;
}

Segment Segment::create_nameless(const std::string& label, size_t bytes) {
  // The label is what /proc/<pid>/fd shows ("memfd:xmsg-..."): the name without its slash.
  const int fd = ::memfd_create(label.c_str() + (label.starts_with('/') ? 1 : 0), MFD_CLOEXEC);
  if (fd < 0) throw TransportError("shm: memfd_create(" + label + ") failed: " + std::strerror(errno));
  // As in create(): a shortage is an error now, not a SIGBUS at first touch. A memfd draws on
  // the same shmem pool as /dev/shm, but not on /dev/shm's mount limit.
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    ::close(fd);
    throw TransportError("shm: cannot reserve " + std::to_string(bytes) + " bytes of shared memory for " + label +
                         ": " + std::strerror(err));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int saved = errno;
    ::close(fd);
    throw TransportError("shm: mmap of " + std::to_string(bytes) + " bytes for " + label +
                         " failed: " + std::strerror(saved));
  }
  Segment s;
  s.name_ = label;
  s.data_ = p;
  s.bytes_ = bytes;
  s.fd_ = fd;
  return s;
}

Segment Segment::open(const std::string& name, size_t bytes, bool populate) {
  int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw TransportError("shm: " + errno_text("shm_open", name));
  try {
    Segment s = map(fd, name, 0, bytes, populate);
    ::close(fd);
    return s;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

Segment Segment::map(int fd, const std::string& name, size_t offset, size_t bytes, bool populate) {
  // The owner has already touched every page; populating our page tables now keeps a minor
  // fault per 4 KiB (about 1 us here) out of the first lap of messages through the ring.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd,
                   static_cast<off_t>(offset));
  if (p == MAP_FAILED) throw TransportError("shm: " + errno_text("mmap", name));
  Segment s;
  s.name_ = name;
  s.data_ = p;
  s.bytes_ = bytes;
  return s;
}

Segment& Segment::operator=(Segment&& o) noexcept {
  if (this != &o) {
    unlink();
    close_descriptor();
    if (data_) ::munmap(data_, bytes_);
    name_ = std::move(o.name_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    owner_linked_ = o.owner_linked_;
    fd_ = o.fd_;
    o.data_ = nullptr;
    o.bytes_ = 0;
    o.owner_linked_ = false;
    o.fd_ = -1;
  }
  return *this;
}

void Segment::unlink() {
  if (owner_linked_) {
    ::shm_unlink(name_.c_str());
    owner_linked_ = false;
  }
}

void Segment::close_descriptor() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Segment::~Segment() {
  unlink();
  close_descriptor();
  if (data_) ::munmap(data_, bytes_);
  data_ = nullptr;
}

}  // namespace xmsg::transport::shm
