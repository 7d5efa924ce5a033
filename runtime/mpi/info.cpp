// MPI-3.1 chapter 9: info objects, ordered (key, value) lists of strings. MPI_INFO_NULL is 0,
// MPI_INFO_ENV (1) holds what mpiexec would have been told (command, argv, maxprocs).
#include "mpi_impl.hpp"

#include <cstring>

namespace xmsg::mpi {
namespace {

struct Info {
  std::vector<std::pair<std::string, std::string>> entries;  // in insertion order
  bool live = true;
};

std::vector<Info>& infos() {
  static std::vector<Info> table(2);  // MPI_INFO_NULL, MPI_INFO_ENV
  return table;
}

Info* info_of(MPI_Info info) {
  auto& table = infos();
  if (info <= MPI_INFO_NULL || info >= static_cast<int>(table.size()) || !table[info].live) return nullptr;
  return &table[info];
}

int bad_info(const char* func, MPI_Info info) {
  return fail(MPI_ERR_INFO, func, MPI_COMM_WORLD, "info %d is not a valid info object", info);
}

int check_key(const char* func, const char* key) {
  if (!key) return fail(MPI_ERR_INFO_KEY, func, MPI_COMM_WORLD, "key is NULL");
  size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY)
    return fail(MPI_ERR_INFO_KEY, func, MPI_COMM_WORLD, "key length %zu is not in [1, MPI_MAX_INFO_KEY=%d]", n,
                MPI_MAX_INFO_KEY);
  return MPI_SUCCESS;
}

const std::string* find(const Info& info, const char* key) {
  for (const auto& [k, v] : info.entries)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace

// For comm.cpp (MPI_Comm_set_info / _get_info): the entries of an info object.
int info_entries(MPI_Info info, const char* func, std::map<std::string, std::string>* out) {
  out->clear();
  if (info == MPI_INFO_NULL) return MPI_SUCCESS;
  Info* in = info_of(info);
  if (!in) return bad_info(func, info);
  for (const auto& [k, v] : in->entries) (*out)[k] = v;
  return MPI_SUCCESS;
}

MPI_Info info_from_entries(const std::map<std::string, std::string>& entries) {
  auto& table = infos();
  table.push_back(Info{});
  for (const auto& [k, v] : entries) table.back().entries.emplace_back(k, v);
  return static_cast<MPI_Info>(table.size() - 1);
}

}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
  XMSG_MPI_ENTRY;
  if (!info) return fail(MPI_ERR_ARG, "MPI_Info_create", MPI_COMM_WORLD, "info is NULL");
  *info = info_from_entries({});
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_create)

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  XMSG_MPI_ENTRY;
  if (!newinfo) return fail(MPI_ERR_ARG, "MPI_Info_dup", MPI_COMM_WORLD, "newinfo is NULL");
  Info* in = info_of(info);
  if (!in) return bad_info("MPI_Info_dup", info);
  Info copy = *in;
  infos().push_back(std::move(copy));
  *newinfo = static_cast<MPI_Info>(infos().size() - 1);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_dup)

int PMPI_Info_free(MPI_Info* info) {
  XMSG_MPI_ENTRY;
  if (!info) return fail(MPI_ERR_ARG, "MPI_Info_free", MPI_COMM_WORLD, "info is NULL");
  Info* in = info_of(*info);
  if (!in || *info == MPI_INFO_ENV) return bad_info("MPI_Info_free", *info);
  in->live = false;
  in->entries.clear();
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_free)

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  XMSG_MPI_ENTRY;
  Info* in = info_of(info);
  if (!in || info == MPI_INFO_ENV) return bad_info("MPI_Info_set", info);
  if (int e = check_key("MPI_Info_set", key)) return e;
  if (!value) return fail(MPI_ERR_INFO_VALUE, "MPI_Info_set", MPI_COMM_WORLD, "value is NULL");
  if (std::strlen(value) > MPI_MAX_INFO_VAL)
    return fail(MPI_ERR_INFO_VALUE, "MPI_Info_set", MPI_COMM_WORLD, "value is longer than MPI_MAX_INFO_VAL=%d",
                MPI_MAX_INFO_VAL);
  for (auto& [k, v] : in->entries)
    if (k == key) {
      v = value;
      return MPI_SUCCESS;
    }
  in->entries.emplace_back(key, value);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_set)

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  XMSG_MPI_ENTRY;
  Info* in = info_of(info);
  if (!in) return bad_info("MPI_Info_get", info);
  if (int e = check_key("MPI_Info_get", key)) return e;
  if (!flag) return fail(MPI_ERR_ARG, "MPI_Info_get", MPI_COMM_WORLD, "flag is NULL");
  if (valuelen < 0) return fail(MPI_ERR_ARG, "MPI_Info_get", MPI_COMM_WORLD, "valuelen %d is negative", valuelen);
  const std::string* v = find(*in, key);
  *flag = v != nullptr;
  if (v) {
    if (!value) return fail(MPI_ERR_ARG, "MPI_Info_get", MPI_COMM_WORLD, "value is NULL");
    // valuelen excludes the terminating NUL (MPI-3.1 9): up to valuelen characters, then NUL.
    size_t n = std::min(v->size(), static_cast<size_t>(valuelen));
    std::memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_get)

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  XMSG_MPI_ENTRY;
  Info* in = info_of(info);
  if (!in) return bad_info("MPI_Info_get_valuelen", info);
  if (int e = check_key("MPI_Info_get_valuelen", key)) return e;
  if (!valuelen || !flag)
    return fail(MPI_ERR_ARG, "MPI_Info_get_valuelen", MPI_COMM_WORLD, "%s is NULL", valuelen ? "flag" : "valuelen");
  const std::string* v = find(*in, key);
  *flag = v != nullptr;
  if (v) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_get_valuelen)

int PMPI_Info_delete(MPI_Info info, const char* key) {
  XMSG_MPI_ENTRY;
  Info* in = info_of(info);
  if (!in || info == MPI_INFO_ENV) return bad_info("MPI_Info_delete", info);
  if (int e = check_key("MPI_Info_delete", key)) return e;
  for (auto it = in->entries.begin(); it != in->entries.end(); ++it)
    if (it->first == key) {
      in->entries.erase(it);
      return MPI_SUCCESS;
    }
  return fail(MPI_ERR_INFO_NOKEY, "MPI_Info_delete", MPI_COMM_WORLD, "key '%s' is not set", key);
}
XMSG_MPI_ALIAS(Info_delete)

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  XMSG_MPI_ENTRY;
  Info* in = info_of(info);
  if (!in) return bad_info("MPI_Info_get_nkeys", info);
  if (!nkeys) return fail(MPI_ERR_ARG, "MPI_Info_get_nkeys", MPI_COMM_WORLD, "nkeys is NULL");
  *nkeys = static_cast<int>(in->entries.size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  XMSG_MPI_ENTRY;
  Info* in = info_of(info);
  if (!in) return bad_info("MPI_Info_get_nthkey", info);
  if (!key) return fail(MPI_ERR_ARG, "MPI_Info_get_nthkey", MPI_COMM_WORLD, "key is NULL");
  if (n < 0 || n >= static_cast<int>(in->entries.size()))
    return fail(MPI_ERR_ARG, "MPI_Info_get_nthkey", MPI_COMM_WORLD, "n %d out of range [0, %zu)", n,
                in->entries.size());
  std::snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", in->entries[static_cast<size_t>(n)].first.c_str());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Info_get_nthkey)

}  // extern "C"
