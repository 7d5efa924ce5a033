// The one declaration of every XMSG_* variable (parameters.hpp says how each type is parsed).
// The per-layer pages of docs/ hold this table's rows for their layer between
// `<!-- parameters:LAYER -->` markers, written by `xmsg_info --parameters-markdown LAYER`; the
// contract test docs_parameters fails when a page and this table disagree.
#include <xmsg/bootstrap/parameters.hpp>

#include <array>

namespace xmsg::params {
namespace {

constexpr std::int64_t K = 1024;
constexpr std::int64_t M = K * K;
constexpr std::int64_t G = M * K;
constexpr std::int64_t T = G * K;
constexpr std::int64_t kNoLimit = 1024 * T;  // large enough for any size a rank can hold

using enum Type;
using enum Layer;

constexpr std::array kTable = {
    // ---- runtime (docs/running.md) -------------------------------------------------------------
    Parameter{"XMSG_TRANSPORTS", Text, Runtime, "", 0, 0, "", "",
              "transports and their order, e.g. `tcp`, `shm,tcp` (unset: shm,verbs,tcp, those built and usable)"},
    Parameter{"XMSG_VERBOSE", Flag, Runtime, "off", 0, 0, "", "",
              "transports say on stderr what they chose: devices, addresses, connections, QP counts"},
    Parameter{"XMSG_WAIT_POLICY", Choice, Runtime, "auto", 0, 0, "spin|yield|auto", "",
              "`spin`, `yield` (after XMSG_SPIN_COUNT polls) or `auto`: yield when ranks outnumber cores"},
    Parameter{"XMSG_SPIN_COUNT", Integer, Runtime, "32", 0, 1000000000, "", "polls",
              "polls before a waiting rank yields its core (XMSG_WAIT_POLICY yield or auto)"},
    Parameter{"XMSG_HOST_RANKS", Integer, Runtime, "", 1, 1 << 30, "", "ranks",
              "ranks of the job sharing this host's CPUs, for the oversubscription test (set by xmsgrun, whose virtual nodes share one host; unset: the node's rank count)"},
    Parameter{"XMSG_EAGER_LIMIT", Bytes, Runtime, "", 0, G, "", "",
              "largest message sent eagerly (capped by the transport's limit); above it rendezvous (unset: each transport's own: shm 8K where CMA reaches every local peer, else 64K)"},
    Parameter{"XMSG_RNDV_FRAGMENT", Bytes, Runtime, "64K", 1, G, "", "",
              "rendezvous data fragment (capped by the transport's largest payload)"},
    Parameter{"XMSG_RNDV_NO_READ", Flag, Runtime, "off", 0, 0, "", "",
              "rendezvous by data fragments even where remote read exists (shm CMA, RDMA READ, tcp read requests)"},
    Parameter{"XMSG_RNDV_SPLIT", Bytes, Runtime, "32K", 0, kNoLimit, "", "",
              "rendezvous messages from this size are copied half by the receiver, half by the sender (0: never)"},

    Parameter{"XMSG_RMA_REMOTE", Flag, Runtime, "on", 0, 0, "", "",
              "puts and gets on windows across nodes are the transports' one-sided writes and reads where they have them (RDMA over verbs, CMA inside a node); off: messages served by the target"},
    Parameter{"XMSG_PROGRESS_THREAD", Flag, Runtime, "on", 0, 0, "", "",
              "MPI: while non-blocking collectives, freed requests or windows that need the target's help are in flight, a helper thread moves them on whenever the rank is outside MPI (off: only inside MPI calls)"},
    Parameter{"XMSG_THREAD_MULTIPLE", Flag, Runtime, "on", 0, 0, "", "",
              "MPI: MPI_Init_thread grants MPI_THREAD_MULTIPLE when asked (one lock for the layer, handed between threads at every pause of a wait); off: at most MPI_THREAD_SERIALIZED"},
    Parameter{"XMSG_PROGRESS_INTERVAL", Integer, Runtime, "1000", 10, 1000000, "", "us",
              "how often the progress thread looks; a rank computing outside MPI leaves a peer's request waiting at most twice this plus one progress pass"},

    // ---- collectives (docs/collectives.md) -----------------------------------------------------
    Parameter{"XMSG_COLL_TRACE", Flag, Collectives, "off", 0, 0, "", "",
              "one line per collective call on stderr saying which algorithm ran"},
    Parameter{"XMSG_COLL_SHM", Flag, Collectives, "on", 0, 0, "", "",
              "off: no shared-memory collectives (everything point-to-point)"},
    Parameter{"XMSG_COLL_SHM_SLOT", Bytes, Collectives, "8K", 128, 64 * M, "", "",
              "bytes of each rank's slot; data up to this size goes through shared memory"},
    Parameter{"XMSG_COLL_SHM_BCAST_MAX", Bytes, Collectives, "8K", 0, kNoLimit, "", "",
              "largest bcast through the shared-memory slots"},
    Parameter{"XMSG_COLL_SHM_BARRIER", Choice, Collectives, "auto", 0, 0, "auto|rooted|all", "",
              "shared-memory barrier: `rooted`, `all` (every rank polls every flag) or `auto` by the collective before it"},
    Parameter{"XMSG_COLL_PIPE_CHUNK", Bytes, Collectives, "64K", 4 * K, G, "", "",
              "bytes of one pipeline chunk (rounded up to a page)"},
    Parameter{"XMSG_COLL_PIPE_CHUNKS", Integer, Collectives, "16", 1, 1024, "", "chunks",
              "chunks in each rank's pipeline ring"},
    Parameter{"XMSG_COLL_PIPE_ALLGATHER_MIN", Bytes, Collectives, "8K", 0, kNoLimit, "", "",
              "smallest one-node allgather block through the pipelines (smaller: point to point)"},
    Parameter{"XMSG_COLL_PIPE_REDUCE_SCATTER_MIN", Bytes, Collectives, "8K", 0, kNoLimit, "", "",
              "smallest one-node reduce_scatter vector (commutative op) through the pipelines (smaller: allreduce, own segment kept)"},
    Parameter{"XMSG_COLL_PIPE_BCAST_MAX", Bytes, Collectives, "", 0, kNoLimit, "", "",
              "largest one-node bcast through the pipelines (0: never; unset: below where the measured profile gives single copy)"},
    Parameter{"XMSG_COLL_PIPE_ALLREDUCE_MAX", Bytes, Collectives, "", 0, kNoLimit, "", "",
              "largest one-node allreduce (commutative op) through the pipelines (0: never; unset: from the measured profile)"},
    Parameter{"XMSG_COLL_PIPE_ALLTOALL_MAX", Bytes, Collectives, "", 0, kNoLimit, "", "",
              "largest one-node alltoall block through the pipelines (0: never; unset: from the measured profile)"},
    Parameter{"XMSG_COLL_SCRATCH_CACHE", Bytes, Collectives, "32M", 0, kNoLimit, "", "",
              "scratch memory of finished non-blocking and schedule-built collectives kept for the next ones (0: freed at once)"},
    Parameter{"XMSG_COLL_CMA", Flag, Collectives, "on", 0, 0, "", "",
              "off (or XMSG_SHM_CMA=off): no single-copy reads between ranks in collectives"},
    Parameter{"XMSG_COLL_CMA_BCAST_MIN", Bytes, Collectives, "128K", 0, kNoLimit, "", "",
              "bcast size from which the single-copy path is used (when the pipelines do not take it)"},
    Parameter{"XMSG_COLL_CMA_ALLREDUCE_MIN", Bytes, Collectives, "128K", 0, kNoLimit, "", "",
              "allreduce size from which the single-copy path is used (non-commutative ops, or pipelines off)"},
    Parameter{"XMSG_COLL_CMA_ALLTOALL_MIN", Bytes, Collectives, "128K", 0, kNoLimit, "", "",
              "alltoall block size from which the single-copy path is used (pipelines off)"},
    Parameter{"XMSG_COLL_HANDOFF_NS", Integer, Collectives, "", 0, 1000000000, "", "ns",
              "replaces the measured hand-off (half a 1-byte round trip, ranks 0-1) in the large one-node choice (unset: measured)"},
    Parameter{"XMSG_COLL_COPY_MBPS", Integer, Collectives, "", 1, 1000000000, "", "MB/s",
              "replaces the measured memcpy bandwidth (at every size) in the large one-node choice (unset: measured at 256 KiB and 2 MiB)"},
    Parameter{"XMSG_COLL_HANDED_COPY_MBPS", Integer, Collectives, "", 1, 1000000000, "", "MB/s",
              "replaces the measured bandwidth of copying out data another rank has just written (a pipeline reader's copy) and of writing over lines another rank has just read (a pipeline writer's) in the large one-node choice (unset: measured)"},
    Parameter{"XMSG_COLL_CMA_MBPS", Integer, Collectives, "", 0, 1000000000, "", "MB/s",
              "replaces the measured CMA read bandwidth (at every size) in the large one-node choice (0: never single copy; unset: measured at 256 KiB and 2 MiB)"},
    Parameter{"XMSG_COLL_CMA_CALL_NS", Integer, Collectives, "", 0, 1000000000, "", "ns",
              "replaces the measured cost of one CMA read call (a 4 KiB process_vm_readv) in the large one-node choice (unset: measured)"},
    Parameter{"XMSG_COLL_NODE_AWARE", Flag, Collectives, "on", 0, 0, "", "",
              "off: no node-aware (leader per node) variants across nodes"},
    Parameter{"XMSG_COLL_OVERSUBSCRIBED", Flag, Collectives, "", 0, 0, "", "",
              "forces the oversubscribed choice (unset: detected, most ranks on one node > online CPUs)"},
    Parameter{"XMSG_COLL_BARRIER_LINEAR_MAX", Integer, Collectives, "8", 0, 1 << 30, "", "ranks",
              "communicator size up to which the barrier is linear even when not oversubscribed"},
    Parameter{"XMSG_COLL_BCAST_FLAT_MAX", Bytes, Collectives, "1T", 0, kNoLimit, "", "",
              "oversubscribed: bcast sizes that go linear"},
    Parameter{"XMSG_COLL_BCAST_LARGE", Bytes, Collectives, "64K", 0, kNoLimit, "", "",
              "bcast size from which scatter + allgather is used"},
    Parameter{"XMSG_COLL_REDUCE_FLAT_MAX", Bytes, Collectives, "1M", 0, kNoLimit, "", "",
              "oversubscribed: reduce sizes that go linear (the root holds n vectors)"},
    Parameter{"XMSG_COLL_ALLREDUCE_FLAT_MAX", Bytes, Collectives, "1M", 0, kNoLimit, "", "",
              "oversubscribed: allreduce sizes that go linear (rank 0 holds n-1 vectors)"},
    Parameter{"XMSG_COLL_ALLREDUCE_LARGE", Bytes, Collectives, "16K", 0, kNoLimit, "", "",
              "allreduce size from which Rabenseifner is used"},
    Parameter{"XMSG_COLL_ALLGATHER_LARGE", Bytes, Collectives, "8K", 0, kNoLimit, "", "",
              "allgather block size from which the ring is used"},
    Parameter{"XMSG_COLL_ALLTOALL_SMALL", Bytes, Collectives, "256", 0, kNoLimit, "", "",
              "largest alltoall block for Bruck"},
    Parameter{"XMSG_COLL_ALLTOALL_BRUCK_RANKS", Integer, Collectives, "16", 0, 1 << 30, "", "ranks",
              "smallest communicator for Bruck alltoall"},
    Parameter{"XMSG_COLL_ALLTOALL_LARGE", Bytes, Collectives, "32K", 0, kNoLimit, "", "",
              "alltoall block size (alltoallv: a rank's largest block) from which pairwise exchange is used"},
    Parameter{"XMSG_COLL_ALLTOALL_FLAT_MAX", Bytes, Collectives, "1T", 0, kNoLimit, "", "",
              "oversubscribed: alltoall (and alltoallv) blocks that stay linear"},
    Parameter{"XMSG_COLL_GATHER_SMALL", Bytes, Collectives, "16K", 0, kNoLimit, "", "",
              "largest block x ranks for binomial gather and scatter"},

    // ---- shm (docs/shm.md) ---------------------------------------------------------------------
    Parameter{"XMSG_SHM_QUEUE_BYTES", Bytes, Shm, "512K", 64 * K, G, "", "",
              "bytes of each receive ring (rounded up to a power of two)"},
    Parameter{"XMSG_SHM_CMA", Flag, Shm, "on", 0, 0, "", "",
              "off: no single-copy (process_vm_readv/writev) transfers; large messages take the two-copy path, MPI_Win_create windows the message path"},
    Parameter{"XMSG_SHM_NAMELESS", Flag, Shm, "on", 0, 0, "", "",
              "on: segments lose their /dev/shm names at the end of the wire-up, and collective regions and shared windows never have one (peers take the owner's descriptor with pidfd_getfd), so a killed job leaves nothing there under any launcher; off: names stay until every local peer has mapped them"},
    Parameter{"XMSG_SHM_LIVENESS_US", Integer, Shm, "2000", 1, 60000000, "", "us",
              "how often, at most, an idle poller checks whether its node's peers are alive"},
    Parameter{"XMSG_SHM_MAILBOXES", Integer, Shm, "64", 0, 4096, "", "mailboxes",
              "mailboxes in each rank's segment: the first this many senders to a rank get one, later ones use the ring"},
    Parameter{"XMSG_SHM_POLL_SPACING", Choice, Shm, "auto", 0, 0, "auto|near|far", "",
              "how a blocked receiver polls: `near` or `far` cache-line hand-offs; `auto` measures them on the receives"},

    // ---- tcp (docs/tcp.md) ---------------------------------------------------------------------
    Parameter{"XMSG_TCP_IF", Text, Tcp, "", 0, 0, "", "",
              "interface name (`eth0`) or IPv4 address to listen on and publish (unset: first non-loopback up, else 127.0.0.1)"},
    Parameter{"XMSG_TCP_MAX_PAYLOAD", Bytes, Tcp, "512K", 1 * K, G, "", "",
              "largest payload of one send (the transport's eager limit)"},
    Parameter{"XMSG_TCP_QUEUE_BYTES", Bytes, Tcp, "4M", 64 * K, 16 * G, "", "",
              "unsent bytes allowed per peer before senders wait (more than XMSG_TCP_MAX_PAYLOAD)"},
    Parameter{"XMSG_TCP_RNDV_PUSH", Bytes, Tcp, "64K", 0, G, "", "",
              "bytes of a rendezvous message sent unasked right behind its RTS (0: none)"},
    Parameter{"XMSG_TCP_PUSH_WHOLE", Bytes, Tcp, "256K", 0, T, "", "",
              "rendezvous messages up to this size are pushed whole (when XMSG_TCP_RNDV_PUSH is not 0)"},
    Parameter{"XMSG_TCP_PUSH_MAX", Bytes, Tcp, "1M", 0, T, "", "",
              "larger rendezvous messages get no head push, only reads (but see XMSG_TCP_PUSH_LARGE)"},
    Parameter{"XMSG_TCP_PUSH_LARGE", Bytes, Tcp, "4M", 0, T, "", "",
              "messages above XMSG_TCP_PUSH_WHOLE up to this are pushed whole while the peer's budget allows (0: never)"},
    Parameter{"XMSG_TCP_PUSH_BUDGET", Bytes, Tcp, "4M", 0, T, "", "",
              "most bytes of such large whole pushes in flight to one peer"},
    Parameter{"XMSG_TCP_LAND_MIN", Bytes, Tcp, "1K", 0, T, "", "",
              "eager payloads this long still arriving when their receive is posted land straight in it (0: never)"},
    Parameter{"XMSG_TCP_HANDSHAKE_TIMEOUT_MS", Integer, Tcp, "10000", 10, 3600 * 1000, "", "ms",
              "an accepted socket must prove the job secret within this"},
    Parameter{"XMSG_TCP_CONNECT_TIMEOUT_MS", Integer, Tcp, "30000", 10, 24 * 3600 * 1000, "", "ms",
              "a call of ours whose handshake has not finished within this fails the peer"},
    Parameter{"XMSG_TCP_POLL", Choice, Tcp, "recv", 0, 0, "recv|epoll", "",
              "how an idle rank polls its sockets: `recv` (lowest latency) or `epoll` (kinder to a shared core)"},
    Parameter{"XMSG_TCP_CONGESTION", Text, Tcp, "reno", 0, 0, "", "",
              "congestion control of every socket; `system`: the kernel's default (an explicit one the kernel refuses is an error)"},
    Parameter{"XMSG_JOB_SECRET_FILE", Text, Tcp, "", 0, 0, "", "",
              "file holding the job secret, the user's own, mode 0600 or stricter (set by xmsgrun)"},

    // ---- verbs (docs/verbs.md) -----------------------------------------------------------------
    Parameter{"XMSG_IB_DEVICE", Text, Verbs, "", 0, 0, "", "",
              "`name[:port]`, e.g. `mlx5_0:1` (unset: the device nearest the rank's CPUs with an ACTIVE port)"},
    Parameter{"XMSG_IB_GID_INDEX", Integer, Verbs, "", 0, 65535, "", "",
              "GID table index (unset, on RoCE: the RoCE v2 entry holding the IPv4-mapped address)"},
    Parameter{"XMSG_VERBS_MODE", Choice, Verbs, "auto", 0, 0, "auto|xrc|rc", "",
              "`xrc` (an error without an XRC device), `rc`, or `auto`: xrc when the device has it"},
    Parameter{"XMSG_VERBS_CONNECT", Choice, Verbs, "lazy", 0, 0, "lazy|eager", "",
              "`lazy`: QPs on the first send to a peer, through the connection manager; `eager`: all at start-up"},
    Parameter{"XMSG_VERBS_CONNECT_TIMEOUT", Integer, Verbs, "60", 1, 3600, "", "s",
              "how long a lazy connection request waits for its reply"},
    Parameter{"XMSG_VERBS_CM_ADDRESS", Text, Verbs, "", 0, 0, "", "",
              "IPv4 address the connection manager listens on and publishes (unset: the RoCE GID's, else the host name's)"},
    Parameter{"XMSG_VERBS_SRQ_DEPTH", Integer, Verbs, "256", 16, 1 << 20, "", "buffers",
              "receive buffers per rank"},
    Parameter{"XMSG_VERBS_EAGER_BUFFER", Bytes, Verbs, "8K", 256, M, "", "",
              "bytes of each receive and send buffer, header included (a multiple of 64)"},
    Parameter{"XMSG_VERBS_SEND_DEPTH", Integer, Verbs, "64", 4, 1 << 15, "", "entries",
              "send-queue entries per QP (send slots: twice this)"},
    Parameter{"XMSG_VERBS_COMP_CHANNEL", Flag, Verbs, "on", 0, 0, "", "",
              "a completion channel for the CQ, so the MPI progress thread sleeps on it (off: it sleeps its interval)"},
    Parameter{"XMSG_RXE_DEBUG", Flag, Verbs, "off", 0, 0, "", "",
              "the soft-RoCE XRC provider of tests/softroce traces its calls on stderr (guest only)"},

    // ---- launcher (docs/launcher.md) -----------------------------------------------------------
    Parameter{"XMSG_JOB_TMPDIR", Text, Launcher, "", 0, 0, "", "",
              "the job's private directory, 0700, removed at the end (set by xmsgrun; else $TMPDIR/xmsg-<uid>)"},
    Parameter{"XMSG_LAUNCHER_TRACE", Flag, Launcher, "off", 0, 0, "", "",
              "xmsgrun's node servers print their start-up times (PMIx server init, registration, spawn)"},
};

}  // namespace

std::span<const Parameter> table() { return kTable; }

}  // namespace xmsg::params
