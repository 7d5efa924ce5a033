// MPI-3.1 6.4-6.6 and 6.8: communicators (creation, comparison, names, info) and
// intercommunicators. Intracommunicators are xmsg communicators; an intercommunicator is an
// xmsg communicator over both groups (its "union", the lower group first) with the mapping
// between the ranks the program uses and the union's ranks kept in its CommState.
#include "mpi_impl.hpp"

#include <algorithm>
#include <cstring>

namespace xmsg::mpi {
bool g_have_intercomms = false;
std::vector<char> g_inter_flags;
int info_entries(MPI_Info info, const char* func, std::map<std::string, std::string>* out);
MPI_Info info_from_entries(const std::map<std::string, std::string>& entries);
int completed_request(MPI_Comm comm, MPI_Request* request);

namespace {

std::vector<std::unique_ptr<CommState>>& states() {
  static std::vector<std::unique_ptr<CommState>> table;
  return table;
}
std::vector<char>& inter_flags() { return g_inter_flags; }

// Tag on a union's collective context for Intercomm_merge's exchange of `high` (below the
// runtime's reserved range, above every tag the collectives and schedules use).
constexpr int kMergeTag = 0x3ff00000;

int check_any(MPI_Comm comm, const char* func) {
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, func, comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm);
  return MPI_SUCCESS;
}

int check_intra_comm(MPI_Comm comm, const char* func) {
  if (int e = check_any(comm, func)) return e;
  if (is_inter(comm)) return fail(MPI_ERR_COMM, func, comm, "communicator %d is an intercommunicator", comm);
  return MPI_SUCCESS;
}

int out_comm(MPI_Comm* newcomm, const char* func, MPI_Comm comm) {
  return newcomm ? MPI_SUCCESS : fail(MPI_ERR_ARG, func, comm, "newcomm is NULL");
}

// Members (world ranks) of the group a rank of `comm` sees as its own (the local group).
int local_world_ranks(MPI_Comm comm, std::vector<int>* out) {
  CommState* s = state_of(comm);
  if (s && s->inter) return world_ranks_of(s->local, out);
  return world_ranks_of(comm, out);
}

int remote_world_ranks(MPI_Comm comm, std::vector<int>* out) {
  CommState* s = state_of(comm);
  out->clear();
  for (int i = 0; i < s->remote_size; ++i) {
    int w = 0;
    if (int e = xmsgi_comm_world_rank(comm, s->remote_offset + i, &w)) return e;
    out->push_back(w);
  }
  return MPI_SUCCESS;
}

// Dup of an intracommunicator or an intercommunicator (its union and its local part).
int dup_comm(MPI_Comm comm, MPI_Comm* newcomm, const char* func) {
  CommState* s = state_of(comm);
  MPI_Comm created = MPI_COMM_NULL;
  if (int e = xmsg_comm_dup(comm, &created)) return handle(e, func, comm);
  inherit_state(comm, created);
  CommState* n = state_of(created);
  if (s->inter) {
    n->inter = true;
    n->local_offset = s->local_offset;
    n->remote_offset = s->remote_offset;
    n->local_size = s->local_size;
    n->remote_size = s->remote_size;
    if (int e = xmsg_comm_dup(s->local, &n->local)) return handle(e, func, comm);
    inter_flags()[static_cast<size_t>(created)] = 1;
    g_have_intercomms = true;
  }
  n->topo = s->topo;
  n->info = s->info;
  if (int e = copy_attributes(AttrKind::kComm, comm, s->attrs, &n->attrs))
    return fail(e, func, comm, "an attribute copy callback returned %d", e);
  *newcomm = created;
  return MPI_SUCCESS;
}

}  // namespace

CommState* state_of(MPI_Comm comm) {
  if (comm < 0) return nullptr;
  auto& table = states();
  if (static_cast<size_t>(comm) >= table.size()) {
    table.resize(static_cast<size_t>(comm) + 1);
    inter_flags().resize(static_cast<size_t>(comm) + 1, 0);
  }
  auto& slot = table[static_cast<size_t>(comm)];
  if (!slot) {
    slot = std::make_unique<CommState>();
    if (comm == MPI_COMM_WORLD) slot->name = "MPI_COMM_WORLD";
    if (comm == MPI_COMM_SELF) slot->name = "MPI_COMM_SELF";
  }
  return slot.get();
}

void inherit_state(MPI_Comm parent, MPI_Comm created) {
  if (created == MPI_COMM_NULL) return;
  CommState* p = state_of(parent);
  CommState* c = state_of(created);
  c->errhandler = p ? p->errhandler : MPI_ERRORS_ARE_FATAL;
}

// What goes with the handle once nothing uses the communicator any more.
void forget(MPI_Comm comm) {
  CommState* s = state_of(comm);
  if (s->inter && s->local != MPI_COMM_NULL) xmsg_comm_free(&s->local);
  states()[static_cast<size_t>(comm)].reset();
  inter_flags()[static_cast<size_t>(comm)] = 0;
}

int drop_state(MPI_Comm comm) {
  CommState* s = state_of(comm);
  if (!s) return MPI_SUCCESS;
  int rc = delete_attributes(AttrKind::kComm, comm, &s->attrs);
  forget(comm);
  return rc;
}

void retain_comm(MPI_Comm comm) {
  if (CommState* s = state_of(comm)) ++s->users;
}

void release_comm(MPI_Comm comm) {
  CommState* s = state_of(comm);
  if (!s || --s->users > 0 || !s->free_pending) return;
  forget(comm);
  xmsg_comm_free(&comm);
}

int world_ranks_of(MPI_Comm comm, std::vector<int>* out) {
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return e;
  out->resize(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i)
    if (int e = xmsgi_comm_world_rank(comm, i, &(*out)[static_cast<size_t>(i)])) return e;
  return MPI_SUCCESS;
}

int check_intra(MPI_Comm comm, const char* func, int* rank, int* size) {
  if (int e = check_intra_comm(comm, func)) return e;
  xmsg_comm_rank(comm, rank);
  xmsg_comm_size(comm, size);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  XMSG_MPI_ENTRY;
  if (is_inter(comm)) {
    if (!rank) return fail(MPI_ERR_ARG, "MPI_Comm_rank", comm, "rank is NULL");
    int u = 0;
    xmsg_comm_rank(comm, &u);
    *rank = u - state_of(comm)->local_offset;
    return MPI_SUCCESS;
  }
  return handle(xmsg_comm_rank(comm, rank), "MPI_Comm_rank", comm);
}
XMSG_MPI_ALIAS(Comm_rank)

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  XMSG_MPI_ENTRY;
  if (is_inter(comm)) {
    if (!size) return fail(MPI_ERR_ARG, "MPI_Comm_size", comm, "size is NULL");
    *size = state_of(comm)->local_size;
    return MPI_SUCCESS;
  }
  return handle(xmsg_comm_size(comm, size), "MPI_Comm_size", comm);
}
XMSG_MPI_ALIAS(Comm_size)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm1, "MPI_Comm_compare")) return e;
  if (int e = check_any(comm2, "MPI_Comm_compare")) return e;
  if (!result) return fail(MPI_ERR_ARG, "MPI_Comm_compare", comm1, "result is NULL");
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (is_inter(comm1) != is_inter(comm2)) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  std::vector<int> a, b;
  local_world_ranks(comm1, &a);
  local_world_ranks(comm2, &b);
  if (is_inter(comm1)) {
    std::vector<int> ra, rb;
    remote_world_ranks(comm1, &ra);
    remote_world_ranks(comm2, &rb);
    if (a == b && ra == rb) *result = MPI_CONGRUENT;
    else if (std::is_permutation(a.begin(), a.end(), b.begin(), b.end()) &&
             std::is_permutation(ra.begin(), ra.end(), rb.begin(), rb.end()))
      *result = MPI_SIMILAR;
    else *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  if (a == b) *result = MPI_CONGRUENT;
  else if (std::is_permutation(a.begin(), a.end(), b.begin(), b.end())) *result = MPI_SIMILAR;
  else *result = MPI_UNEQUAL;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_compare)

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_dup")) return e;
  if (int e = out_comm(newcomm, "MPI_Comm_dup", comm)) return e;
  return dup_comm(comm, newcomm, "MPI_Comm_dup");
}
XMSG_MPI_ALIAS(Comm_dup)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_dup_with_info")) return e;
  if (int e = out_comm(newcomm, "MPI_Comm_dup_with_info", comm)) return e;
  std::map<std::string, std::string> entries;
  if (int e = info_entries(info, "MPI_Comm_dup_with_info", &entries)) return e;
  if (int e = dup_comm(comm, newcomm, "MPI_Comm_dup_with_info")) return e;
  state_of(*newcomm)->info = std::move(entries);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_dup_with_info)

// The duplicate is made at once (a blocking dup among the members, who all call MPI_Comm_idup
// in the same order as their other collectives); the request is complete when returned.
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!request) return fail(MPI_ERR_ARG, "MPI_Comm_idup", comm, "request is NULL");
  if (int e = PMPI_Comm_dup(comm, newcomm)) return e;
  return completed_request(comm, request);
}
XMSG_MPI_ALIAS(Comm_idup)

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  XMSG_MPI_ENTRY;
  if (int e = check_intra_comm(comm, "MPI_Comm_split")) return e;
  if (int e = out_comm(newcomm, "MPI_Comm_split", comm)) return e;
  if (color < 0 && color != MPI_UNDEFINED)
    return fail(MPI_ERR_ARG, "MPI_Comm_split", comm, "color %d is negative (and not MPI_UNDEFINED)", color);
  int code = xmsg_comm_split(comm, color, key, newcomm);
  if (code == MPI_SUCCESS) inherit_state(comm, *newcomm);
  return handle(code, "MPI_Comm_split", comm);
}
XMSG_MPI_ALIAS(Comm_split)

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  XMSG_MPI_ENTRY;
  (void)info;
  if (int e = check_intra_comm(comm, "MPI_Comm_split_type")) return e;
  if (int e = out_comm(newcomm, "MPI_Comm_split_type", comm)) return e;
  int color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_SHARED) {
    int rank = 0, size = 0;
    xmsg_comm_rank(comm, &rank);
    xmsg_comm_size(comm, &size);
    std::vector<int> nodes(static_cast<size_t>(size));
    if (int e = xmsgi_comm_node_ids(comm, nodes.data())) return handle(e, "MPI_Comm_split_type", comm);
    color = nodes[static_cast<size_t>(rank)];
  } else if (split_type != MPI_UNDEFINED) {
    return fail(MPI_ERR_ARG, "MPI_Comm_split_type", comm,
                "split_type %d is neither MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED", split_type);
  }
  int code = xmsg_comm_split(comm, color, key, newcomm);
  if (code == MPI_SUCCESS) inherit_state(comm, *newcomm);
  return handle(code, "MPI_Comm_split_type", comm);
}
XMSG_MPI_ALIAS(Comm_split_type)

// Collective over `comm`: every rank passes the same group, a subset of comm's members.
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  XMSG_MPI_ENTRY;
  if (int e = check_intra_comm(comm, "MPI_Comm_create")) return e;
  if (int e = out_comm(newcomm, "MPI_Comm_create", comm)) return e;
  const std::vector<int>* members = group_members(group);
  if (!members && group != MPI_GROUP_EMPTY)
    return fail(MPI_ERR_GROUP, "MPI_Comm_create", comm, "group %d is not a valid group", group);
  std::vector<int> mine;
  world_ranks_of(comm, &mine);
  int me = 0;
  xmsg_comm_rank(MPI_COMM_WORLD, &me);
  int color = MPI_UNDEFINED, key = 0;
  if (members) {
    for (size_t i = 0; i < members->size(); ++i) {
      if (std::find(mine.begin(), mine.end(), (*members)[i]) == mine.end())
        return fail(MPI_ERR_GROUP, "MPI_Comm_create", comm, "group member %zu (world rank %d) is not in comm", i,
                    (*members)[i]);
      if ((*members)[i] == me) {
        color = 0;
        key = static_cast<int>(i);
      }
    }
  }
  int code = xmsg_comm_split(comm, color, key, newcomm);
  if (code == MPI_SUCCESS) inherit_state(comm, *newcomm);
  return handle(code, "MPI_Comm_create", comm);
}
XMSG_MPI_ALIAS(Comm_create)

// Collective over the members of `group` only.
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  XMSG_MPI_ENTRY;
  if (int e = check_intra_comm(comm, "MPI_Comm_create_group")) return e;
  if (int e = out_comm(newcomm, "MPI_Comm_create_group", comm)) return e;
  const std::vector<int>* members = group_members(group);
  if (!members) {
    if (group == MPI_GROUP_EMPTY) {
      *newcomm = MPI_COMM_NULL;
      return MPI_SUCCESS;
    }
    return fail(MPI_ERR_GROUP, "MPI_Comm_create_group", comm, "group %d is not a valid group", group);
  }
  std::vector<int> mine;
  world_ranks_of(comm, &mine);
  std::vector<int> ranks;
  for (int w : *members) {
    auto it = std::find(mine.begin(), mine.end(), w);
    if (it == mine.end())
      return fail(MPI_ERR_GROUP, "MPI_Comm_create_group", comm, "group member (world rank %d) is not in comm", w);
    ranks.push_back(static_cast<int>(it - mine.begin()));
  }
  int code = xmsg_comm_create_group(comm, static_cast<int>(ranks.size()), ranks.data(), tag, newcomm);
  if (code == MPI_SUCCESS) inherit_state(comm, *newcomm);
  return handle(code, "MPI_Comm_create_group", comm);
}
XMSG_MPI_ALIAS(Comm_create_group)

int PMPI_Comm_free(MPI_Comm* comm) {
  XMSG_MPI_ENTRY;
  if (!comm) return fail(MPI_ERR_ARG, "MPI_Comm_free", MPI_COMM_WORLD, "comm is NULL");
  MPI_Comm old = *comm;
  if (old == MPI_COMM_WORLD || old == MPI_COMM_SELF)
    return fail(MPI_ERR_COMM, "MPI_Comm_free", old, "%s cannot be freed",
                old == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
  if (int e = check_any(old, "MPI_Comm_free")) return e;
  MPI_Errhandler eh = errhandler_of(old);
  CommState* s = state_of(old);
  if (s->free_pending)
    return fail(MPI_ERR_COMM, "MPI_Comm_free", MPI_COMM_WORLD, "communicator %d was already freed", old);
  int rc = MPI_SUCCESS;
  if (s->users > 0) {
    // MPI-3.1 6.4.3: operations pending on it complete normally; the last one frees it.
    rc = delete_attributes(AttrKind::kComm, old, &s->attrs);
    s->free_pending = true;
    *comm = MPI_COMM_NULL;
  } else {
    rc = drop_state(old);
    int code = xmsg_comm_free(comm);
    if (code != MPI_SUCCESS) return handle(code, "MPI_Comm_free", MPI_COMM_WORLD);
  }
  if (rc != MPI_SUCCESS && eh != MPI_ERRORS_RETURN)
    return fail(rc, "MPI_Comm_free", MPI_COMM_WORLD, "an attribute delete callback returned %d", rc);
  return rc;
}
XMSG_MPI_ALIAS(Comm_free)

int PMPI_Comm_disconnect(MPI_Comm* comm) { XMSG_MPI_ENTRY; return PMPI_Comm_free(comm); }
XMSG_MPI_ALIAS(Comm_disconnect)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_group")) return e;
  if (!group) return fail(MPI_ERR_ARG, "MPI_Comm_group", comm, "group is NULL");
  std::vector<int> members;
  if (int e = local_world_ranks(comm, &members)) return handle(e, "MPI_Comm_group", comm);
  return new_group(std::move(members), group);
}
XMSG_MPI_ALIAS(Comm_group)

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_test_inter")) return e;
  if (!flag) return fail(MPI_ERR_ARG, "MPI_Comm_test_inter", comm, "flag is NULL");
  *flag = is_inter(comm);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_test_inter)

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_remote_size")) return e;
  if (!is_inter(comm)) return fail(MPI_ERR_COMM, "MPI_Comm_remote_size", comm, "comm %d is not an intercommunicator", comm);
  if (!size) return fail(MPI_ERR_ARG, "MPI_Comm_remote_size", comm, "size is NULL");
  *size = state_of(comm)->remote_size;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_remote_group")) return e;
  if (!is_inter(comm))
    return fail(MPI_ERR_COMM, "MPI_Comm_remote_group", comm, "comm %d is not an intercommunicator", comm);
  if (!group) return fail(MPI_ERR_ARG, "MPI_Comm_remote_group", comm, "group is NULL");
  std::vector<int> members;
  if (int e = remote_world_ranks(comm, &members)) return handle(e, "MPI_Comm_remote_group", comm);
  return new_group(std::move(members), group);
}
XMSG_MPI_ALIAS(Comm_remote_group)

// The leaders swap their groups' world ranks over peer_comm (with the program's tag), each
// leader broadcasts the other group's list in its own group, and all members of both groups
// create the union communicator together.
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm* newintercomm) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Intercomm_create";
  int rank = 0, size = 0;
  if (int e = check_intra(local_comm, f, &rank, &size)) return e;
  if (!newintercomm) return fail(MPI_ERR_ARG, f, local_comm, "newintercomm is NULL");
  if (local_leader < 0 || local_leader >= size)
    return fail(MPI_ERR_RANK, f, local_comm, "local_leader %d out of range [0, %d)", local_leader, size);
  if (tag < 0 || tag > XMSG_TAG_UB) return fail(MPI_ERR_TAG, f, local_comm, "tag %d out of range [0, %d]", tag, XMSG_TAG_UB);
  std::vector<int> local_members;
  world_ranks_of(local_comm, &local_members);
  std::vector<int> remote_members;
  int64_t remote_count = 0;
  if (rank == local_leader) {
    if (int e = check_any(peer_comm, f)) return e;
    int peer_size = 0;
    xmsg_comm_size(peer_comm, &peer_size);
    if (remote_leader < 0 || remote_leader >= peer_size)
      return fail(MPI_ERR_RANK, f, local_comm, "remote_leader %d out of range [0, %d) of peer_comm", remote_leader,
                  peer_size);
    int64_t mine = size;
    int code = xmsg_sendrecv(&mine, 1, XMSG_INT64_T, remote_leader, tag, &remote_count, 1, XMSG_INT64_T,
                             remote_leader, tag, peer_comm, XMSG_STATUS_IGNORE);
    if (code) return handle(code, f, local_comm);
    remote_members.resize(static_cast<size_t>(remote_count));
    code = xmsg_sendrecv(local_members.data(), size, XMSG_INT, remote_leader, tag, remote_members.data(),
                         remote_count, XMSG_INT, remote_leader, tag, peer_comm, XMSG_STATUS_IGNORE);
    if (code) return handle(code, f, local_comm);
  }
  if (int e = xmsg_bcast(&remote_count, 1, XMSG_INT64_T, local_leader, local_comm)) return handle(e, f, local_comm);
  remote_members.resize(static_cast<size_t>(remote_count));
  if (remote_count > 0)
    if (int e = xmsg_bcast(remote_members.data(), remote_count, XMSG_INT, local_leader, local_comm))
      return handle(e, f, local_comm);
  for (int w : remote_members)
    if (std::find(local_members.begin(), local_members.end(), w) != local_members.end())
      return fail(MPI_ERR_COMM, f, local_comm, "world rank %d is in both groups (they must be disjoint)", w);
  // The group whose rank 0 has the lower world rank comes first in the union: both sides agree.
  const bool local_low = local_members[0] < remote_members.at(0);
  std::vector<int> all = local_low ? local_members : remote_members;
  const std::vector<int>& second = local_low ? remote_members : local_members;
  all.insert(all.end(), second.begin(), second.end());
  MPI_Comm u = MPI_COMM_NULL;
  if (int e = xmsg_comm_create_from_world(static_cast<int>(all.size()), all.data(), tag, &u))
    return handle(e, f, local_comm);
  MPI_Comm local_dup = MPI_COMM_NULL;
  if (int e = xmsg_comm_dup(local_comm, &local_dup)) return handle(e, f, local_comm);
  inherit_state(local_comm, u);
  CommState* s = state_of(u);
  s->inter = true;
  s->local = local_dup;
  s->local_size = size;
  s->remote_size = static_cast<int>(remote_count);
  s->local_offset = local_low ? 0 : static_cast<int>(remote_count);
  s->remote_offset = local_low ? size : 0;
  inter_flags()[static_cast<size_t>(u)] = 1;
  g_have_intercomms = true;
  *newintercomm = u;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Intercomm_create)

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Intercomm_merge";
  if (int e = check_any(intercomm, f)) return e;
  if (!is_inter(intercomm)) return fail(MPI_ERR_COMM, f, intercomm, "comm %d is not an intercommunicator", intercomm);
  if (!newintracomm) return fail(MPI_ERR_ARG, f, intercomm, "newintracomm is NULL");
  CommState* s = state_of(intercomm);
  int u = 0;
  xmsg_comm_rank(intercomm, &u);
  const int local_rank = u - s->local_offset;
  // Local rank 0 of each group tells the other group's rank 0 its `high`; each broadcasts
  // the answer in its own group.
  int mine = high ? 1 : 0, theirs = 0;
  if (local_rank == 0) {
    xmsg_request_t reqs[2] = {XMSG_REQUEST_NULL, XMSG_REQUEST_NULL};
    int e = xmsgi_coll_irecv(&theirs, sizeof theirs, s->remote_offset, kMergeTag, intercomm, &reqs[0]);
    if (!e) e = xmsgi_coll_isend(&mine, sizeof mine, s->remote_offset, kMergeTag, intercomm, &reqs[1]);
    if (!e) e = xmsg_waitall(2, reqs, XMSG_STATUSES_IGNORE);
    if (e) return handle(e, f, intercomm);
  }
  if (int e = xmsg_bcast(&theirs, 1, XMSG_INT, 0, s->local)) return handle(e, f, intercomm);
  // The group that asked for high goes last; when both asked alike, the union's order holds.
  bool local_first = mine == theirs ? s->local_offset == 0 : mine == 0;
  int key = (local_first ? 0 : s->remote_size + s->local_size) + local_rank;
  int code = xmsg_comm_split(intercomm, 0, key, newintracomm);
  if (code == MPI_SUCCESS) inherit_state(intercomm, *newintracomm);
  return handle(code, f, intercomm);
}
XMSG_MPI_ALIAS(Intercomm_merge)

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_set_name")) return e;
  if (!comm_name) return fail(MPI_ERR_ARG, "MPI_Comm_set_name", comm, "comm_name is NULL");
  state_of(comm)->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_get_name")) return e;
  if (!comm_name || !resultlen)
    return fail(MPI_ERR_ARG, "MPI_Comm_get_name", comm, "%s is NULL", comm_name ? "resultlen" : "comm_name");
  const std::string& name = state_of(comm)->name;
  std::snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", name.c_str());
  *resultlen = static_cast<int>(std::strlen(comm_name));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_get_name)

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_set_info")) return e;
  std::map<std::string, std::string> entries;
  if (int e = info_entries(info, "MPI_Comm_set_info", &entries)) return e;
  state_of(comm)->info = std::move(entries);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  XMSG_MPI_ENTRY;
  if (int e = check_any(comm, "MPI_Comm_get_info")) return e;
  if (!info_used) return fail(MPI_ERR_ARG, "MPI_Comm_get_info", comm, "info_used is NULL");
  *info_used = info_from_entries(state_of(comm)->info);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_get_info)

}  // extern "C"
