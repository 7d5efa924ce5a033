! One-sided communication from Fortran (use mpi): MPI_Win_create with put and get under fences,
! accumulate (INTEGER sum, DOUBLE PRECISION into a strided target type), MPI_Win_allocate
! (the base address turned into a Fortran pointer) with fetch_and_op and compare_and_swap under
! exclusive locks, get_accumulate (MPI_NO_OP, MPI_REPLACE), request-based MPI_Rput/MPI_Rget in a
! lock_all epoch with flush, post/start/complete/wait, MPI_Win_allocate_shared with
! MPI_Win_shared_query (loads and stores straight into a neighbour's memory), a dynamic window
! (attach, the address sent with MPI_Bcast), window attributes and names, and an error that
! MPI_ERRORS_RETURN hands back. Every value is compared with what it must be. Prints
! "fortran_rma: OK on N ranks" only when every check passed.
!
! The window memory lives in a module: a remote put changes it behind the compiler's back, and a
! module variable is one the compiler must reload after any external call (a local array not
! passed to MPI_WIN_FENCE could stay in registers across it).
module rma_memory
  implicit none
  integer, allocatable, target :: cells(:)
  double precision, allocatable :: reals(:)
  integer :: dyn(4)
end module rma_memory

program fortran_rma
  use mpi
  use rma_memory
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: rank, size, ierr, nfail, right, left, i, win, win2, win3, win4, win5, win6
  integer :: got, old, winners, winner_rank, res, one, minus_one, name_len, node, nrank, nsize
  integer :: req, reqs(2), group, world_group, strided, flavor_ok
  integer(kind=MPI_ADDRESS_KIND) :: bytes, disp, baseptr, attr, qsize, addr
  integer :: qunit, value, cls
  double precision :: ones(2)
  logical :: flag
  integer, pointer :: counter(:), shared_mine(:), shared_right(:)
  double precision :: dsrc(3)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  type(c_ptr) :: cp, cbase
  integer :: sizeof_int

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  sizeof_int = 4

  ! ---- MPI_Win_create: cells(0:size-1) are read by gets, cells(size:2*size-1) written by puts
  allocate(cells(0:2 * size - 1))
  cells(0:size - 1) = rank * 10 + (/ (i, i = 0, size - 1) /)
  cells(size:) = -1
  bytes = 2 * size * sizeof_int
  call MPI_Win_create(cells, bytes, sizeof_int, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'win_create')
  call MPI_Win_fence(0, win, ierr)
  ! put my rank + 100 into the right neighbour's slot size + rank
  disp = size + rank
  value = rank + 100
  call MPI_Put(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  ! get the right neighbour's cells(rank)
  disp = rank
  call MPI_Get(got, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(got == right * 10 + rank, 'get under fence')
  call check(cells(size + left) == left + 100, 'put under fence')
  do i = 0, size - 1
    if (i /= left) call check(cells(size + i) == -1, 'put touched only its slot')
  end do

  ! attributes and name
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag, ierr)
  call check(flag .and. attr == bytes, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
  call check(flag .and. attr == sizeof_int, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, attr, flag, ierr)
  call check(flag .and. attr == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
  call MPI_Win_get_attr(win, MPI_WIN_BASE, attr, flag, ierr)
  call MPI_Get_address(cells, addr, ierr)
  call check(flag .and. attr == addr, 'MPI_WIN_BASE is the array''s address')
  call MPI_Win_set_name(win, '  cells window  ', ierr)
  call MPI_Win_get_name(win, name, name_len, ierr)
  call check(name == 'cells window' .and. name_len == 12, 'win name')
  call MPI_Win_get_group(win, group, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  call MPI_Group_compare(group, world_group, res, ierr)
  call check(res == MPI_IDENT, 'win_get_group')
  call MPI_Group_free(group, ierr)

  ! accumulate: every rank adds rank + 1 to rank 0's cells(size)
  call MPI_Win_fence(0, win, ierr)
  disp = size
  if (rank == 0) cells(size) = 0
  call MPI_Win_fence(0, win, ierr)
  value = rank + 1
  call MPI_Accumulate(value, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  if (rank == 0) call check(cells(size) == size * (size + 1) / 2, 'accumulate sum')

  ! post/start/complete/wait: I expose to my left neighbour, access my right one
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
  cells(size:) = -1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (size > 1) then
    call MPI_Group_incl(world_group, 1, (/ left /), group, ierr)
    call MPI_Win_post(group, 0, win, ierr)
    call MPI_Group_free(group, ierr)
    call MPI_Group_incl(world_group, 1, (/ right /), group, ierr)
    call MPI_Win_start(group, 0, win, ierr)
    disp = size
    value = rank + 7
    call MPI_Put(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_complete(win, ierr)
    call MPI_Win_wait(win, ierr)
    call MPI_Group_free(group, ierr)
    call check(cells(size) == left + 7, 'post/start/complete/wait')
  end if
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'win_free sets MPI_WIN_NULL')

  ! ---- MPI_Win_allocate: fetch_and_op and compare_and_swap on rank 0's counter(1:2)
  bytes = 2 * sizeof_int
  call MPI_Win_allocate(bytes, sizeof_int, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win2, ierr)
  cp = transfer(baseptr, cp)
  call c_f_pointer(cp, counter, (/ 2 /))
  counter(1) = 0
  counter(2) = -1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  one = 1
  disp = 0
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win2, ierr)
  call MPI_Fetch_and_op(one, old, MPI_INTEGER, 0, disp, MPI_SUM, win2, ierr)
  call MPI_Win_unlock(0, win2, ierr)
  call check(old >= 0 .and. old < size, 'fetch_and_op old value in range')
  ! the old values are a permutation of 0..size-1: their sum says so
  call MPI_Allreduce(old, res, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(res == size * (size - 1) / 2, 'fetch_and_op gave every rank its own value')
  minus_one = -1
  disp = 1
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win2, ierr)
  call MPI_Compare_and_swap(rank, minus_one, old, MPI_INTEGER, 0, disp, win2, ierr)
  call MPI_Win_unlock(0, win2, ierr)
  winners = 0
  if (old == -1) winners = 1
  call MPI_Allreduce(winners, res, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(res == 1, 'compare_and_swap has exactly one winner')
  winner_rank = -1
  if (old == -1) winner_rank = rank
  call MPI_Allreduce(winner_rank, res, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(counter(1) == size .and. counter(2) == res, 'counter after the atomics')
  ! get_accumulate: MPI_NO_OP reads, MPI_REPLACE swaps
  disp = 0
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win2, ierr)
  call MPI_Get_accumulate(one, 1, MPI_INTEGER, got, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_NO_OP, &
                          win2, ierr)
  call MPI_Win_unlock(0, win2, ierr)
  call check(got == size, 'get_accumulate MPI_NO_OP')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == size - 1) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win2, ierr)
    value = 12345
    call MPI_Get_accumulate(value, 1, MPI_INTEGER, got, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_REPLACE, &
                            win2, ierr)
    call MPI_Win_unlock(0, win2, ierr)
    call check(got == size, 'get_accumulate MPI_REPLACE returns the old value')
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(counter(1) == 12345, 'get_accumulate MPI_REPLACE stored')
  call MPI_Win_get_attr(win2, MPI_WIN_CREATE_FLAVOR, attr, flag, ierr)
  call check(flag .and. attr == MPI_WIN_FLAVOR_ALLOCATE, 'allocate flavor')

  ! ---- request-based operations in a lock_all epoch, flush
  call MPI_Win_free(win2, ierr)
  allocate(reals(0:5))
  reals = 0d0
  bytes = 6 * 8
  call MPI_Win_create(reals, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win3, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock_all(0, win3, ierr)
  dsrc = (/ 1.5d0, 2.5d0, rank + 0.25d0 /)
  disp = 3
  call MPI_Rput(dsrc, 3, MPI_DOUBLE_PRECISION, right, disp, 3, MPI_DOUBLE_PRECISION, win3, reqs(1), ierr)
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(reqs(1) == MPI_REQUEST_NULL, 'rput request completed')
  call MPI_Win_flush(right, win3, ierr)
  call MPI_Win_unlock_all(win3, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call check(reals(3) == 1.5d0 .and. reals(4) == 2.5d0 .and. reals(5) == left + 0.25d0, 'rput data')
  call MPI_Win_lock_all(0, win3, ierr)
  dsrc = 0
  call MPI_Rget(dsrc, 3, MPI_DOUBLE_PRECISION, left, disp, 3, MPI_DOUBLE_PRECISION, win3, req, ierr)
  reqs(2) = req
  call MPI_Waitall(1, reqs(2:2), MPI_STATUSES_IGNORE, ierr)
  call check(reqs(2) == MPI_REQUEST_NULL, 'rget request completed')
  call MPI_Win_unlock_all(win3, ierr)
  ! left's reals(3:5) were written by left's left neighbour
  call check(dsrc(1) == 1.5d0 .and. dsrc(3) == mod(left + size - 1, size) + 0.25d0, 'rget data')
  ! accumulate into a strided target type: reals(0), reals(2) += 1 from every rank
  call MPI_Type_vector(2, 1, 2, MPI_DOUBLE_PRECISION, strided, ierr)
  call MPI_Type_commit(strided, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  disp = 0
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win3, ierr)
  ones = 1d0
  call MPI_Accumulate(ones, 2, MPI_DOUBLE_PRECISION, 0, disp, 1, strided, MPI_SUM, win3, ierr)
  call MPI_Win_unlock(0, win3, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(reals(0) == size .and. reals(1) == 0d0 .and. reals(2) == size, &
                            'accumulate into a strided target type')
  call MPI_Type_free(strided, ierr)
  call MPI_Win_free(win3, ierr)

  ! ---- MPI_Win_allocate_shared on the node: stores into my part, loads from my neighbour's
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_rank(node, nrank, ierr)
  call MPI_Comm_size(node, nsize, ierr)
  bytes = 4 * sizeof_int
  call MPI_Win_allocate_shared(bytes, sizeof_int, MPI_INFO_NULL, node, baseptr, win4, ierr)
  cp = transfer(baseptr, cp)
  call c_f_pointer(cp, shared_mine, (/ 4 /))
  call MPI_Win_lock_all(0, win4, ierr)
  shared_mine = (/ (nrank * 100 + i, i = 1, 4) /)
  call MPI_Win_sync(win4, ierr)
  call MPI_Barrier(node, ierr)
  call MPI_Win_sync(win4, ierr)
  call MPI_Win_shared_query(win4, mod(nrank + 1, nsize), qsize, qunit, baseptr, ierr)
  cp = transfer(baseptr, cp)
  call c_f_pointer(cp, shared_right, (/ 4 /))
  call check(qsize == bytes .and. qunit == sizeof_int, 'shared_query size and unit')
  call check(all(shared_right == (/ (mod(nrank + 1, nsize) * 100 + i, i = 1, 4) /)), &
             'load from the neighbour''s shared memory')
  call MPI_Win_unlock_all(win4, ierr)
  call MPI_Win_get_attr(win4, MPI_WIN_CREATE_FLAVOR, attr, flag, ierr)
  flavor_ok = 0
  if (flag .and. attr == MPI_WIN_FLAVOR_SHARED) flavor_ok = 1
  call check(flavor_ok == 1, 'shared flavor')
  call MPI_Win_free(win4, ierr)

  ! ---- the same with TYPE(C_PTR) bases (use mpi's overloads): each rank stores into its own
  ! allocated memory and gets its right neighbour's; on the node, loads from the neighbour's
  ! shared memory found by MPI_Win_shared_query
  bytes = 2 * sizeof_int
  call MPI_Win_allocate(bytes, sizeof_int, MPI_INFO_NULL, MPI_COMM_WORLD, cbase, win6, ierr)
  call c_f_pointer(cbase, counter, (/ 2 /))
  counter = (/ rank + 10, rank + 20 /)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win6, ierr)
  disp = 1
  call MPI_Get(got, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win6, ierr)
  call MPI_Win_unlock(right, win6, ierr)
  call check(ierr == MPI_SUCCESS .and. got == right + 20, 'MPI_Win_allocate with a TYPE(C_PTR) base')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_free(win6, ierr)
  bytes = 4 * sizeof_int
  call MPI_Win_allocate_shared(bytes, sizeof_int, MPI_INFO_NULL, node, cbase, win6, ierr)
  call c_f_pointer(cbase, shared_mine, (/ 4 /))
  shared_mine = (/ (nrank * 1000 + i, i = 1, 4) /)
  call MPI_Win_fence(0, win6, ierr)
  call MPI_Win_shared_query(win6, mod(nrank + 1, nsize), qsize, qunit, cbase, ierr)
  call c_f_pointer(cbase, shared_right, (/ 4 /))
  call check(qsize == bytes .and. all(shared_right == (/ (mod(nrank + 1, nsize) * 1000 + i, i = 1, 4) /)), &
             'MPI_Win_allocate_shared and MPI_Win_shared_query with TYPE(C_PTR) bases')
  call MPI_Win_fence(0, win6, ierr)
  call MPI_Win_free(win6, ierr)
  call MPI_Comm_free(node, ierr)

  ! ---- a dynamic window: rank 0 attaches dyn, the others put into it at its address
  call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win5, ierr)
  dyn = 0
  bytes = 4 * sizeof_int
  if (rank == 0) call MPI_Win_attach(win5, dyn, bytes, ierr)
  call MPI_Get_address(dyn, addr, ierr)
  call MPI_Bcast(addr, 1, MPI_AINT, 0, MPI_COMM_WORLD, ierr)
  if (rank /= 0) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win5, ierr)
    call MPI_Accumulate(rank, 1, MPI_INTEGER, 0, addr, 1, MPI_INTEGER, MPI_SUM, win5, ierr)
    call MPI_Win_unlock(0, win5, ierr)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call check(dyn(1) == size * (size - 1) / 2, 'accumulate into an attached array')
    call MPI_Win_detach(win5, dyn, ierr)
  end if
  ! a misuse MPI defines as an error, handed back under MPI_ERRORS_RETURN
  call MPI_Win_set_errhandler(win5, MPI_ERRORS_RETURN, ierr)
  call MPI_Win_lock(12345, 0, 0, win5, ierr)
  call check(ierr /= MPI_SUCCESS, 'MPI_Win_lock with a bad lock type fails')
  call MPI_Error_class(ierr, cls, res)
  call check(cls == MPI_ERR_LOCKTYPE, 'bad lock type is MPI_ERR_LOCKTYPE')
  call MPI_Win_free(win5, ierr)
  call MPI_Group_free(world_group, ierr)

  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail == 0 .and. rank == 0) print '(a, i0, a)', 'fortran_rma: OK on ', size, ' ranks'
  call MPI_Finalize(ierr)
  if (nfail /= 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      nfail = nfail + 1
      print '(a, i0, 2a)', 'fortran_rma: rank ', rank, ' FAILED: ', what
    end if
  end subroutine check
end program fortran_rma
