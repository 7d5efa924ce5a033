! Point-to-point from Fortran (use mpi): blocking and non-blocking, status fields, MPI_Get_count,
! MPI_ANY_SOURCE, probe, sendrecv, requests through the Fortran handle table, MPI_STATUS_IGNORE.
! Prints "fortran_p2p: OK on N ranks" only when every check passed.
program fortran_p2p
  use mpi
  implicit none
  integer :: rank, size, ierr, i, next, prev, count, idx, nfail
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4)
  integer :: reqs(4), req, anycomm, message
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  integer :: ibuf(10), ibuf2(10)
  double precision :: dbuf(5), dbuf2(5)
  real :: rbuf(3)
  logical :: flag

  nfail = 0
  call MPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Init ierror')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  next = mod(rank + 1, size)
  prev = mod(rank - 1 + size, size)

  ! blocking ring: INTEGER and DOUBLE PRECISION, status fields and counts
  do i = 1, 10
    ibuf(i) = 100 * rank + i
  end do
  if (size > 1) then
    if (mod(rank, 2) == 0) then
      call MPI_Send(ibuf, 10, MPI_INTEGER, next, 7, MPI_COMM_WORLD, ierr)
      call MPI_Recv(ibuf2, 10, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_Recv(ibuf2, 10, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, status, ierr)
      call MPI_Send(ibuf, 10, MPI_INTEGER, next, 7, MPI_COMM_WORLD, ierr)
    end if
    call check(status(MPI_SOURCE) == prev, 'ring: status(MPI_SOURCE)')
    call check(status(MPI_TAG) == 7, 'ring: status(MPI_TAG)')
    call check(status(MPI_ERROR) == MPI_SUCCESS, 'ring: status(MPI_ERROR)')
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call check(count == 10, 'ring: MPI_Get_count')
    do i = 1, 10
      call check(ibuf2(i) == 100 * prev + i, 'ring: data')
    end do
  end if

  ! short message into a larger buffer: count from the status; MPI_ANY_SOURCE / MPI_ANY_TAG
  ! (on a communicator of their own: the later phases' messages must not match them)
  call MPI_Comm_dup(MPI_COMM_WORLD, anycomm, ierr)
  if (size > 1) then
    if (rank == 0) then
      do i = 1, size - 1
        call MPI_Recv(dbuf, 5, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, anycomm, status, ierr)
        call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
        call check(count == 3, 'any_source: count')
        call check(status(MPI_TAG) == 20 + status(MPI_SOURCE), 'any_source: tag')
        call check(dbuf(1) == 0.5d0 * status(MPI_SOURCE), 'any_source: data')
      end do
    else
      dbuf = 0.5d0 * rank
      call MPI_Send(dbuf, 3, MPI_DOUBLE_PRECISION, 0, 20 + rank, anycomm, ierr)
    end if
  end if
  call MPI_Comm_free(anycomm, ierr)

  ! non-blocking: irecv + isend, waitall with statuses; handles are reset to MPI_REQUEST_NULL
  ibuf = rank
  call MPI_Irecv(ibuf2, 10, MPI_INTEGER, prev, 30, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(dbuf2, 5, MPI_DOUBLE_PRECISION, next, 31, MPI_COMM_WORLD, reqs(2), ierr)
  dbuf = 2.0d0 * rank
  call MPI_Isend(ibuf, 10, MPI_INTEGER, next, 30, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Isend(dbuf, 5, MPI_DOUBLE_PRECISION, prev, 31, MPI_COMM_WORLD, reqs(4), ierr)
  call check(reqs(1) /= MPI_REQUEST_NULL .and. reqs(3) /= MPI_REQUEST_NULL, 'isend: handles set')
  call check(reqs(1) /= reqs(2) .and. reqs(3) /= reqs(4), 'isend: distinct handles')
  call MPI_Waitall(4, reqs, statuses, ierr)
  call check(ierr == MPI_SUCCESS, 'waitall ierror')
  do i = 1, 4
    call check(reqs(i) == MPI_REQUEST_NULL, 'waitall: handle reset to MPI_REQUEST_NULL')
  end do
  call check(statuses(MPI_SOURCE, 1) == prev .and. statuses(MPI_TAG, 1) == 30, 'waitall: status 1')
  call check(statuses(MPI_SOURCE, 2) == next .and. statuses(MPI_TAG, 2) == 31, 'waitall: status 2')
  call check(all(ibuf2 == prev), 'irecv: integer data')
  call check(all(dbuf2 == 2.0d0 * next), 'irecv: double data')

  ! waitany (1-based index), test loop, MPI_STATUS_IGNORE must not be written
  MPI_STATUS_IGNORE(1) = -12345
  rbuf = real(rank)
  call MPI_Irecv(ibuf2, 1, MPI_INTEGER, prev, 40, MPI_COMM_WORLD, reqs(1), ierr)
  reqs(2) = MPI_REQUEST_NULL
  call MPI_Isend(rank, 1, MPI_INTEGER, next, 40, MPI_COMM_WORLD, req, ierr)
  call MPI_Waitany(2, reqs, idx, status, ierr)
  call check(idx == 1, 'waitany: 1-based index')
  call check(reqs(1) == MPI_REQUEST_NULL, 'waitany: handle reset')
  call check(ibuf2(1) == prev, 'waitany: data')
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
  end do
  call check(req == MPI_REQUEST_NULL, 'test: handle reset')
  call check(MPI_STATUS_IGNORE(1) == -12345, 'MPI_STATUS_IGNORE was written to')
  call MPI_Waitany(2, reqs, idx, status, ierr)
  call check(idx == MPI_UNDEFINED, 'waitany on null requests: MPI_UNDEFINED')

  ! probe / iprobe, then receive what was probed; ssend
  if (size > 1) then
    if (rank == 1) then
      ibuf = 77
      call MPI_Ssend(ibuf, 4, MPI_INTEGER, 0, 50, MPI_COMM_WORLD, ierr)
    else if (rank == 0) then
      call MPI_Probe(1, 50, MPI_COMM_WORLD, status, ierr)
      call MPI_Get_count(status, MPI_INTEGER, count, ierr)
      call check(count == 4 .and. status(MPI_SOURCE) == 1, 'probe: count and source')
      call MPI_Iprobe(1, 50, MPI_COMM_WORLD, flag, status, ierr)
      call check(flag, 'iprobe: a probed message is still there')
      call MPI_Recv(ibuf2, count, MPI_INTEGER, 1, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check(all(ibuf2(1:4) == 77), 'ssend: data')
      call MPI_Iprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
      call check(.not. flag, 'iprobe: nothing left')
    end if
  end if

  ! sendrecv and sendrecv_replace around the ring
  ibuf = rank
  call MPI_Sendrecv(ibuf, 10, MPI_INTEGER, next, 60, ibuf2, 10, MPI_INTEGER, prev, 60, MPI_COMM_WORLD, status, ierr)
  call check(all(ibuf2 == prev) .and. status(MPI_SOURCE) == prev, 'sendrecv')
  dbuf = rank + 0.25d0
  call MPI_Sendrecv_replace(dbuf, 5, MPI_DOUBLE_PRECISION, next, 61, prev, 61, MPI_COMM_WORLD, status, ierr)
  call check(all(dbuf == prev + 0.25d0), 'sendrecv_replace')

  ! persistent requests keep their handle; request_free resets it
  call MPI_Recv_init(ibuf2, 1, MPI_INTEGER, prev, 70, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send_init(rank, 1, MPI_INTEGER, next, 70, MPI_COMM_WORLD, reqs(2), ierr)
  do i = 1, 3
    call MPI_Startall(2, reqs, ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(reqs(1) /= MPI_REQUEST_NULL, 'persistent: handle kept after wait')
    call check(ibuf2(1) == prev, 'persistent: data')
  end do
  call MPI_Request_free(reqs(1), ierr)
  call MPI_Request_free(reqs(2), ierr)
  call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'request_free: handle reset')

  ! matched probe and receive; request_get_status does not complete the request
  call MPI_Isend(rank + 1000, 1, MPI_INTEGER, next, 80, MPI_COMM_WORLD, req, ierr)
  call MPI_Mprobe(prev, 80, MPI_COMM_WORLD, message, status, ierr)
  call check(status(MPI_SOURCE) == prev .and. message /= MPI_MESSAGE_NULL, 'mprobe')
  call MPI_Mrecv(ibuf2, 1, MPI_INTEGER, message, status, ierr)
  call check(ibuf2(1) == prev + 1000 .and. message == MPI_MESSAGE_NULL, 'mrecv')
  flag = .false.
  do while (.not. flag)
    call MPI_Request_get_status(req, flag, status, ierr)
  end do
  call check(req /= MPI_REQUEST_NULL, 'request_get_status keeps the request')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)

  ! a predefined attribute: the value itself, in an INTEGER(KIND=MPI_ADDRESS_KIND)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(flag .and. tag_ub >= 32767, 'comm_get_attr MPI_TAG_UB')

  ! a handle that names no request: MPI_ERR_REQUEST (MPI_ERRORS_RETURN on MPI_COMM_WORLD here)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  req = 123456
  call MPI_Wait(req, status, ierr)
  call check(ierr == MPI_ERR_REQUEST, 'wait on a bad handle: MPI_ERR_REQUEST')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)

  ! MPI_PROC_NULL: completes at once, status source MPI_PROC_NULL
  call MPI_Recv(ibuf2, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, status, ierr)
  call check(status(MPI_SOURCE) == MPI_PROC_NULL, 'MPI_PROC_NULL: status source')

  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail == 0 .and. rank == 0) write(*, '(A,I0,A)') 'fortran_p2p: OK on ', size, ' ranks'
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write(*, '(A,I0,A,A)') 'fortran_p2p: rank ', rank, ': FAILED: ', what
      nfail = nfail + 1
    end if
  end subroutine check
end program fortran_p2p
