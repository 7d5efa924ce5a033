! The `mpi` module (use mpi): mpif.h's constants, sentinels and functions,
! plus explicit interfaces for the routines with choice buffers, so that one
! program unit may pass buffers of different types and ranks to them (gfortran
! 10 and later reject that without an interface). The buffer arguments are
! TYPE(*), DIMENSION(*) with gfortran's NO_ARG_CHECK: any type, kind and rank
! is accepted and passed by address. The other routines have no explicit
! interface (they are external subroutines, as with mpif.h). mpi_f08 is
! gen_mpi_f08.py's. See docs/fortran.md.
module mpi
  implicit none
  include 'mpif.h'

  interface

    subroutine MPI_SEND(buf, count, datatype, dest, tag, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, ierror
    end subroutine MPI_SEND

    subroutine MPI_SSEND(buf, count, datatype, dest, tag, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, ierror
    end subroutine MPI_SSEND

    subroutine MPI_RSEND(buf, count, datatype, dest, tag, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, ierror
    end subroutine MPI_RSEND

    subroutine MPI_BSEND(buf, count, datatype, dest, tag, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, ierror
    end subroutine MPI_BSEND

    subroutine MPI_RECV(buf, count, datatype, source, tag, comm, status, ierror)
      import :: MPI_STATUS_SIZE
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, source, tag, comm, ierror
      integer :: status(MPI_STATUS_SIZE)
    end subroutine MPI_RECV

    subroutine MPI_ISEND(buf, count, datatype, dest, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, request, ierror
    end subroutine MPI_ISEND

    subroutine MPI_ISSEND(buf, count, datatype, dest, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, request, ierror
    end subroutine MPI_ISSEND

    subroutine MPI_IRSEND(buf, count, datatype, dest, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, request, ierror
    end subroutine MPI_IRSEND

    subroutine MPI_IBSEND(buf, count, datatype, dest, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, request, ierror
    end subroutine MPI_IBSEND

    subroutine MPI_SEND_INIT(buf, count, datatype, dest, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, request, ierror
    end subroutine MPI_SEND_INIT

    subroutine MPI_SSEND_INIT(buf, count, datatype, dest, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, tag, comm, request, ierror
    end subroutine MPI_SSEND_INIT

    subroutine MPI_IRECV(buf, count, datatype, source, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, source, tag, comm, request, ierror
    end subroutine MPI_IRECV

    subroutine MPI_RECV_INIT(buf, count, datatype, source, tag, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, source, tag, comm, request, ierror
    end subroutine MPI_RECV_INIT

    subroutine MPI_SENDRECV(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, &
        recvcount, recvtype, source, recvtag, comm, status, ierror)
      import :: MPI_STATUS_SIZE
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, dest, sendtag, recvcount, recvtype
      integer :: source, recvtag, comm, ierror
      integer :: status(MPI_STATUS_SIZE)
    end subroutine MPI_SENDRECV

    subroutine MPI_SENDRECV_REPLACE(buf, count, datatype, dest, sendtag, source, recvtag, &
        comm, status, ierror)
      import :: MPI_STATUS_SIZE
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, dest, sendtag, source, recvtag, comm, ierror
      integer :: status(MPI_STATUS_SIZE)
    end subroutine MPI_SENDRECV_REPLACE

    subroutine MPI_BCAST(buffer, count, datatype, root, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buffer
      type(*), dimension(*) :: buffer
      integer :: count, datatype, root, comm, ierror
    end subroutine MPI_BCAST

    subroutine MPI_IBCAST(buffer, count, datatype, root, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buffer
      type(*), dimension(*) :: buffer
      integer :: count, datatype, root, comm, request, ierror
    end subroutine MPI_IBCAST

    subroutine MPI_REDUCE(sendbuf, recvbuf, count, datatype, op, root, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, root, comm, ierror
    end subroutine MPI_REDUCE

    subroutine MPI_IREDUCE(sendbuf, recvbuf, count, datatype, op, root, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, root, comm, request, ierror
    end subroutine MPI_IREDUCE

    subroutine MPI_ALLREDUCE(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, comm, ierror
    end subroutine MPI_ALLREDUCE

    subroutine MPI_IALLREDUCE(sendbuf, recvbuf, count, datatype, op, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, comm, request, ierror
    end subroutine MPI_IALLREDUCE

    subroutine MPI_REDUCE_SCATTER(sendbuf, recvbuf, recvcounts, datatype, op, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: datatype, op, comm, ierror
      integer :: recvcounts(*)
    end subroutine MPI_REDUCE_SCATTER

    subroutine MPI_REDUCE_SCATTER_BLOCK(sendbuf, recvbuf, recvcount, datatype, op, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: recvcount, datatype, op, comm, ierror
    end subroutine MPI_REDUCE_SCATTER_BLOCK

    subroutine MPI_SCAN(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, comm, ierror
    end subroutine MPI_SCAN

    subroutine MPI_EXSCAN(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, comm, ierror
    end subroutine MPI_EXSCAN

    subroutine MPI_REDUCE_LOCAL(inbuf, inoutbuf, count, datatype, op, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: inbuf
      type(*), dimension(*) :: inbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: inoutbuf
      type(*), dimension(*) :: inoutbuf
      integer :: count, datatype, op, ierror
    end subroutine MPI_REDUCE_LOCAL

    subroutine MPI_GATHER(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        root, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, root, comm, ierror
    end subroutine MPI_GATHER

    subroutine MPI_GATHERV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
        recvtype, root, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvtype, root, comm, ierror
      integer :: recvcounts(*)
      integer :: displs(*)
    end subroutine MPI_GATHERV

    subroutine MPI_SCATTER(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        root, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, root, comm, ierror
    end subroutine MPI_SCATTER

    subroutine MPI_SCATTERV(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, &
        recvtype, root, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendtype, recvcount, recvtype, root, comm, ierror
      integer :: sendcounts(*)
      integer :: displs(*)
    end subroutine MPI_SCATTERV

    subroutine MPI_ALLGATHER(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, comm, ierror
    end subroutine MPI_ALLGATHER

    subroutine MPI_IALLGATHER(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, comm, request, ierror
    end subroutine MPI_IALLGATHER

    subroutine MPI_ALLGATHERV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
        recvtype, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvtype, comm, ierror
      integer :: recvcounts(*)
      integer :: displs(*)
    end subroutine MPI_ALLGATHERV

    subroutine MPI_ALLTOALL(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, comm, ierror
    end subroutine MPI_ALLTOALL

    subroutine MPI_IALLTOALL(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, comm, request, ierror
    end subroutine MPI_IALLTOALL

    subroutine MPI_ALLTOALLV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, &
        rdispls, recvtype, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendtype, recvtype, comm, ierror
      integer :: sendcounts(*)
      integer :: sdispls(*)
      integer :: recvcounts(*)
      integer :: rdispls(*)
    end subroutine MPI_ALLTOALLV

    subroutine MPI_GET_ADDRESS(location, address, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: location
      type(*), dimension(*) :: location
      integer :: ierror
      integer(kind=MPI_ADDRESS_KIND) :: address
    end subroutine MPI_GET_ADDRESS

    subroutine MPI_PACK(inbuf, incount, datatype, outbuf, outsize, position, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: inbuf
      type(*), dimension(*) :: inbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: outbuf
      type(*), dimension(*) :: outbuf
      integer :: incount, datatype, outsize, position, comm, ierror
    end subroutine MPI_PACK

    subroutine MPI_UNPACK(inbuf, insize, position, outbuf, outcount, datatype, comm, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: inbuf
      type(*), dimension(*) :: inbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: outbuf
      type(*), dimension(*) :: outbuf
      integer :: insize, position, outcount, datatype, comm, ierror
    end subroutine MPI_UNPACK

    subroutine MPI_MRECV(buf, count, datatype, message, status, ierror)
      import :: MPI_STATUS_SIZE
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, message, ierror
      integer :: status(MPI_STATUS_SIZE)
    end subroutine MPI_MRECV

    subroutine MPI_IMRECV(buf, count, datatype, message, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
      integer :: count, datatype, message, request, ierror
    end subroutine MPI_IMRECV

    subroutine MPI_IGATHER(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        root, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, root, comm
      integer :: request, ierror
    end subroutine MPI_IGATHER

    subroutine MPI_IGATHERV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
        recvtype, root, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvtype, root, comm, request, ierror
      integer :: recvcounts(*)
      integer :: displs(*)
    end subroutine MPI_IGATHERV

    subroutine MPI_ISCATTER(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
        root, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvcount, recvtype, root, comm
      integer :: request, ierror
    end subroutine MPI_ISCATTER

    subroutine MPI_ISCATTERV(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, &
        recvtype, root, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendtype, recvcount, recvtype, root, comm, request, ierror
      integer :: sendcounts(*)
      integer :: displs(*)
    end subroutine MPI_ISCATTERV

    subroutine MPI_IALLGATHERV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
        recvtype, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendcount, sendtype, recvtype, comm, request, ierror
      integer :: recvcounts(*)
      integer :: displs(*)
    end subroutine MPI_IALLGATHERV

    subroutine MPI_IALLTOALLV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, &
        recvcounts, rdispls, recvtype, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: sendtype, recvtype, comm, request, ierror
      integer :: sendcounts(*)
      integer :: sdispls(*)
      integer :: recvcounts(*)
      integer :: rdispls(*)
    end subroutine MPI_IALLTOALLV

    subroutine MPI_ISCAN(sendbuf, recvbuf, count, datatype, op, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, comm, request, ierror
    end subroutine MPI_ISCAN

    subroutine MPI_IEXSCAN(sendbuf, recvbuf, count, datatype, op, comm, request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: count, datatype, op, comm, request, ierror
    end subroutine MPI_IEXSCAN

    subroutine MPI_IREDUCE_SCATTER(sendbuf, recvbuf, recvcounts, datatype, op, comm, &
        request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: datatype, op, comm, request, ierror
      integer :: recvcounts(*)
    end subroutine MPI_IREDUCE_SCATTER

    subroutine MPI_IREDUCE_SCATTER_BLOCK(sendbuf, recvbuf, recvcount, datatype, op, comm, &
        request, ierror)
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
      type(*), dimension(*) :: sendbuf
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: recvbuf
      type(*), dimension(*) :: recvbuf
      integer :: recvcount, datatype, op, comm, request, ierror
    end subroutine MPI_IREDUCE_SCATTER_BLOCK

    ! One-sided communication (RMA): the routines with a choice buffer.
    subroutine MPI_WIN_CREATE(base, size, disp_unit, info, comm, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
      type(*), dimension(*) :: base
      integer :: disp_unit, info, comm, win, ierror
      integer(kind=MPI_ADDRESS_KIND) :: size
    end subroutine MPI_WIN_CREATE

    subroutine MPI_WIN_ATTACH(win, base, size, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
      type(*), dimension(*) :: base
      integer :: win, ierror
      integer(kind=MPI_ADDRESS_KIND) :: size
    end subroutine MPI_WIN_ATTACH

    subroutine MPI_WIN_DETACH(win, base, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
      type(*), dimension(*) :: base
      integer :: win, ierror
    end subroutine MPI_WIN_DETACH

    subroutine MPI_PUT(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      integer :: origin_count, origin_datatype, target_rank, target_count, target_datatype, win
      integer :: ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_PUT

    subroutine MPI_GET(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      integer :: origin_count, origin_datatype, target_rank, target_count, target_datatype, win
      integer :: ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_GET

    subroutine MPI_RPUT(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, win, &
        request, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      integer :: origin_count, origin_datatype, target_rank, target_count, target_datatype, win
      integer :: request, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_RPUT

    subroutine MPI_RGET(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, win, &
        request, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      integer :: origin_count, origin_datatype, target_rank, target_count, target_datatype, win
      integer :: request, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_RGET

    subroutine MPI_ACCUMULATE(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, op, win, &
        ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      integer :: origin_count, origin_datatype, target_rank, target_count, target_datatype, op
      integer :: win, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_ACCUMULATE

    subroutine MPI_RACCUMULATE(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, op, win, &
        request, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      integer :: origin_count, origin_datatype, target_rank, target_count, target_datatype, op
      integer :: win, request, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_RACCUMULATE

    subroutine MPI_GET_ACCUMULATE(origin_addr, origin_count, origin_datatype, &
        result_addr, result_count, result_datatype, target_rank, target_disp, &
        target_count, target_datatype, op, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: result_addr
      type(*), dimension(*) :: result_addr
      integer :: origin_count, origin_datatype, result_count, result_datatype, target_rank, target_count
      integer :: target_datatype, op, win, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_GET_ACCUMULATE

    subroutine MPI_RGET_ACCUMULATE(origin_addr, origin_count, &
        origin_datatype, result_addr, result_count, result_datatype, &
        target_rank, target_disp, target_count, target_datatype, op, win, &
        request, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: result_addr
      type(*), dimension(*) :: result_addr
      integer :: origin_count, origin_datatype, result_count, result_datatype, target_rank, target_count
      integer :: target_datatype, op, win, request, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_RGET_ACCUMULATE

    subroutine MPI_FETCH_AND_OP(origin_addr, result_addr, datatype, &
        target_rank, target_disp, op, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: result_addr
      type(*), dimension(*) :: result_addr
      integer :: datatype, target_rank, op, win, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_FETCH_AND_OP

    subroutine MPI_COMPARE_AND_SWAP(origin_addr, compare_addr, result_addr, &
        datatype, target_rank, target_disp, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: origin_addr
      type(*), dimension(*) :: origin_addr
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: compare_addr
      type(*), dimension(*) :: compare_addr
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: result_addr
      type(*), dimension(*) :: result_addr
      integer :: datatype, target_rank, win, ierror
      integer(kind=MPI_ADDRESS_KIND) :: target_disp
    end subroutine MPI_COMPARE_AND_SWAP
  end interface

  ! BASEPTR of MPI_WIN_ALLOCATE(_SHARED) and MPI_WIN_SHARED_QUERY: an address integer, or (MPI-3's
  ! overload) TYPE(C_PTR). Either is one 8-byte address passed by reference, so the C_PTR forms'
  ! entry points (mpi_win_allocate_cptr_ ..., as MPICH names them) are the same code.
  interface MPI_WIN_ALLOCATE
    subroutine MPI_WIN_ALLOCATE(size, disp_unit, info, comm, baseptr, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size, baseptr
      integer :: disp_unit, info, comm, win, ierror
    end subroutine MPI_WIN_ALLOCATE
    subroutine MPI_WIN_ALLOCATE_CPTR(size, disp_unit, info, comm, baseptr, win, ierror)
      use, intrinsic :: iso_c_binding, only: c_ptr
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size
      integer :: disp_unit, info, comm, win, ierror
      type(c_ptr) :: baseptr
    end subroutine MPI_WIN_ALLOCATE_CPTR
  end interface

  interface MPI_WIN_ALLOCATE_SHARED
    subroutine MPI_WIN_ALLOCATE_SHARED(size, disp_unit, info, comm, baseptr, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size, baseptr
      integer :: disp_unit, info, comm, win, ierror
    end subroutine MPI_WIN_ALLOCATE_SHARED
    subroutine MPI_WIN_ALLOCATE_SHARED_CPTR(size, disp_unit, info, comm, baseptr, win, ierror)
      use, intrinsic :: iso_c_binding, only: c_ptr
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size
      integer :: disp_unit, info, comm, win, ierror
      type(c_ptr) :: baseptr
    end subroutine MPI_WIN_ALLOCATE_SHARED_CPTR
  end interface

  interface MPI_WIN_SHARED_QUERY
    subroutine MPI_WIN_SHARED_QUERY(win, rank, size, disp_unit, baseptr, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      integer :: win, rank, disp_unit, ierror
      integer(kind=MPI_ADDRESS_KIND) :: size, baseptr
    end subroutine MPI_WIN_SHARED_QUERY
    subroutine MPI_WIN_SHARED_QUERY_CPTR(win, rank, size, disp_unit, baseptr, ierror)
      use, intrinsic :: iso_c_binding, only: c_ptr
      import :: MPI_ADDRESS_KIND
      implicit none
      integer :: win, rank, disp_unit, ierror
      integer(kind=MPI_ADDRESS_KIND) :: size
      type(c_ptr) :: baseptr
    end subroutine MPI_WIN_SHARED_QUERY_CPTR
  end interface
end module mpi
