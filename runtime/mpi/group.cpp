// MPI-3.1 6.3: groups, ordered sets of processes held as lists of world ranks. Local
// operations only; communicators are made from them in comm.cpp.
#include "mpi_impl.hpp"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace xmsg::mpi {
namespace {

struct Group {
  std::vector<int> members;  // world ranks, in group rank order
  bool live = true;
};

// A deque: a new group leaves the others where they are, so the members a communicator
// constructor holds (group_members) stay valid while it waits for its peers and, under
// MPI_THREAD_MULTIPLE, another thread makes groups.
std::deque<Group>& groups() {
  static std::deque<Group> table(2);  // MPI_GROUP_NULL (dead), MPI_GROUP_EMPTY
  table[0].live = false;
  return table;
}

int bad_group(const char* func, const char* arg, MPI_Group g) {
  return fail(MPI_ERR_GROUP, func, MPI_COMM_WORLD, "%s %d is not a valid group", arg, g);
}

int my_world_rank() {
  int r = 0;
  xmsg_comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int rank_in(const std::vector<int>& members, int world_rank) {
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == world_rank) return static_cast<int>(i);
  return MPI_UNDEFINED;
}

// Expands (first, last, stride) triplets into ranks, checking them as MPI-3.1 6.3.2 asks.
int expand_ranges(const char* func, int size, int n, int ranges[][3], std::vector<int>* out) {
  if (n < 0) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "n %d is negative", n);
  if (n > 0 && !ranges) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "ranges is NULL");
  std::vector<bool> seen(static_cast<size_t>(size), false);
  for (int i = 0; i < n; ++i) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "ranges[%d] has stride 0", i);
    if ((stride > 0 && first > last) || (stride < 0 && first < last))
      return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "ranges[%d] = (%d, %d, %d) is empty", i, first, last, stride);
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (r < 0 || r >= size)
        return fail(MPI_ERR_RANK, func, MPI_COMM_WORLD, "ranges[%d] names rank %d, out of range [0, %d)", i, r, size);
      if (seen[static_cast<size_t>(r)])
        return fail(MPI_ERR_RANK, func, MPI_COMM_WORLD, "rank %d appears twice in ranges", r);
      seen[static_cast<size_t>(r)] = true;
      out->push_back(r);
    }
  }
  return MPI_SUCCESS;
}

int check_rank_list(const char* func, int size, int n, const int ranks[]) {
  if (n < 0 || n > size) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "n %d out of range [0, %d]", n, size);
  if (n > 0 && !ranks) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "ranks is NULL");
  std::vector<bool> seen(static_cast<size_t>(size), false);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size)
      return fail(MPI_ERR_RANK, func, MPI_COMM_WORLD, "ranks[%d] = %d out of range [0, %d)", i, ranks[i], size);
    if (seen[static_cast<size_t>(ranks[i])])
      return fail(MPI_ERR_RANK, func, MPI_COMM_WORLD, "rank %d appears twice in ranks", ranks[i]);
    seen[static_cast<size_t>(ranks[i])] = true;
  }
  return MPI_SUCCESS;
}

int out_ptr(const char* func, const void* p, const char* name) {
  return p ? MPI_SUCCESS : fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "%s is NULL", name);
}

}  // namespace

int new_group(std::vector<int> world_ranks, MPI_Group* out) {
  if (world_ranks.empty()) {
    *out = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  groups().push_back(Group{std::move(world_ranks), true});
  *out = static_cast<MPI_Group>(groups().size() - 1);
  return MPI_SUCCESS;
}

const std::vector<int>* group_members(MPI_Group group) {
  auto& table = groups();
  if (group <= MPI_GROUP_NULL || group >= static_cast<int>(table.size()) || !table[group].live) return nullptr;
  return &table[group].members;
}

}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Group_size(MPI_Group group, int* size) {
  XMSG_MPI_ENTRY;
  const auto* g = group_members(group);
  if (!g) return bad_group("MPI_Group_size", "group", group);
  if (int e = out_ptr("MPI_Group_size", size, "size")) return e;
  *size = static_cast<int>(g->size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Group_size)

int PMPI_Group_rank(MPI_Group group, int* rank) {
  XMSG_MPI_ENTRY;
  const auto* g = group_members(group);
  if (!g) return bad_group("MPI_Group_rank", "group", group);
  if (int e = out_ptr("MPI_Group_rank", rank, "rank")) return e;
  *rank = rank_in(*g, my_world_rank());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Group_rank)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  XMSG_MPI_ENTRY;
  const auto* a = group_members(group1);
  const auto* b = group_members(group2);
  if (!a) return bad_group("MPI_Group_translate_ranks", "group1", group1);
  if (!b) return bad_group("MPI_Group_translate_ranks", "group2", group2);
  if (n < 0) return fail(MPI_ERR_ARG, "MPI_Group_translate_ranks", MPI_COMM_WORLD, "n %d is negative", n);
  if (n > 0 && (!ranks1 || !ranks2))
    return fail(MPI_ERR_ARG, "MPI_Group_translate_ranks", MPI_COMM_WORLD, "%s is NULL", ranks1 ? "ranks2" : "ranks1");
  std::unordered_map<int, int> in_b;
  for (size_t i = 0; i < b->size(); ++i) in_b[(*b)[i]] = static_cast<int>(i);
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (ranks1[i] < 0 || ranks1[i] >= static_cast<int>(a->size()))
      return fail(MPI_ERR_RANK, "MPI_Group_translate_ranks", MPI_COMM_WORLD, "ranks1[%d] = %d out of range [0, %zu)",
                  i, ranks1[i], a->size());
    auto it = in_b.find((*a)[static_cast<size_t>(ranks1[i])]);
    ranks2[i] = it == in_b.end() ? MPI_UNDEFINED : it->second;
  }
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Group_translate_ranks)

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  XMSG_MPI_ENTRY;
  const auto* a = group_members(group1);
  const auto* b = group_members(group2);
  if (!a) return bad_group("MPI_Group_compare", "group1", group1);
  if (!b) return bad_group("MPI_Group_compare", "group2", group2);
  if (int e = out_ptr("MPI_Group_compare", result, "result")) return e;
  if (*a == *b) *result = MPI_IDENT;
  else if (a->size() == b->size() && std::is_permutation(a->begin(), a->end(), b->begin())) *result = MPI_SIMILAR;
  else *result = MPI_UNEQUAL;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Group_compare)

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  XMSG_MPI_ENTRY;
  const auto* a = group_members(group1);
  const auto* b = group_members(group2);
  if (!a) return bad_group("MPI_Group_union", "group1", group1);
  if (!b) return bad_group("MPI_Group_union", "group2", group2);
  if (int e = out_ptr("MPI_Group_union", newgroup, "newgroup")) return e;
  std::vector<int> out = *a;
  std::unordered_set<int> have(a->begin(), a->end());
  for (int w : *b)
    if (!have.count(w)) out.push_back(w);
  return new_group(std::move(out), newgroup);
}
XMSG_MPI_ALIAS(Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  XMSG_MPI_ENTRY;
  const auto* a = group_members(group1);
  const auto* b = group_members(group2);
  if (!a) return bad_group("MPI_Group_intersection", "group1", group1);
  if (!b) return bad_group("MPI_Group_intersection", "group2", group2);
  if (int e = out_ptr("MPI_Group_intersection", newgroup, "newgroup")) return e;
  std::unordered_set<int> in_b(b->begin(), b->end());
  std::vector<int> out;
  for (int w : *a)
    if (in_b.count(w)) out.push_back(w);
  return new_group(std::move(out), newgroup);
}
XMSG_MPI_ALIAS(Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  XMSG_MPI_ENTRY;
  const auto* a = group_members(group1);
  const auto* b = group_members(group2);
  if (!a) return bad_group("MPI_Group_difference", "group1", group1);
  if (!b) return bad_group("MPI_Group_difference", "group2", group2);
  if (int e = out_ptr("MPI_Group_difference", newgroup, "newgroup")) return e;
  std::unordered_set<int> in_b(b->begin(), b->end());
  std::vector<int> out;
  for (int w : *a)
    if (!in_b.count(w)) out.push_back(w);
  return new_group(std::move(out), newgroup);
}
XMSG_MPI_ALIAS(Group_difference)

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  XMSG_MPI_ENTRY;
  const auto* g = group_members(group);
  if (!g) return bad_group("MPI_Group_incl", "group", group);
  if (int e = out_ptr("MPI_Group_incl", newgroup, "newgroup")) return e;
  if (int e = check_rank_list("MPI_Group_incl", static_cast<int>(g->size()), n, ranks)) return e;
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back((*g)[static_cast<size_t>(ranks[i])]);
  return new_group(std::move(out), newgroup);
}
XMSG_MPI_ALIAS(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  XMSG_MPI_ENTRY;
  const auto* g = group_members(group);
  if (!g) return bad_group("MPI_Group_excl", "group", group);
  if (int e = out_ptr("MPI_Group_excl", newgroup, "newgroup")) return e;
  if (int e = check_rank_list("MPI_Group_excl", static_cast<int>(g->size()), n, ranks)) return e;
  std::vector<bool> drop(g->size(), false);
  for (int i = 0; i < n; ++i) drop[static_cast<size_t>(ranks[i])] = true;
  std::vector<int> out;
  for (size_t i = 0; i < g->size(); ++i)
    if (!drop[i]) out.push_back((*g)[i]);
  return new_group(std::move(out), newgroup);
}
XMSG_MPI_ALIAS(Group_excl)

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  XMSG_MPI_ENTRY;
  const auto* g = group_members(group);
  if (!g) return bad_group("MPI_Group_range_incl", "group", group);
  if (int e = out_ptr("MPI_Group_range_incl", newgroup, "newgroup")) return e;
  std::vector<int> ranks;
  if (int e = expand_ranges("MPI_Group_range_incl", static_cast<int>(g->size()), n, ranges, &ranks)) return e;
  std::vector<int> out;
  for (int r : ranks) out.push_back((*g)[static_cast<size_t>(r)]);
  return new_group(std::move(out), newgroup);
}
XMSG_MPI_ALIAS(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  XMSG_MPI_ENTRY;
  const auto* g = group_members(group);
  if (!g) return bad_group("MPI_Group_range_excl", "group", group);
  if (int e = out_ptr("MPI_Group_range_excl", newgroup, "newgroup")) return e;
  std::vector<int> ranks;
  if (int e = expand_ranges("MPI_Group_range_excl", static_cast<int>(g->size()), n, ranges, &ranks)) return e;
  std::vector<bool> drop(g->size(), false);
  for (int r : ranks) drop[static_cast<size_t>(r)] = true;
  std::vector<int> out;
  for (size_t i = 0; i < g->size(); ++i)
    if (!drop[i]) out.push_back((*g)[i]);
  return new_group(std::move(out), newgroup);
}
XMSG_MPI_ALIAS(Group_range_excl)

int PMPI_Group_free(MPI_Group* group) {
  XMSG_MPI_ENTRY;
  if (int e = out_ptr("MPI_Group_free", group, "group")) return e;
  if (*group == MPI_GROUP_EMPTY) {  // predefined: the handle is reset, the group stays
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
  }
  if (!group_members(*group)) return bad_group("MPI_Group_free", "group", *group);
  auto& g = groups()[*group];
  g.live = false;
  g.members.clear();
  g.members.shrink_to_fit();
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Group_free)

}  // extern "C"
