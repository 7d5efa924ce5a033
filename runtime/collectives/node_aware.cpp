// Node-aware collectives for jobs that span nodes: ranks of a node meet at their leader (the
// node's lowest rank in the communicator, or the root for bcast) over shared memory, only the
// leaders talk across nodes, and leaders hand the result back inside their node. Each phase
// is an ordinary algorithm from the table run on a subset Comm (leaders, or one node's ranks),
// so correctness for every size carries over. Allreduce goes this way only for commutative ops:
// regrouping ranks by node would reorder the operands of a non-commutative one.
#include <algorithm>

#include "algorithm_selection.hpp"
#include "coll.hpp"

namespace xmsg::coll {
namespace {

struct NodeLayout {
  std::vector<int> leaders;  // comm ranks, one per node, ascending
  std::vector<int> local;    // comm ranks on my node, ascending (local[0] is the leader)
  int leader_index = -1;     // my index in leaders, -1 when not a leader
  int local_index = 0;       // my index in local
};

// Fills the layout; false when node-awareness cannot help (one node, or one rank per node).
bool make_layout(const Comm& c, int bcast_root, NodeLayout* out) {
  std::vector<int> node_ids;
  if (comm_node_ids(c.handle, c.size, &node_ids) != XMSG_SUCCESS) return false;
  const int mine = node_ids[static_cast<size_t>(c.rank)];
  std::vector<int> first_of_node;  // indexed by position in `seen`
  std::vector<int> seen;
  bool shared = false;
  for (int r = 0; r < c.size; ++r) {
    const int node = node_ids[static_cast<size_t>(r)];
    auto it = std::find(seen.begin(), seen.end(), node);
    if (it == seen.end()) {
      seen.push_back(node);
      first_of_node.push_back(r);
    } else {
      shared = true;
    }
    if (node == mine) out->local.push_back(r);
  }
  if (seen.size() < 2 || !shared) return false;
  // For bcast the root leads its own node, so the data crosses nodes once.
  if (bcast_root >= 0) {
    const int root_node = node_ids[static_cast<size_t>(bcast_root)];
    const size_t k = static_cast<size_t>(std::find(seen.begin(), seen.end(), root_node) - seen.begin());
    first_of_node[k] = bcast_root;
    if (root_node == mine) {
      out->local.erase(std::find(out->local.begin(), out->local.end(), bcast_root));
      out->local.insert(out->local.begin(), bcast_root);
    }
  }
  out->leaders = first_of_node;
  std::sort(out->leaders.begin(), out->leaders.end());
  auto lead = std::find(out->leaders.begin(), out->leaders.end(), c.rank);
  out->leader_index = lead == out->leaders.end() ? -1 : static_cast<int>(lead - out->leaders.begin());
  out->local_index = static_cast<int>(std::find(out->local.begin(), out->local.end(), c.rank) - out->local.begin());
  return true;
}

Comm leaders_comm(const Comm& c, const NodeLayout& l) {
  return Comm{c.handle, l.leader_index, static_cast<int>(l.leaders.size()), l.leaders.data(), c.call};
}

Comm local_comm(const Comm& c, const NodeLayout& l) {
  return Comm{c.handle, l.local_index, static_cast<int>(l.local.size()), l.local.data(), c.call};
}

bool job_spans_nodes() {
  static const bool spans = [] {
    int size = 0;
    if (xmsg_comm_size(XMSG_COMM_WORLD, &size) != XMSG_SUCCESS) return false;
    std::vector<int> ids;
    if (comm_node_ids(XMSG_COMM_WORLD, size, &ids) != XMSG_SUCCESS) return false;
    return std::any_of(ids.begin(), ids.end(), [&](int id) { return id != ids[0]; });
  }();
  return spans;
}

}  // namespace

bool node_aware_possible(const Comm& c) {
  return c.members == nullptr && c.size > 2 && thresholds().node_aware && job_spans_nodes();
}

int node_aware_barrier(const Comm& c, bool* done) {
  NodeLayout l;
  if (!(*done = make_layout(c, -1, &l))) return XMSG_SUCCESS;
  const Comm local = local_comm(c, l);
  if (l.leader_index < 0) {
    Step step(local);
    step.send(nullptr, 0, 0, kTagBarrier + 200);
    step.recv(nullptr, 0, 0, kTagBarrier + 201);
    return step.wait();
  }
  {
    Step arrive(local);
    for (int r = 1; r < local.size; ++r) arrive.recv(nullptr, 0, r, kTagBarrier + 200);
    if (int e = arrive.wait()) return e;
  }
  if (int e = run_barrier(leaders_comm(c, l))) return e;
  Step release(local);
  for (int r = 1; r < local.size; ++r) release.send(nullptr, 0, r, kTagBarrier + 201);
  return release.wait();
}

int node_aware_bcast(const Comm& c, Dst buf, int64_t bytes, int root, bool* done) {
  NodeLayout l;
  if (!(*done = make_layout(c, root, &l))) return XMSG_SUCCESS;
  if (l.leader_index >= 0) {
    const Comm leaders = leaders_comm(c, l);
    const int root_index = static_cast<int>(std::find(l.leaders.begin(), l.leaders.end(), root) - l.leaders.begin());
    if (int e = run_bcast(leaders, buf, bytes, root_index)) return e;
  }
  return run_bcast(local_comm(c, l), buf, bytes, 0);
}

int node_aware_allreduce(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op,
                         bool* done) {
  NodeLayout l;
  if (!op.commutative || !(*done = make_layout(c, -1, &l))) {
    *done = false;
    return XMSG_SUCCESS;
  }
  const Comm local = local_comm(c, l);
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  if (int e = run_reduce(local, sendbuf, recvbuf, count, op, 0)) return e;
  if (l.leader_index >= 0) {
    if (int e = run_allreduce(leaders_comm(c, l), recvbuf, recvbuf, count, op)) return e;
  }
  return run_bcast(local, recvbuf, bytes, 0);
}

}  // namespace xmsg::coll
