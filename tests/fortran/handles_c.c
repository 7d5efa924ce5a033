/* The C half of handles.f90: every Fortran handle converted with MPI_*_f2c is used from C and
 * converts back to the same integer. *result: 0, or the number of the first check that failed. */
#include <mpi.h>
#include <string.h>

void xmsg_test_handles_(const MPI_Fint* fcomm, const MPI_Fint* ftype, const MPI_Fint* fgroup, const MPI_Fint* finfo,
                        const MPI_Fint* fop, const MPI_Fint* freq, const MPI_Fint* fstatus, const MPI_Fint* nranks,
                        MPI_Fint* result);

void xmsg_test_handles_(const MPI_Fint* fcomm, const MPI_Fint* ftype, const MPI_Fint* fgroup, const MPI_Fint* finfo,
                        const MPI_Fint* fop, const MPI_Fint* freq, const MPI_Fint* fstatus, const MPI_Fint* nranks,
                        MPI_Fint* result) {
  int n = 0, size = 0, flag = 0, commute = 1;
  char value[64] = {0};
  MPI_Status st;
  MPI_Comm comm = MPI_Comm_f2c(*fcomm);
  MPI_Datatype type = MPI_Type_f2c(*ftype);
  MPI_Group group = MPI_Group_f2c(*fgroup);
  MPI_Info info = MPI_Info_f2c(*finfo);
  MPI_Op op = MPI_Op_f2c(*fop);
  MPI_Request req = MPI_Request_f2c(*freq);
  *result = 0;
  if (MPI_Comm_size(comm, &n) != MPI_SUCCESS || n != *nranks) { *result = 1; return; }
  if (MPI_Comm_c2f(comm) != *fcomm) { *result = 2; return; }
  if (MPI_Type_size(type, &size) != MPI_SUCCESS || size != 2 * (int)sizeof(int)) { *result = 3; return; }
  if (MPI_Type_c2f(type) != *ftype) { *result = 4; return; }
  if (MPI_Group_size(group, &n) != MPI_SUCCESS || n != *nranks || MPI_Group_c2f(group) != *fgroup) { *result = 5; return; }
  if (MPI_Info_get(info, "xmsg_key", (int)sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag ||
      strcmp(value, "fortran value") != 0 || MPI_Info_c2f(info) != *finfo) { *result = 6; return; }
  if (op != MPI_MAX || MPI_Op_commutative(op, &commute) != MPI_SUCCESS || !commute || MPI_Op_c2f(op) != *fop) {
    *result = 7;
    return;
  }
  if (req == MPI_REQUEST_NULL || MPI_Request_c2f(req) != *freq) { *result = 8; return; }
  if (MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag) { *result = 9; return; }
  if (MPI_Status_f2c(fstatus, &st) != MPI_SUCCESS || st.MPI_SOURCE != 3 || st.MPI_TAG != 44) { *result = 10; return; }
  if (MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) != MPI_COMM_WORLD) { *result = 11; return; }
}
