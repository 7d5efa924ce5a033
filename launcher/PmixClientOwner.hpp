#pragma once
// Who owns the other end of the PMIx connection the library is accepting right now.
//
// OpenPMIx 4's `native` security takes a TCP client's uid from what the client says, so any
// local user can connect to a node server's loopback port claiming one of the job's ranks
// (issue 19: the job's store is readable, and a client that joins as rank r and goes is taken
// for rank r lost, so the job's next fence never completes). The kernel knows better: a
// socket's owner is its creator's, and nobody can claim another's; sock_diag (what ss(8)
// reads; /proc/net/tcp where the kernel lacks tcp_diag) reports it to every user. The library
// tells the host nothing about the socket, but it calls the client_connected upcall on its own
// thread right after answering the handshake (4 bytes of status, 4 of the client's index) and
// before it makes the socket non-blocking; connections accepted but not yet handled have had
// nothing written to them, and the ones handled before are non-blocking and were seen here.
// So the one blocking connection to the server's port, not seen before, that has had exactly
// 8 bytes written is the one being accepted.
#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace xmsg::launcher {

// The loopback port a client is told to connect to, from the variables
// PMIx_server_setup_fork adds ("pmix-server.<pid>;tcp4://127.0.0.1:<port>"); 0 if none.
uint16_t pmix_port_in(const std::vector<std::string>& env);

// One end of a TCP connection, by its addresses.
struct SocketEnd {
  sockaddr_storage local{};
  sockaddr_storage remote{};
};

// The state (the kernel's TCP_* number), owner and inode of TCP socket `end` of this network
// namespace: from sock_diag, else (a kernel without the tcp_diag module) from /proc/net/tcp;
// only the latter with `proc_net_only`. Empty if there is no such socket.
struct SocketInfo {
  uint8_t state = 0;
  uid_t uid = 0;
  uint64_t inode = 0;
};
std::optional<SocketInfo> socket_info(const SocketEnd& end, bool proc_net_only = false);

struct ConnectingClient {
  uid_t uid = 0;           // owner of the client's socket
  std::string address;     // the client's address and port
  uint64_t inode = 0;      // of the client's socket
  SocketEnd server_end;    // the library's end
  uint64_t server_inode = 0;
  int server_fd = -1;      // its descriptor here (a hint for the next search)
};

// No connection looks like the one being accepted: the library does not work as above.
struct NotIdentified {
  std::string why;
};

// The connection to `port` (of this network namespace) that the PMIx library is accepting
// (see above); NotIdentified; or why the client cannot be admitted (it is gone). `seen` holds the server ends' inodes of the
// connections accepted before; the caller adds this one's. The search starts around `near_fd`
// (the last one's server_fd; -1: none).
std::variant<ConnectingClient, NotIdentified, std::string> connecting_pmix_client(
    uint16_t port, const std::set<uint64_t>& seen, int near_fd = -1);

// Whether the library still has its end of a connection whose client end was closed: the
// socket is established or waiting for the library's close (CLOSE_WAIT).
bool server_end_open(const SocketEnd& end);

// A descriptor of socket `inode` held by process `pid` or one of its descendants (a rank started
// through a wrapper script runs its PMIx client in a child), taken with pidfd_getfd (the holder
// must be ours to trace: our child or below), close-on-exec; -1 if none of them has it or it
// cannot be taken. Holding a client's end keeps its connection open after the client dies (see
// PmixServer).
int take_client_socket(pid_t pid, uint64_t inode);

}  // namespace xmsg::launcher
