#include "CmaCopy.hpp"

#include <cerrno>
#include <cstring>
#include <sys/uio.h>

namespace xmsg::transport::shm {

bool cma_read(pid_t pid, uint64_t remote_addr, void* dst, size_t len, std::string& err) {
  auto* out = static_cast<char*>(dst);
  size_t done = 0;
  while (done < len) {
    iovec local{out + done, len - done};
    iovec remote{reinterpret_cast<void*>(remote_addr + done), len - done};
    ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = std::string("process_vm_readv failed: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) {
      err = "process_vm_readv copied nothing (remote buffer unmapped?)";
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool cma_write(pid_t pid, uint64_t remote_addr, const void* src, size_t len, std::string& err) {
  auto* in = static_cast<const char*>(src);
  size_t done = 0;
  while (done < len) {
    iovec local{const_cast<char*>(in) + done, len - done};
    iovec remote{reinterpret_cast<void*>(remote_addr + done), len - done};
    ssize_t n = ::process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = std::string("process_vm_writev failed: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) {
      err = "process_vm_writev copied nothing (remote buffer unmapped?)";
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool cma_probe(pid_t pid, uint64_t addr, uint64_t expected) {
  uint64_t v = 0;
  std::string err;
  return cma_read(pid, addr, &v, sizeof v, err) && v == expected;
}

}  // namespace xmsg::transport::shm
