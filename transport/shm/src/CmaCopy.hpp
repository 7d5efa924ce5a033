// CmaCopy: cross-memory attach (process_vm_readv) between processes of one user.
// Refused with EPERM where ptrace is restricted (Yama ptrace_scope >= 1 between non-ancestors,
// containers without CAP_SYS_PTRACE); the transport probes it at wire-up and reports
// remote_read=false so the runtime pipelines the data through the queue instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace xmsg::transport::shm {

// Copies `len` bytes at `remote_addr` in process `pid` into `dst`. False with `err` set on failure.
bool cma_read(pid_t pid, uint64_t remote_addr, void* dst, size_t len, std::string& err);
// Copies `len` bytes from `src` to `remote_addr` in process `pid`.
bool cma_write(pid_t pid, uint64_t remote_addr, const void* src, size_t len, std::string& err);
// True when reading 8 bytes at `addr` of `pid` works and yields `expected`.
bool cma_probe(pid_t pid, uint64_t addr, uint64_t expected);

}  // namespace xmsg::transport::shm
