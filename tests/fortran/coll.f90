! Collectives from Fortran (use mpi): bcast, reduce/allreduce (MPI_SUM, MPI_MAX on INTEGER,
! REAL, DOUBLE PRECISION; MPI_IN_PLACE; complex MPI_SUM and MPI_PROD), gather(v), scatter(v), allgather(v),
! alltoall(v), reduce_scatter, scan/exscan, non-blocking ibarrier/ibcast/iallreduce, a
! user-defined op (a Fortran subroutine) and MPI_Comm_split. Every value is compared with
! what it must be. Prints "fortran_coll: OK on N ranks" only when every check passed.
module coll_ops
  implicit none
contains
  ! inout(i) = max(|in(i)|, |inout(i)|) * sign of inout: a non-predefined function on INTEGER
  subroutine absmax(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    integer :: i
    do i = 1, len
      inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
    end do
    if (datatype < 0) inoutvec(1) = -1
  end subroutine absmax
end module coll_ops

program fortran_coll
  use mpi
  use coll_ops
  implicit none
  integer :: rank, size, ierr, i, j, nfail, root, sum_ranks
  integer :: ival, ires, iarr(4), iarr2(4)
  real :: rval, rres
  double precision :: dval, dres, darr(3)
  complex :: cval, cres
  integer, allocatable :: sendv(:), recvv(:), counts(:), displs(:), rcounts(:), rdispls(:)
  integer :: req, reqs(3), myop, newcomm, nrank, nsize, color
  logical :: flag

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  sum_ranks = size * (size - 1) / 2
  root = size - 1

  ! bcast
  iarr = 0
  if (rank == root) iarr = (/ 5, 6, 7, 8 /)
  call MPI_Bcast(iarr, 4, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  call check(all(iarr == (/ 5, 6, 7, 8 /)), 'bcast integer')
  darr = 0
  if (rank == 0) darr = (/ 1.5d0, -2.5d0, 1d100 /)
  call MPI_Bcast(darr, 3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call check(all(darr == (/ 1.5d0, -2.5d0, 1d100 /)), 'bcast double')

  ! reduce / allreduce with SUM and MAX on the three kinds
  ival = rank + 1
  call MPI_Reduce(ival, ires, 1, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
  if (rank == root) call check(ires == sum_ranks + size, 'reduce integer sum')
  call MPI_Allreduce(ival, ires, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(ires == size, 'allreduce integer max')
  rval = 0.5 * rank
  call MPI_Allreduce(rval, rres, 1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(abs(rres - 0.5 * sum_ranks) < 1e-5, 'allreduce real sum')
  call MPI_Allreduce(rval, rres, 1, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(rres == 0.5 * (size - 1), 'allreduce real max')
  dval = 0.25d0 * rank
  call MPI_Allreduce(dval, dres, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(abs(dres - 0.25d0 * sum_ranks) < 1d-12, 'allreduce double sum')
  call MPI_Reduce(dval, dres, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(dres == 0.25d0 * (size - 1), 'reduce double max')
  ! MPI_IN_PLACE
  iarr = (/ rank, 1, -rank, 2 * rank /)
  call MPI_Allreduce(MPI_IN_PLACE, iarr, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all(iarr == (/ sum_ranks, size, -sum_ranks, 2 * sum_ranks /)), 'allreduce in place')
  iarr = rank
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, iarr, 4, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    call check(all(iarr == size - 1), 'reduce in place')
  else
    call MPI_Reduce(iarr, iarr2, 4, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  end if
  ! complex sum
  cval = cmplx(real(rank), 1.0)
  call MPI_Allreduce(cval, cres, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(cres == cmplx(real(sum_ranks), real(size)), 'allreduce complex sum')
  ! complex MPI_PROD multiplies complex numbers: (1+i)**size, exact in REAL for these sizes
  cval = cmplx(1.0, 1.0)
  call MPI_Allreduce(cval, cres, 1, MPI_COMPLEX, MPI_PROD, MPI_COMM_WORLD, ierr)
  call check(cres == cval**size, 'allreduce complex prod')
  ! MPI defines no order on complex values: MPI_MAX is refused, not computed part by part
  call MPI_Comm_dup(MPI_COMM_WORLD, newcomm, ierr)
  call MPI_Comm_set_errhandler(newcomm, MPI_ERRORS_RETURN, ierr)
  call MPI_Allreduce(cval, cres, 1, MPI_COMPLEX, MPI_MAX, newcomm, ierr)
  call check(ierr == MPI_ERR_OP, 'allreduce complex max: MPI_ERR_OP')
  call MPI_Comm_free(newcomm, ierr)
  ! logical
  flag = rank == 0
  call MPI_Allreduce(MPI_IN_PLACE, flag, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(flag, 'allreduce logical lor')
  flag = rank == 0
  call MPI_Allreduce(MPI_IN_PLACE, flag, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(flag .eqv. (size == 1), 'allreduce logical land')

  ! gather / scatter and the v variants (rank r contributes r+1 values r*10+k)
  allocate(sendv(size + 1), recvv(size * (size + 1)), counts(size), displs(size))
  allocate(rcounts(size), rdispls(size))
  call MPI_Gather(rank * 3, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, size
      call check(recvv(i) == 3 * (i - 1), 'gather')
    end do
  end if
  do i = 1, size
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  do j = 1, rank + 1
    sendv(j) = rank * 10 + j
  end do
  recvv = -1
  call MPI_Gatherv(sendv, rank + 1, MPI_INTEGER, recvv, counts, displs, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  if (rank == root) then
    do i = 1, size
      do j = 1, i
        call check(recvv(displs(i) + j) == (i - 1) * 10 + j, 'gatherv')
      end do
    end do
  end if
  call MPI_Allgatherv(sendv, rank + 1, MPI_INTEGER, recvv, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, size
    do j = 1, i
      call check(recvv(displs(i) + j) == (i - 1) * 10 + j, 'allgatherv')
    end do
  end do
  call MPI_Allgather(rank + 5, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, size
    call check(recvv(i) == i + 4, 'allgather')
  end do
  if (rank == 0) then
    do i = 1, size
      recvv(i) = 7 * i
    end do
  end if
  call MPI_Scatter(recvv, 1, MPI_INTEGER, ival, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(ival == 7 * (rank + 1), 'scatter')
  if (rank == root) then
    do i = 1, size
      do j = 1, i
        recvv(displs(i) + j) = 1000 * i + j
      end do
    end do
  end if
  sendv = -1
  call MPI_Scatterv(recvv, counts, displs, MPI_INTEGER, sendv, rank + 1, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  do j = 1, rank + 1
    call check(sendv(j) == 1000 * (rank + 1) + j, 'scatterv')
  end do

  ! alltoall / alltoallv: rank r sends r*100+d to rank d (alltoallv: d+1 copies)
  deallocate(sendv, recvv)
  allocate(sendv(size * size), recvv(size * size))
  do i = 1, size
    sendv(i) = rank * 100 + (i - 1)
  end do
  call MPI_Alltoall(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, size
    call check(recvv(i) == (i - 1) * 100 + rank, 'alltoall')
  end do
  j = 0
  do i = 1, size
    counts(i) = i
    displs(i) = j
    sendv(j + 1:j + i) = rank * 100 + (i - 1)
    j = j + i
    rcounts(i) = rank + 1
    rdispls(i) = (i - 1) * (rank + 1)
  end do
  recvv = -1
  call MPI_Alltoallv(sendv, counts, displs, MPI_INTEGER, recvv, rcounts, rdispls, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  do i = 1, size
    do j = 1, rank + 1
      call check(recvv(rdispls(i) + j) == (i - 1) * 100 + rank, 'alltoallv')
    end do
  end do

  ! reduce_scatter (one element each), scan, exscan
  do i = 1, size
    sendv(i) = rank + i
    counts(i) = 1
  end do
  call MPI_Reduce_scatter(sendv, ival, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ival == sum_ranks + size * (rank + 1), 'reduce_scatter')
  call MPI_Scan(rank + 1, ival, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ival == (rank + 1) * (rank + 2) / 2, 'scan')
  ival = -99
  call MPI_Exscan(rank + 1, ival, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call check(ival == rank * (rank + 1) / 2, 'exscan')

  ! non-blocking collectives
  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(1), ierr)
  iarr = 0
  if (rank == 0) iarr = 42
  call MPI_Ibcast(iarr, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(2), ierr)
  dval = rank
  call MPI_Iallreduce(dval, dres, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(all(reqs == MPI_REQUEST_NULL), 'non-blocking collectives: handles reset')
  call check(all(iarr == 42), 'ibcast')
  call check(dres == dble(sum_ranks), 'iallreduce')

  ! igatherv to the last rank, iscatter from rank 0
  deallocate(sendv, recvv)
  allocate(sendv(size + 1), recvv(size * (size + 1)))
  do i = 1, size
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  sendv(1:rank + 1) = rank
  recvv = -1
  call MPI_Igatherv(sendv, rank + 1, MPI_INTEGER, recvv, counts, displs, MPI_INTEGER, root, MPI_COMM_WORLD, &
                    reqs(1), ierr)
  ! (its own send buffer: sendv belongs to the pending igatherv)
  do i = 1, size
    rcounts(i) = 3 * i
  end do
  call MPI_Iscatter(rcounts, 1, MPI_INTEGER, ival, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ival == 3 * (rank + 1), 'iscatter')
  if (rank == root) then
    do i = 1, size
      call check(all(recvv(displs(i) + 1:displs(i) + i) == i - 1), 'igatherv')
    end do
  end if

  ! a user-defined op (Fortran subroutine), commutative
  call MPI_Op_create(absmax, .true., myop, ierr)
  ival = -(rank + 1)
  if (mod(rank, 2) == 1) ival = rank + 1
  ! (one rank: the op is never applied, the result is the value itself)
  j = size
  if (size == 1) j = ival
  call MPI_Allreduce(ival, ires, 1, MPI_INTEGER, myop, MPI_COMM_WORLD, ierr)
  call check(ires == j, 'user op allreduce')
  call MPI_Ireduce(ival, ires, 1, MPI_INTEGER, myop, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (rank == 0) call check(ires == j, 'user op ireduce')
  call MPI_Op_free(myop, ierr)
  call check(myop == MPI_OP_NULL, 'op_free resets the handle')

  ! comm_split: even and odd ranks, ordered by descending rank
  color = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, -rank, newcomm, ierr)
  call MPI_Comm_rank(newcomm, nrank, ierr)
  call MPI_Comm_size(newcomm, nsize, ierr)
  call check(nsize == (size - color + 1) / 2, 'comm_split size')
  call check(nrank == nsize - 1 - rank / 2, 'comm_split rank')
  call MPI_Allreduce(rank, ival, 1, MPI_INTEGER, MPI_SUM, newcomm, ierr)
  j = 0
  do i = color, size - 1, 2
    j = j + i
  end do
  call check(ival == j, 'allreduce on the split communicator')
  call MPI_Comm_free(newcomm, ierr)
  call check(newcomm == MPI_COMM_NULL, 'comm_free resets the handle')
  call MPI_Comm_split(MPI_COMM_WORLD, merge(MPI_UNDEFINED, 0, rank == 0), 0, newcomm, ierr)
  if (rank == 0) call check(newcomm == MPI_COMM_NULL, 'comm_split MPI_UNDEFINED gives MPI_COMM_NULL')
  if (rank /= 0) call MPI_Comm_free(newcomm, ierr)

  ! The main program's allocatables are not freed at its end (LeakSanitizer would say so).
  deallocate(sendv, recvv, counts, displs, rcounts, rdispls)
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail == 0 .and. rank == 0) write(*, '(A,I0,A)') 'fortran_coll: OK on ', size, ' ranks'
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write(*, '(A,I0,A,A)') 'fortran_coll: rank ', rank, ': FAILED: ', what
      nfail = nfail + 1
    end if
  end subroutine check
end program fortran_coll
