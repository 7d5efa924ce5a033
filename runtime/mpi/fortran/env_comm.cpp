// Fortran bindings (mpif.h / use mpi) of the environment, error, communicator, group, info and
// topology functions. Conventions: fortran.hpp.
#include "fortran.hpp"

#include <vector>

using namespace xmsg::mpi::fortran;

// ---- environment ---------------------------------------------------------------------------
XMSG_FORTRAN(void, init, (MPI_Fint* ierr)) { *ierr = MPI_Init(nullptr, nullptr); }
XMSG_FORTRAN(void, init_thread, (const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr)) {
  int p = MPI_THREAD_SINGLE;
  *ierr = MPI_Init_thread(nullptr, nullptr, *required, &p);
  *provided = p;
}
XMSG_FORTRAN(void, finalize, (MPI_Fint* ierr)) { *ierr = MPI_Finalize(); }
XMSG_FORTRAN(void, initialized, (MPI_Fint* flag, MPI_Fint* ierr)) {
  int f = 0;
  *ierr = MPI_Initialized(&f);
  *flag = logical_out(f);
}
XMSG_FORTRAN(void, finalized, (MPI_Fint* flag, MPI_Fint* ierr)) {
  int f = 0;
  *ierr = MPI_Finalized(&f);
  *flag = logical_out(f);
}
XMSG_FORTRAN(void, query_thread, (MPI_Fint* provided, MPI_Fint* ierr)) { *ierr = MPI_Query_thread(provided); }
XMSG_FORTRAN(void, is_thread_main, (MPI_Fint* flag, MPI_Fint* ierr)) {
  int f = 0;
  *ierr = MPI_Is_thread_main(&f);
  *flag = logical_out(f);
}
XMSG_FORTRAN(void, abort, (const MPI_Fint* comm, const MPI_Fint* errorcode, MPI_Fint* ierr)) {
  *ierr = MPI_Abort(*comm, *errorcode);
}
XMSG_FORTRAN(double, wtime, (void)) { return MPI_Wtime(); }
XMSG_FORTRAN(double, wtick, (void)) { return MPI_Wtick(); }
XMSG_FORTRAN(void, get_version, (MPI_Fint* version, MPI_Fint* subversion, MPI_Fint* ierr)) {
  *ierr = MPI_Get_version(version, subversion);
}
XMSG_FORTRAN(void, get_processor_name, (char* name, MPI_Fint* resultlen, MPI_Fint* ierr, size_t name_len)) {
  char c[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  *ierr = MPI_Get_processor_name(c, &len);
  string_out(c, name, name_len);
  *resultlen = len;
}
XMSG_FORTRAN(void, get_library_version, (char* version, MPI_Fint* resultlen, MPI_Fint* ierr, size_t version_len)) {
  char c[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {};
  int len = 0;
  *ierr = MPI_Get_library_version(c, &len);
  string_out(c, version, version_len);
  *resultlen = len;
}
XMSG_FORTRAN(void, error_string,
             (const MPI_Fint* errorcode, char* string, MPI_Fint* resultlen, MPI_Fint* ierr, size_t string_len)) {
  char c[MPI_MAX_ERROR_STRING + 1] = {};
  int len = 0;
  *ierr = MPI_Error_string(*errorcode, c, &len);
  string_out(c, string, string_len);
  *resultlen = len;
}
XMSG_FORTRAN(void, error_class, (const MPI_Fint* errorcode, MPI_Fint* errorclass, MPI_Fint* ierr)) {
  *ierr = MPI_Error_class(*errorcode, errorclass);
}
XMSG_FORTRAN(void, comm_set_errhandler, (const MPI_Fint* comm, const MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_set_errhandler(*comm, *errhandler);
}
XMSG_FORTRAN(void, comm_get_errhandler, (const MPI_Fint* comm, MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_get_errhandler(*comm, errhandler);
}
XMSG_FORTRAN(void, errhandler_free, (MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_Errhandler_free(errhandler);
}

// ---- communicators -------------------------------------------------------------------------
XMSG_FORTRAN(void, comm_rank, (const MPI_Fint* comm, MPI_Fint* rank, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_rank(*comm, rank);
}
XMSG_FORTRAN(void, comm_size, (const MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_size(*comm, size);
}
XMSG_FORTRAN(void, comm_remote_size, (const MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_remote_size(*comm, size);
}
XMSG_FORTRAN(void, comm_test_inter, (const MPI_Fint* comm, MPI_Fint* flag, MPI_Fint* ierr)) {
  int f = 0;
  *ierr = MPI_Comm_test_inter(*comm, &f);
  *flag = logical_out(f);
}
XMSG_FORTRAN(void, comm_dup, (const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_dup(*comm, newcomm);
}
XMSG_FORTRAN(void, comm_split,
             (const MPI_Fint* comm, const MPI_Fint* color, const MPI_Fint* key, MPI_Fint* newcomm, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_split(*comm, *color, *key, newcomm);
}
XMSG_FORTRAN(void, comm_split_type,
             (const MPI_Fint* comm, const MPI_Fint* split_type, const MPI_Fint* key, const MPI_Fint* info,
              MPI_Fint* newcomm, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_split_type(*comm, *split_type, *key, *info, newcomm);
}
XMSG_FORTRAN(void, comm_create, (const MPI_Fint* comm, const MPI_Fint* group, MPI_Fint* newcomm, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_create(*comm, *group, newcomm);
}
XMSG_FORTRAN(void, comm_free, (MPI_Fint* comm, MPI_Fint* ierr)) { *ierr = MPI_Comm_free(comm); }
XMSG_FORTRAN(void, comm_compare, (const MPI_Fint* comm1, const MPI_Fint* comm2, MPI_Fint* result, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_compare(*comm1, *comm2, result);
}
XMSG_FORTRAN(void, comm_group, (const MPI_Fint* comm, MPI_Fint* group, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_group(*comm, group);
}
XMSG_FORTRAN(void, comm_set_name, (const MPI_Fint* comm, const char* name, MPI_Fint* ierr, size_t name_len)) {
  *ierr = MPI_Comm_set_name(*comm, string_in(name, name_len).c_str());
}
XMSG_FORTRAN(void, comm_get_name,
             (const MPI_Fint* comm, char* name, MPI_Fint* resultlen, MPI_Fint* ierr, size_t name_len)) {
  char c[MPI_MAX_OBJECT_NAME + 1] = {};
  int len = 0;
  *ierr = MPI_Comm_get_name(*comm, c, &len);
  string_out(c, name, name_len);
  *resultlen = len;
}

// ---- groups --------------------------------------------------------------------------------
XMSG_FORTRAN(void, group_size, (const MPI_Fint* group, MPI_Fint* size, MPI_Fint* ierr)) {
  *ierr = MPI_Group_size(*group, size);
}
XMSG_FORTRAN(void, group_rank, (const MPI_Fint* group, MPI_Fint* rank, MPI_Fint* ierr)) {
  *ierr = MPI_Group_rank(*group, rank);
}
XMSG_FORTRAN(void, group_translate_ranks,
             (const MPI_Fint* group1, const MPI_Fint* n, const MPI_Fint* ranks1, const MPI_Fint* group2,
              MPI_Fint* ranks2, MPI_Fint* ierr)) {
  *ierr = MPI_Group_translate_ranks(*group1, *n, ranks1, *group2, ranks2);
}
XMSG_FORTRAN(void, group_compare, (const MPI_Fint* group1, const MPI_Fint* group2, MPI_Fint* result, MPI_Fint* ierr)) {
  *ierr = MPI_Group_compare(*group1, *group2, result);
}
XMSG_FORTRAN(void, group_union, (const MPI_Fint* g1, const MPI_Fint* g2, MPI_Fint* newgroup, MPI_Fint* ierr)) {
  *ierr = MPI_Group_union(*g1, *g2, newgroup);
}
XMSG_FORTRAN(void, group_intersection, (const MPI_Fint* g1, const MPI_Fint* g2, MPI_Fint* newgroup, MPI_Fint* ierr)) {
  *ierr = MPI_Group_intersection(*g1, *g2, newgroup);
}
XMSG_FORTRAN(void, group_difference, (const MPI_Fint* g1, const MPI_Fint* g2, MPI_Fint* newgroup, MPI_Fint* ierr)) {
  *ierr = MPI_Group_difference(*g1, *g2, newgroup);
}
XMSG_FORTRAN(void, group_incl,
             (const MPI_Fint* group, const MPI_Fint* n, const MPI_Fint* ranks, MPI_Fint* newgroup, MPI_Fint* ierr)) {
  *ierr = MPI_Group_incl(*group, *n, ranks, newgroup);
}
XMSG_FORTRAN(void, group_excl,
             (const MPI_Fint* group, const MPI_Fint* n, const MPI_Fint* ranks, MPI_Fint* newgroup, MPI_Fint* ierr)) {
  *ierr = MPI_Group_excl(*group, *n, ranks, newgroup);
}
XMSG_FORTRAN(void, group_free, (MPI_Fint* group, MPI_Fint* ierr)) { *ierr = MPI_Group_free(group); }

// ---- info ----------------------------------------------------------------------------------
XMSG_FORTRAN(void, info_create, (MPI_Fint* info, MPI_Fint* ierr)) { *ierr = MPI_Info_create(info); }
XMSG_FORTRAN(void, info_free, (MPI_Fint* info, MPI_Fint* ierr)) { *ierr = MPI_Info_free(info); }
XMSG_FORTRAN(void, info_set,
             (const MPI_Fint* info, const char* key, const char* value, MPI_Fint* ierr, size_t key_len,
              size_t value_len)) {
  *ierr = MPI_Info_set(*info, string_in(key, key_len).c_str(), string_in(value, value_len).c_str());
}
XMSG_FORTRAN(void, info_get,
             (const MPI_Fint* info, const char* key, const MPI_Fint* valuelen, char* value, MPI_Fint* flag,
              MPI_Fint* ierr, size_t key_len, size_t value_len)) {
  std::vector<char> c(static_cast<size_t>(*valuelen > 0 ? *valuelen : 0) + 1, '\0');
  int f = 0;
  *ierr = MPI_Info_get(*info, string_in(key, key_len).c_str(), *valuelen, c.data(), &f);
  *flag = logical_out(f);
  if (f) string_out(c.data(), value, value_len);
}
XMSG_FORTRAN(void, info_delete, (const MPI_Fint* info, const char* key, MPI_Fint* ierr, size_t key_len)) {
  *ierr = MPI_Info_delete(*info, string_in(key, key_len).c_str());
}
XMSG_FORTRAN(void, info_get_nkeys, (const MPI_Fint* info, MPI_Fint* nkeys, MPI_Fint* ierr)) {
  *ierr = MPI_Info_get_nkeys(*info, nkeys);
}

// ---- cartesian topologies ------------------------------------------------------------------
// LOGICAL arrays (periods) are INTEGER-sized 0/1 values: they pass as C's int arrays.
XMSG_FORTRAN(void, dims_create, (const MPI_Fint* nnodes, const MPI_Fint* ndims, MPI_Fint* dims, MPI_Fint* ierr)) {
  *ierr = MPI_Dims_create(*nnodes, *ndims, dims);
}
XMSG_FORTRAN(void, cart_create,
             (const MPI_Fint* comm_old, const MPI_Fint* ndims, const MPI_Fint* dims, const MPI_Fint* periods,
              const MPI_Fint* reorder, MPI_Fint* comm_cart, MPI_Fint* ierr)) {
  *ierr = MPI_Cart_create(*comm_old, *ndims, dims, periods, logical_in(reorder), comm_cart);
}
XMSG_FORTRAN(void, cart_get,
             (const MPI_Fint* comm, const MPI_Fint* maxdims, MPI_Fint* dims, MPI_Fint* periods, MPI_Fint* coords,
              MPI_Fint* ierr)) {
  *ierr = MPI_Cart_get(*comm, *maxdims, dims, periods, coords);
}
XMSG_FORTRAN(void, cart_rank, (const MPI_Fint* comm, const MPI_Fint* coords, MPI_Fint* rank, MPI_Fint* ierr)) {
  *ierr = MPI_Cart_rank(*comm, coords, rank);
}
XMSG_FORTRAN(void, cart_coords,
             (const MPI_Fint* comm, const MPI_Fint* rank, const MPI_Fint* maxdims, MPI_Fint* coords, MPI_Fint* ierr)) {
  *ierr = MPI_Cart_coords(*comm, *rank, *maxdims, coords);
}
XMSG_FORTRAN(void, cart_shift,
             (const MPI_Fint* comm, const MPI_Fint* direction, const MPI_Fint* disp, MPI_Fint* rank_source,
              MPI_Fint* rank_dest, MPI_Fint* ierr)) {
  *ierr = MPI_Cart_shift(*comm, *direction, *disp, rank_source, rank_dest);
}
XMSG_FORTRAN(void, cart_sub, (const MPI_Fint* comm, const MPI_Fint* remain_dims, MPI_Fint* newcomm, MPI_Fint* ierr)) {
  *ierr = MPI_Cart_sub(*comm, remain_dims, newcomm);
}
XMSG_FORTRAN(void, cartdim_get, (const MPI_Fint* comm, MPI_Fint* ndims, MPI_Fint* ierr)) {
  *ierr = MPI_Cartdim_get(*comm, ndims);
}

// ---- attributes ----------------------------------------------------------------------------
// Fortran attribute values are INTEGER(KIND=MPI_ADDRESS_KIND) values, not pointers: a value set
// from Fortran is stored as the void* itself. The predefined attributes (MPI_TAG_UB ..
// MPI_LASTUSEDCODE) are C ints the library points to; Fortran gets the int.
namespace {
inline bool predefined_comm_keyval(int keyval) { return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE; }
}  // namespace

XMSG_FORTRAN(void, comm_get_attr,
             (const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Aint* attribute_val, MPI_Fint* flag, MPI_Fint* ierr)) {
  void* value = nullptr;
  int f = 0;
  *ierr = MPI_Comm_get_attr(*comm, *keyval, &value, &f);
  *flag = logical_out(f);
  if (*ierr == MPI_SUCCESS && f)
    *attribute_val = predefined_comm_keyval(*keyval) ? *static_cast<int*>(value) : reinterpret_cast<MPI_Aint>(value);
}
XMSG_FORTRAN(void, comm_set_attr,
             (const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Aint* attribute_val, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_set_attr(*comm, *keyval, reinterpret_cast<void*>(*attribute_val));
}
XMSG_FORTRAN(void, comm_delete_attr, (const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_delete_attr(*comm, *keyval);
}
// MPI-1's MPI_ATTR_GET: the value is a default INTEGER.
XMSG_FORTRAN(void, attr_get,
             (const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* attribute_val, MPI_Fint* flag, MPI_Fint* ierr)) {
  void* value = nullptr;
  int f = 0;
  *ierr = MPI_Comm_get_attr(*comm, *keyval, &value, &f);
  *flag = logical_out(f);
  if (*ierr == MPI_SUCCESS && f)
    *attribute_val = predefined_comm_keyval(*keyval) ? *static_cast<int*>(value)
                                                     : static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(value));
}

XMSG_FORTRAN(void, comm_idup, (const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Comm_idup(*comm, newcomm, &c);
  *request = request_c2f(c);
}
