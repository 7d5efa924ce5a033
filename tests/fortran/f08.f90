! The mpi_f08 module: TYPE(MPI_Comm) and the other handle types with == and /=, TYPE(MPI_Status)
! with its fields, optional IERROR (left out in most calls), LOGICAL flags, CHARACTER names,
! MPI_IN_PLACE and MPI_STATUS(ES)_IGNORE; point-to-point (ring, isend/irecv/waitall with
! statuses, iprobe, test, get_count, sendrecv), collectives (bcast, allreduce in place, reduce,
! alltoall, gatherv, scan, iallreduce), a user-defined op taking TYPE(C_PTR) operands, a derived
! datatype, comm_split/free, a Cartesian communicator with LOGICAL periods, MPI_Win_allocate
! with a TYPE(C_PTR) base, put under fences, fetch_and_op under a lock; persistent requests,
! matched probe, waitsome, info, igatherv, iscan, an indexed type, PSCW on a dynamic window.
! Every value is compared with what it must be. Prints "fortran_f08: OK on N ranks" only when every check passed.
module f08_ops
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
contains
  ! "the left operand": inoutvec(i) = invec(i) (associative, not commutative): the result is
  ! the lowest rank's value exactly when operands combine in rank order
  subroutine take_left(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    if (datatype /= MPI_INTEGER) return
    call c_f_pointer(invec, a, (/ len /))
    call c_f_pointer(inoutvec, b, (/ len /))
    b = a
  end subroutine take_left
end module f08_ops

program fortran_f08
  use mpi_f08
  use f08_ops
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: rank, size, ierr, nfail, right, left, i, value, got, count, provided, flag_count
  integer :: ivec(8), jvec(8), k
  integer, allocatable :: sendv(:), recvv(:), counts(:), displs(:)
  type(MPI_Status) :: status, statuses(2)
  type(MPI_Request) :: reqs(2), req
  type(MPI_Comm) :: dup, half, cart
  type(MPI_Datatype) :: stride2
  type(MPI_Op) :: op
  type(MPI_Win) :: win
  type(c_ptr) :: base
  integer, pointer :: cells(:)
  integer(kind=MPI_ADDRESS_KIND) :: disp, bytes
  logical :: flag
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=MPI_MAX_OBJECT_NAME) :: name
  double precision :: t0, t1, tick
  integer :: dims(1), src, dst
  type(MPI_Request) :: preqs(2)
  integer, asynchronous :: pgot, pvalue
  type(MPI_Message) :: message
  type(MPI_Info) :: info
  type(MPI_Group) :: wgroup, rootgroup, othersgroup
  integer :: indices(2)
  character(len=MPI_MAX_INFO_VAL) :: infoval

  nfail = 0
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
  call MPI_Initialized(flag)
  call check(flag, 'initialized')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call check(ierr == MPI_SUCCESS, 'optional ierror present')
  call check(provided == MPI_THREAD_FUNNELED, 'init_thread provided')
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  t0 = MPI_Wtime()

  ! handles and operators
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(dup /= MPI_COMM_WORLD .and. .not. (dup == MPI_COMM_NULL), 'dup is a new communicator')
  call MPI_Comm_set_name(dup, ' dup of world ')
  call MPI_Comm_get_name(dup, name, k)
  call check(name == 'dup of world' .and. k == 12, 'comm name')
  call MPI_Get_processor_name(host, k)
  call check(k > 0 .and. len_trim(host) == k, 'processor name')

  ! ring with a status
  value = -1
  if (size > 1) then
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 7, value, 1, MPI_INTEGER, left, 7, dup, status)
    call check(value == left .and. status%MPI_SOURCE == left .and. status%MPI_TAG == 7, 'sendrecv status')
    call MPI_Get_count(status, MPI_INTEGER, count)
    call check(count == 1, 'get_count')
  end if

  ! isend/irecv/waitall with statuses, iprobe, test
  ivec = rank
  jvec = -1
  call MPI_Irecv(jvec, 8, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(ivec, 8, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, statuses)
  call check(all(jvec == left) .and. statuses(1)%MPI_SOURCE == left, 'isend/irecv/waitall')
  call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'requests reset')
  call MPI_Isend(ivec, 1, MPI_INTEGER, rank, 4, MPI_COMM_WORLD, req)
  flag = .false.
  flag_count = 0
  do while (.not. flag .and. flag_count < 1000000)
    call MPI_Iprobe(rank, 4, MPI_COMM_WORLD, flag, status)
    flag_count = flag_count + 1
  end do
  call check(flag .and. status%MPI_TAG == 4, 'iprobe')
  call MPI_Recv(got, 1, MPI_INTEGER, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(got == rank, 'self message')
  call MPI_Irecv(got, 1, MPI_INTEGER, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, req)
  call MPI_Test(req, flag, status)
  call check(.not. flag, 'test of an unmatched receive')
  call MPI_Send(rank, 1, MPI_INTEGER, rank, 99, MPI_COMM_WORLD)
  call MPI_Wait(req, status)
  call check(got == rank .and. status%MPI_SOURCE == rank, 'wait after test')

  ! collectives
  value = 0
  if (rank == 0) value = 4242
  call MPI_Bcast(value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check(value == 4242, 'bcast')
  value = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(value == size * (size + 1) / 2, 'allreduce in place')
  call MPI_Reduce(rank, got, 1, MPI_INTEGER, MPI_MAX, size - 1, MPI_COMM_WORLD)
  if (rank == size - 1) call check(got == size - 1, 'reduce max')
  allocate(sendv(size), recvv(size), counts(size), displs(size))
  sendv = (/ (rank * 100 + i, i = 0, size - 1) /)
  call MPI_Alltoall(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, MPI_COMM_WORLD)
  call check(all(recvv == (/ (i * 100 + rank, i = 0, size - 1) /)), 'alltoall')
  counts = 1
  displs = (/ (i, i = 0, size - 1) /)
  recvv = -1
  call MPI_Gatherv(rank * 3, 1, MPI_INTEGER, recvv, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) call check(all(recvv == (/ (i * 3, i = 0, size - 1) /)), 'gatherv')
  call MPI_Scan(1, got, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(got == rank + 1, 'scan')
  call MPI_Iallreduce(rank, got, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(got == size - 1, 'iallreduce')

  ! a user-defined, non-commutative op: operands combine in rank order
  call MPI_Op_create(take_left, .false., op)
  value = rank + 5
  call MPI_Allreduce(value, got, 1, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(got == 5, 'user op in rank order (allreduce)')
  call MPI_Iallreduce(value, got, 1, MPI_INTEGER, op, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(got == 5, 'user op in rank order (iallreduce)')
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'op_free')

  ! a derived datatype: every other integer
  call MPI_Type_vector(4, 1, 2, MPI_INTEGER, stride2)
  call MPI_Type_commit(stride2)
  ivec = (/ (rank * 10 + i, i = 1, 8) /)
  jvec = -1
  call MPI_Sendrecv(ivec, 1, stride2, right, 5, jvec, 4, MPI_INTEGER, left, 5, MPI_COMM_WORLD, status)
  call check(all(jvec(1:4) == (/ left * 10 + 1, left * 10 + 3, left * 10 + 5, left * 10 + 7 /)) .and. &
             all(jvec(5:8) == -1), 'vector type')
  call MPI_Type_free(stride2)
  call check(stride2 == MPI_DATATYPE_NULL, 'type_free')

  ! communicators
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Comm_size(half, k)
  call check(k == (size + 1 - mod(rank, 2)) / 2, 'split size')
  call MPI_Comm_free(half)
  call check(half == MPI_COMM_NULL, 'comm_free')
  dims(1) = size
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, (/ .true. /), .false., cart)
  call MPI_Cart_shift(cart, 0, 1, src, dst)
  call check(src == left .and. dst == right, 'periodic cart shift')
  call MPI_Comm_free(cart)

  ! one-sided: a window allocated with a TYPE(C_PTR) base
  bytes = 2 * 4
  call MPI_Win_allocate(bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call c_f_pointer(base, cells, (/ 2 /))
  cells = 0
  call MPI_Win_fence(0, win)
  disp = 0
  call MPI_Put(rank + 1, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(cells(1) == left + 1, 'put under fence')
  disp = 1
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win)
  call MPI_Fetch_and_op(1, got, MPI_INTEGER, 0, disp, MPI_SUM, win)
  call MPI_Win_unlock(0, win)
  call MPI_Allreduce(got, k, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(k == size * (size - 1) / 2, 'fetch_and_op old values')
  call MPI_Win_free(win)
  call check(win == MPI_WIN_NULL, 'win_free')

  ! Persistent requests: a ring send and receive started twice. Their buffers are ASYNCHRONOUS
  ! (MPI-3.1 17.1.17): MPI reads and writes them during MPI_Startall / MPI_Waitall, which do
  ! not name them, so without it the compiler may keep them in registers across those calls.
  call MPI_Recv_init(pgot, 1, MPI_INTEGER, left, 21, MPI_COMM_WORLD, preqs(1))
  call MPI_Send_init(pvalue, 1, MPI_INTEGER, right, 21, MPI_COMM_WORLD, preqs(2))
  do k = 1, 2
    pvalue = rank * 10 + k
    pgot = -1
    call MPI_Startall(2, preqs)
    call MPI_Waitall(2, preqs, MPI_STATUSES_IGNORE)
    call check(pgot == left * 10 + k, 'persistent send/recv, started twice')
  end do
  call MPI_Request_free(preqs(1))
  call MPI_Request_free(preqs(2))
  call check(preqs(1) == MPI_REQUEST_NULL, 'request_free of a persistent request')

  ! Matched probe: the message probed is the one received.
  call MPI_Send(rank + 500, 1, MPI_INTEGER, right, 22, MPI_COMM_WORLD)
  call MPI_Mprobe(left, 22, MPI_COMM_WORLD, message, status)
  call MPI_Get_elements(status, MPI_INTEGER, count)
  call MPI_Mrecv(got, 1, MPI_INTEGER, message, status)
  call check(count == 1 .and. got == left + 500 .and. message == MPI_MESSAGE_NULL .and. &
             status%MPI_SOURCE == left, 'mprobe / mrecv')

  ! Waitsome over a ring exchange; info set/get/delete.
  call MPI_Irecv(got, 1, MPI_INTEGER, left, 23, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 23, MPI_COMM_WORLD, reqs(2))
  flag_count = 0
  do while (flag_count < 2)
    call MPI_Waitsome(2, reqs, count, indices, statuses)
    flag_count = flag_count + count
  end do
  call check(got == left .and. all(reqs == MPI_REQUEST_NULL), 'waitsome')
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'xmsg_key', 'f08 value')
  call MPI_Info_get(info, 'xmsg_key', MPI_MAX_INFO_VAL, infoval, flag)
  call MPI_Info_get_nkeys(info, k)
  call check(flag .and. infoval == 'f08 value' .and. k == 1, 'info set/get')
  call MPI_Info_delete(info, 'xmsg_key')
  call MPI_Info_get(info, 'xmsg_key', MPI_MAX_INFO_VAL, infoval, flag)
  call check(.not. flag, 'info delete')
  call MPI_Info_free(info)

  ! Non-blocking gatherv and scan; an indexed type's true extent.
  counts = 1
  displs = (/ (i - 1, i = 1, size) /)
  recvv = -1
  call MPI_Igatherv(rank * 3, 1, MPI_INTEGER, recvv, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (rank == 0) call check(all(recvv(1:size) == (/ (3 * (i - 1), i = 1, size) /)), 'igatherv')
  call MPI_Iscan(1, got, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(got == rank + 1, 'iscan')
  call MPI_Type_indexed(2, (/ 1, 2 /), (/ 1, 5 /), MPI_INTEGER, stride2)
  call MPI_Type_get_true_extent(stride2, disp, bytes)
  call check(disp == 4 .and. bytes == 24, 'indexed true extent')
  call MPI_Type_free(stride2)

  ! PSCW on a dynamic window: everyone puts its rank into rank 0's attached cell.
  call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win)
  ivec = 0
  if (rank == 0) then
    bytes = 4 * size
    call MPI_Win_attach(win, ivec, bytes)
  end if
  call MPI_Get_address(ivec, disp)
  call MPI_Bcast(disp, 1, MPI_AINT, 0, MPI_COMM_WORLD)
  call MPI_Win_get_group(win, wgroup)
  call MPI_Group_incl(wgroup, 1, (/ 0 /), rootgroup)
  call MPI_Group_excl(wgroup, 1, (/ 0 /), othersgroup)
  if (rank == 0) then
    if (size > 1) call MPI_Win_post(othersgroup, 0, win)
    if (size > 1) call MPI_Win_wait(win)
    call check(sum(ivec) == size * (size - 1) / 2, 'PSCW accumulates into an attached array')
    call MPI_Win_detach(win, ivec)
  else
    call MPI_Win_start(rootgroup, 0, win)
    call MPI_Accumulate(rank, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win)
    call MPI_Win_complete(win)
  end if
  call MPI_Group_free(rootgroup)
  call MPI_Group_free(othersgroup)
  call MPI_Group_free(wgroup)
  call MPI_Win_free(win)

  t1 = MPI_Wtime()
  tick = MPI_Wtick()
  call check(t1 >= t0 .and. tick > 0d0, 'wtime')
  call MPI_Comm_free(dup)
  ! The main program's allocatables are not freed at its end (LeakSanitizer would say so).
  deallocate(sendv, recvv, counts, displs)
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (nfail == 0 .and. rank == 0) print '(a, i0, a)', 'fortran_f08: OK on ', size, ' ranks'
  call MPI_Finalize()
  if (nfail /= 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      nfail = nfail + 1
      print '(a, i0, 2a)', 'fortran_f08: rank ', rank, ' FAILED: ', what
    end if
  end subroutine check
end program fortran_f08
