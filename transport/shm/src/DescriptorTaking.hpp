// DescriptorTaking: a peer takes a rank's segment by the owner's open descriptor (pidfd_getfd(2),
// Linux 5.6) instead of by its /dev/shm name, so that the name can go as soon as the wire-up is
// done and a job killed with kill -9 leaves nothing in /dev/shm under any launcher.
#pragma once

namespace xmsg::transport::shm {

// Whether peers of this process (same user, same PID namespace) can take its descriptor `fd`:
// the call exists and is not filtered (tried on ourselves), the process is dumpable, and Yama
// does not restrict ptrace to descendants (ptrace_scope 0 or no Yama). Each rank publishes its
// answer before the wire-up fence, so every local rank reaches the same verdict.
bool descriptors_takable(int fd);

// A duplicate of descriptor `remote_fd` of the process behind `pidfd` (close-on-exec), or -1
// with errno set.
int take_descriptor(int pidfd, int remote_fd);

}  // namespace xmsg::transport::shm
