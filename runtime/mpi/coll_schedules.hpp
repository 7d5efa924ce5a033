// Collective algorithms as schedules (schedule.cpp): what the non-blocking and persistent
// collectives run, and the blocking collectives the C API has no call for (scan, exscan,
// reduce_scatter, alltoallw) or cannot run (intercommunicators, user ops on derived types).
// Builders take MPI arguments (already validated) and add rounds to a schedule; data of
// non-contiguous datatypes is packed when the schedule is built (MPI forbids touching a send
// buffer until completion, so the contents then are the contents sent) and unpacked in the
// schedule's last round.
#pragma once

#include "mpi_impl.hpp"

namespace xmsg::mpi {

// Validated reduction: op and type fit together (a built-in op needs one basic type underneath;
// user ops take any type).
int check_op(MPI_Op op, const Type& type, const char* func, MPI_Comm comm);
// inout = in (op) inout for `count` elements of `type` laid out as MPI buffers are.
void reduce_layout(const void* in, void* inout, int64_t count, MPI_Datatype type, MPI_Op op);
// The MPI user function of an op made with MPI_Op_create (nullptr for built-in ops).
MPI_User_function* user_function_of(MPI_Op op);

// Every builder: `s` runs on comm; ranks are ranks of comm (intracommunicators).
int build_barrier(Schedule& s);
int build_bcast(Schedule& s, void* buf, int count, MPI_Datatype type, int root);
int build_gather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype, int root);
int build_scatter(Schedule& s, const void* sendbuf, const int* sendcounts, const int* displs, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
int build_allgather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype);
// Per-peer counts, displacements (in bytes when byte_displs) and types: covers alltoall,
// alltoallv and alltoallw.
int build_alltoallw(Schedule& s, const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                    const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                    const MPI_Datatype* recvtypes);
int build_reduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root);
int build_allreduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op);
int build_reduce_scatter(Schedule& s, const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type,
                         MPI_Op op);
int build_scan(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               bool exclusive);

// Intercommunicators: the same collectives between the two groups (root: MPI_ROOT at the
// root, MPI_PROC_NULL in the rest of its group, the root's remote rank in the other group).
int inter_check_root(int root, MPI_Comm comm, const char* func);
int build_inter_barrier(Schedule& s);
int build_inter_bcast(Schedule& s, void* buf, int count, MPI_Datatype type, int root);
int build_inter_reduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       int root);
int build_inter_allreduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op);
int build_inter_gather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype, int root);
int build_inter_scatter(Schedule& s, const void* sendbuf, const int* sendcounts, const int* displs, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
int build_inter_allgather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype);
int build_inter_alltoallw(Schedule& s, const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                          const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                          const MPI_Datatype* recvtypes);
int build_inter_reduce_scatter(Schedule& s, const void* sendbuf, void* recvbuf, const int* recvcounts,
                               MPI_Datatype type, MPI_Op op);

// Argument checks shared by the blocking, non-blocking and persistent forms.
int check_count(int count, const char* func, const char* arg, MPI_Comm comm);
int check_root(int root, int size, const char* func, MPI_Comm comm);
int check_counts(const int* counts, int n, const char* func, const char* arg, MPI_Comm comm);

}  // namespace xmsg::mpi
