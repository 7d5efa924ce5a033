// Fortran bindings of the collectives (blocking and the common non-blocking ones), reduction
// ops (MPI_Op_create with a Fortran subroutine) and datatypes. Conventions: fortran.hpp.
#include "fortran.hpp"

#include "../coll_schedules.hpp"

using namespace xmsg::mpi::fortran;

// ---- collectives ---------------------------------------------------------------------------
XMSG_FORTRAN(void, barrier, (const MPI_Fint* comm, MPI_Fint* ierr)) { *ierr = MPI_Barrier(*comm); }

XMSG_FORTRAN(void, bcast,
             (void* buf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* root, const MPI_Fint* comm,
              MPI_Fint* ierr)) {
  *ierr = MPI_Bcast(buffer(buf), *count, *datatype, *root, *comm);
}

XMSG_FORTRAN(void, reduce,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Reduce(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *root, *comm);
}

XMSG_FORTRAN(void, allreduce,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Allreduce(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *comm);
}

XMSG_FORTRAN(void, reduce_scatter,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* recvcounts, const MPI_Fint* datatype,
              const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Reduce_scatter(buffer(sendbuf), buffer(recvbuf), recvcounts, *datatype, *op, *comm);
}

XMSG_FORTRAN(void, reduce_scatter_block,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* datatype,
              const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Reduce_scatter_block(buffer(sendbuf), buffer(recvbuf), *recvcount, *datatype, *op, *comm);
}

XMSG_FORTRAN(void, scan,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Scan(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *comm);
}

XMSG_FORTRAN(void, exscan,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Exscan(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *comm);
}

XMSG_FORTRAN(void, reduce_local,
             (const void* inbuf, void* inoutbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              MPI_Fint* ierr)) {
  *ierr = MPI_Reduce_local(buffer(inbuf), buffer(inoutbuf), *count, *datatype, *op);
}

XMSG_FORTRAN(void, gather,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root, const MPI_Fint* comm,
              MPI_Fint* ierr)) {
  *ierr = MPI_Gather(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *root, *comm);
}

XMSG_FORTRAN(void, gatherv,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcounts, const MPI_Fint* displs, const MPI_Fint* recvtype, const MPI_Fint* root,
              const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Gatherv(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), recvcounts, displs, *recvtype, *root,
                      *comm);
}

XMSG_FORTRAN(void, scatter,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root, const MPI_Fint* comm,
              MPI_Fint* ierr)) {
  *ierr = MPI_Scatter(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *root, *comm);
}

XMSG_FORTRAN(void, scatterv,
             (const void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* displs, const MPI_Fint* sendtype,
              void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root,
              const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Scatterv(buffer(sendbuf), sendcounts, displs, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *root,
                       *comm);
}

XMSG_FORTRAN(void, allgather,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Allgather(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *comm);
}

XMSG_FORTRAN(void, allgatherv,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcounts, const MPI_Fint* displs, const MPI_Fint* recvtype, const MPI_Fint* comm,
              MPI_Fint* ierr)) {
  *ierr = MPI_Allgatherv(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), recvcounts, displs, *recvtype,
                         *comm);
}

XMSG_FORTRAN(void, alltoall,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Alltoall(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *comm);
}

XMSG_FORTRAN(void, alltoallv,
             (const void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* sdispls, const MPI_Fint* sendtype,
              void* recvbuf, const MPI_Fint* recvcounts, const MPI_Fint* rdispls, const MPI_Fint* recvtype,
              const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Alltoallv(buffer(sendbuf), sendcounts, sdispls, *sendtype, buffer(recvbuf), recvcounts, rdispls,
                        *recvtype, *comm);
}

// ---- non-blocking collectives --------------------------------------------------------------
XMSG_FORTRAN(void, ibarrier, (const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Ibarrier(*comm, &c);
  *request = request_c2f(c);
}

XMSG_FORTRAN(void, ibcast,
             (void* buf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* root, const MPI_Fint* comm,
              MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Ibcast(buffer(buf), *count, *datatype, *root, *comm, &c);
  *request = request_c2f(c);
}

XMSG_FORTRAN(void, ireduce,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Ireduce(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *root, *comm, &c);
  *request = request_c2f(c);
}

XMSG_FORTRAN(void, iallreduce,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Iallreduce(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *comm, &c);
  *request = request_c2f(c);
}

XMSG_FORTRAN(void, iallgather,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* comm, MPI_Fint* request,
              MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Iallgather(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *comm, &c);
  *request = request_c2f(c);
}

XMSG_FORTRAN(void, ialltoall,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* comm, MPI_Fint* request,
              MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Ialltoall(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *comm, &c);
  *request = request_c2f(c);
}

// ---- ops -----------------------------------------------------------------------------------
// A Fortran SUBROUTINE F(INVEC, INOUTVEC, LEN, DATATYPE) takes all four by reference: exactly
// MPI_User_function's signature (the datatype handle is the same integer in both languages).
XMSG_FORTRAN(void, op_create, (MPI_User_function* function, const MPI_Fint* commute, MPI_Fint* op, MPI_Fint* ierr)) {
  *ierr = MPI_Op_create(function, logical_in(commute), op);
}
XMSG_FORTRAN(void, op_free, (MPI_Fint* op, MPI_Fint* ierr)) { *ierr = MPI_Op_free(op); }
XMSG_FORTRAN(void, op_commutative, (const MPI_Fint* op, MPI_Fint* commute, MPI_Fint* ierr)) {
  int c = 0;
  *ierr = MPI_Op_commutative(*op, &c);
  *commute = logical_out(c);
}

// ---- datatypes -----------------------------------------------------------------------------
// INTEGER(KIND=MPI_ADDRESS_KIND) is MPI_Aint.
XMSG_FORTRAN(void, type_contiguous, (const MPI_Fint* count, const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_contiguous(*count, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_vector,
             (const MPI_Fint* count, const MPI_Fint* blocklength, const MPI_Fint* stride, const MPI_Fint* oldtype,
              MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_vector(*count, *blocklength, *stride, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_create_hvector,
             (const MPI_Fint* count, const MPI_Fint* blocklength, const MPI_Aint* stride, const MPI_Fint* oldtype,
              MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_create_hvector(*count, *blocklength, *stride, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_indexed,
             (const MPI_Fint* count, const MPI_Fint* blocklengths, const MPI_Fint* displacements,
              const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_indexed(*count, blocklengths, displacements, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_create_hindexed,
             (const MPI_Fint* count, const MPI_Fint* blocklengths, const MPI_Aint* displacements,
              const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_create_hindexed(*count, blocklengths, displacements, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_create_indexed_block,
             (const MPI_Fint* count, const MPI_Fint* blocklength, const MPI_Fint* displacements,
              const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_create_indexed_block(*count, *blocklength, displacements, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_create_hindexed_block,
             (const MPI_Fint* count, const MPI_Fint* blocklength, const MPI_Aint* displacements,
              const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_create_hindexed_block(*count, *blocklength, displacements, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_create_struct,
             (const MPI_Fint* count, const MPI_Fint* blocklengths, const MPI_Aint* displacements,
              const MPI_Fint* types, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_create_struct(*count, blocklengths, displacements, types, newtype);
}
XMSG_FORTRAN(void, type_create_subarray,
             (const MPI_Fint* ndims, const MPI_Fint* sizes, const MPI_Fint* subsizes, const MPI_Fint* starts,
              const MPI_Fint* order, const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_create_subarray(*ndims, sizes, subsizes, starts, *order, *oldtype, newtype);
}
XMSG_FORTRAN(void, type_create_resized,
             (const MPI_Fint* oldtype, const MPI_Aint* lb, const MPI_Aint* extent, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_create_resized(*oldtype, *lb, *extent, newtype);
}
XMSG_FORTRAN(void, type_dup, (const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_dup(*oldtype, newtype);
}
XMSG_FORTRAN(void, type_commit, (MPI_Fint* datatype, MPI_Fint* ierr)) { *ierr = MPI_Type_commit(datatype); }
XMSG_FORTRAN(void, type_free, (MPI_Fint* datatype, MPI_Fint* ierr)) { *ierr = MPI_Type_free(datatype); }
XMSG_FORTRAN(void, type_size, (const MPI_Fint* datatype, MPI_Fint* size, MPI_Fint* ierr)) {
  *ierr = MPI_Type_size(*datatype, size);
}
XMSG_FORTRAN(void, type_get_extent, (const MPI_Fint* datatype, MPI_Aint* lb, MPI_Aint* extent, MPI_Fint* ierr)) {
  *ierr = MPI_Type_get_extent(*datatype, lb, extent);
}
XMSG_FORTRAN(void, type_get_true_extent,
             (const MPI_Fint* datatype, MPI_Aint* true_lb, MPI_Aint* true_extent, MPI_Fint* ierr)) {
  *ierr = MPI_Type_get_true_extent(*datatype, true_lb, true_extent);
}
XMSG_FORTRAN(void, type_set_name, (const MPI_Fint* datatype, const char* name, MPI_Fint* ierr, size_t name_len)) {
  *ierr = MPI_Type_set_name(*datatype, string_in(name, name_len).c_str());
}
XMSG_FORTRAN(void, type_get_name,
             (const MPI_Fint* datatype, char* name, MPI_Fint* resultlen, MPI_Fint* ierr, size_t name_len)) {
  char c[MPI_MAX_OBJECT_NAME + 1] = {};
  int len = 0;
  *ierr = MPI_Type_get_name(*datatype, c, &len);
  string_out(c, name, name_len);
  *resultlen = len;
}
XMSG_FORTRAN(void, get_address, (const void* location, MPI_Aint* address, MPI_Fint* ierr)) {
  *ierr = MPI_Get_address(buffer(location), address);
}
XMSG_FORTRAN(void, pack,
             (const void* inbuf, const MPI_Fint* incount, const MPI_Fint* datatype, void* outbuf,
              const MPI_Fint* outsize, MPI_Fint* position, const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Pack(buffer(inbuf), *incount, *datatype, outbuf, *outsize, position, *comm);
}
XMSG_FORTRAN(void, unpack,
             (const void* inbuf, const MPI_Fint* insize, MPI_Fint* position, void* outbuf, const MPI_Fint* outcount,
              const MPI_Fint* datatype, const MPI_Fint* comm, MPI_Fint* ierr)) {
  *ierr = MPI_Unpack(inbuf, *insize, position, buffer(outbuf), *outcount, *datatype, *comm);
}
XMSG_FORTRAN(void, pack_size,
             (const MPI_Fint* incount, const MPI_Fint* datatype, const MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr)) {
  *ierr = MPI_Pack_size(*incount, *datatype, *comm, size);
}

// ---- more non-blocking collectives ---------------------------------------------------------
XMSG_FORTRAN(void, igather,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root, const MPI_Fint* comm,
              MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Igather(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *root, *comm,
                      &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, igatherv,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcounts, const MPI_Fint* displs, const MPI_Fint* recvtype, const MPI_Fint* root,
              const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Igatherv(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), recvcounts, displs, *recvtype, *root,
                       *comm, &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, iscatter,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root, const MPI_Fint* comm,
              MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Iscatter(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *root, *comm,
                       &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, iscatterv,
             (const void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* displs, const MPI_Fint* sendtype,
              void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root,
              const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Iscatterv(buffer(sendbuf), sendcounts, displs, *sendtype, buffer(recvbuf), *recvcount, *recvtype, *root,
                        *comm, &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, iallgatherv,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
              const MPI_Fint* recvcounts, const MPI_Fint* displs, const MPI_Fint* recvtype, const MPI_Fint* comm,
              MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Iallgatherv(buffer(sendbuf), *sendcount, *sendtype, buffer(recvbuf), recvcounts, displs, *recvtype,
                          *comm, &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, ialltoallv,
             (const void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* sdispls, const MPI_Fint* sendtype,
              void* recvbuf, const MPI_Fint* recvcounts, const MPI_Fint* rdispls, const MPI_Fint* recvtype,
              const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Ialltoallv(buffer(sendbuf), sendcounts, sdispls, *sendtype, buffer(recvbuf), recvcounts, rdispls,
                         *recvtype, *comm, &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, iscan,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Iscan(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *comm, &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, iexscan,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* op,
              const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Iexscan(buffer(sendbuf), buffer(recvbuf), *count, *datatype, *op, *comm, &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, ireduce_scatter,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* recvcounts, const MPI_Fint* datatype,
              const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Ireduce_scatter(buffer(sendbuf), buffer(recvbuf), recvcounts, *datatype, *op, *comm, &c);
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, ireduce_scatter_block,
             (const void* sendbuf, void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* datatype,
              const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Ireduce_scatter_block(buffer(sendbuf), buffer(recvbuf), *recvcount, *datatype, *op, *comm, &c);
  *request = request_c2f(c);
}

// ---- more datatype queries -----------------------------------------------------------------
XMSG_FORTRAN(void, type_size_x, (const MPI_Fint* datatype, MPI_Count* size, MPI_Fint* ierr)) {
  *ierr = MPI_Type_size_x(*datatype, size);
}
XMSG_FORTRAN(void, type_match_size, (const MPI_Fint* typeclass, const MPI_Fint* size, MPI_Fint* datatype, MPI_Fint* ierr)) {
  *ierr = MPI_Type_match_size(*typeclass, *size, datatype);
}
XMSG_FORTRAN(void, type_get_envelope,
             (const MPI_Fint* datatype, MPI_Fint* num_integers, MPI_Fint* num_addresses, MPI_Fint* num_datatypes,
              MPI_Fint* combiner, MPI_Fint* ierr)) {
  *ierr = MPI_Type_get_envelope(*datatype, num_integers, num_addresses, num_datatypes, combiner);
}
XMSG_FORTRAN(void, type_get_contents,
             (const MPI_Fint* datatype, const MPI_Fint* max_integers, const MPI_Fint* max_addresses,
              const MPI_Fint* max_datatypes, MPI_Fint* integers, MPI_Aint* addresses, MPI_Fint* datatypes,
              MPI_Fint* ierr)) {
  *ierr = MPI_Type_get_contents(*datatype, *max_integers, *max_addresses, *max_datatypes, integers, addresses,
                                datatypes);
}
