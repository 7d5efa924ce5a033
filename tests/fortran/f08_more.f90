! mpi_f08's routines beyond f08.f90: procedures handed to MPI (communicator, datatype and window
! keyvals with copy/delete subroutines of mpi_f08's interfaces and the predefined
! MPI_COMM_DUP_FN / MPI_TYPE_NULL_COPY_FN / MPI_WIN_NULL_DELETE_FN, communicator and window error
! handlers), MPI_Pack/MPI_Unpack, MPI_Type_create_struct/_hindexed/_hindexed_block with
! INTEGER(MPI_ADDRESS_KIND) displacements, MPI_Type_get_envelope/_contents, MPI_Type_size_x,
! MPI_Type_match_size, MPI_Cart_sub/_get with LOGICAL arrays, MPI_Ireduce_scatter,
! MPI_Raccumulate/MPI_Rget_accumulate, window info, a generalized request with mpi_f08 procedures,
! MPI_Is_thread_main, MPI_Test_cancelled and MPI_File_open's refusal. Every value is compared with
! what it must be. Prints
! "fortran_f08_more: OK on N ranks" only when every check passed.
module f08_more_callbacks
  use mpi_f08
  implicit none
  integer :: copies = 0, deletes = 0, comm_errors = 0, win_errors = 0, last_code = 0, greq_frees = 0
contains
  subroutine greq_query(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    type(MPI_Status) :: status
    integer :: ierror
    status%MPI_SOURCE = int(extra_state)
    status%MPI_TAG = 43
    ierror = MPI_SUCCESS
  end subroutine greq_query

  subroutine greq_free(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    greq_frees = greq_frees + int(extra_state)
    ierror = MPI_SUCCESS
  end subroutine greq_free

  subroutine greq_cancel(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    ierror = merge(MPI_ERR_OTHER, MPI_SUCCESS, complete .and. extra_state < 0)  ! never cancelled here
  end subroutine greq_cancel

  subroutine copy_plus_one(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    copies = copies + 1
    attribute_val_out = attribute_val_in + extra_state
    flag = oldcomm /= MPI_COMM_NULL .and. comm_keyval /= MPI_KEYVAL_INVALID
    ierror = MPI_SUCCESS
  end subroutine copy_plus_one

  subroutine count_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    if (comm /= MPI_COMM_NULL .and. comm_keyval /= MPI_KEYVAL_INVALID .and. extra_state == 10) &
      deletes = deletes + int(attribute_val)
    ierror = MPI_SUCCESS
  end subroutine count_delete

  subroutine type_delete(datatype, type_keyval, attribute_val, extra_state, ierror)
    type(MPI_Datatype) :: datatype
    integer :: type_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    if (datatype /= MPI_DATATYPE_NULL .and. type_keyval /= MPI_KEYVAL_INVALID) &
      deletes = deletes + int(attribute_val + extra_state)
    ierror = MPI_SUCCESS
  end subroutine type_delete

  subroutine on_comm_error(comm, error_code)
    type(MPI_Comm) :: comm
    integer :: error_code
    if (comm /= MPI_COMM_NULL) comm_errors = comm_errors + 1
    last_code = error_code
  end subroutine on_comm_error

  subroutine on_win_error(win, error_code)
    type(MPI_Win) :: win
    integer :: error_code
    if (win /= MPI_WIN_NULL) win_errors = win_errors + 1
    last_code = error_code
  end subroutine on_win_error
end module f08_more_callbacks

program fortran_f08_more
  use mpi_f08
  use f08_more_callbacks
  implicit none
  integer :: rank, size, nfail, i, k, position, ierr, klass
  integer :: keyval, tkeyval, wkeyval
  integer(kind=MPI_ADDRESS_KIND) :: value, disps(3), base_address, addresses(4), lb, extent
  integer(kind=MPI_COUNT_KIND) :: bytes_x
  logical :: flag, periods(2), remain(2), main_thread
  type(MPI_Comm) :: dup, cart, row
  type(MPI_Datatype) :: pair_type, hidx, hblock, copied, matched, types(3), got_types(3)
  type(MPI_Errhandler) :: handler, whandler, got_handler
  type(MPI_Win) :: win
  type(MPI_Info) :: info, info_used
  type(MPI_Request) :: req
  type(MPI_Status) :: status
  type(MPI_File) :: fh
  integer :: ints(4), combiner, ni, na, nd, dims(2), coords(2)
  integer :: packed_ints(3), unpacked(3), cells(4), accbuf(2), result(2)
  character(len=64) :: packbuf
  character(len=MPI_MAX_INFO_VAL) :: infoval
  integer, allocatable :: counts(:), contributions(:)
  integer :: mine
  ! A struct of two INTEGERs and a DOUBLE PRECISION, sent as one element
  type :: record
    sequence
    integer :: a, b
    double precision :: x
  end type record
  type(record) :: rec(2), got_rec(2)
  integer :: blocklengths(3)
  integer :: hvec(6), hgot(6)

  nfail = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)

  ! ---- keyvals with mpi_f08 procedures ----
  call MPI_Comm_create_keyval(copy_plus_one, count_delete, keyval, 10_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_attr(dup, keyval, 5_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, row)  ! copy: 5 + extra state 10
  call MPI_Comm_get_attr(row, keyval, value, flag)
  call check(flag .and. value == 15 .and. copies == 1, 'comm copy callback (value + extra state)')
  call MPI_Comm_free(row)      ! delete 15
  call MPI_Comm_delete_attr(dup, keyval)  ! delete 5
  call check(deletes == 20, 'comm delete callbacks')
  call MPI_Comm_free_keyval(keyval)
  call check(keyval == MPI_KEYVAL_INVALID, 'comm_free_keyval resets the keyval')
  ! the predefined procedures
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, keyval, 77_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, row)
  call MPI_Comm_get_attr(row, keyval, value, flag)
  call check(flag .and. value == 77, 'MPI_COMM_DUP_FN copies')
  call MPI_Comm_free(row)
  call MPI_Comm_free_keyval(keyval)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, keyval, 78_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, row)
  call MPI_Comm_get_attr(row, keyval, value, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
  call MPI_Comm_free(row)
  call MPI_Comm_free_keyval(keyval)
  ! datatype attributes
  deletes = 0
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, tkeyval, 3_MPI_ADDRESS_KIND)
  call MPI_Type_contiguous(2, MPI_INTEGER, copied)
  call MPI_Type_set_attr(copied, tkeyval, 4_MPI_ADDRESS_KIND)
  call MPI_Type_get_attr(copied, tkeyval, value, flag)
  call check(flag .and. value == 4, 'type_get_attr')
  call MPI_Type_delete_attr(copied, tkeyval)
  call MPI_Type_get_attr(copied, tkeyval, value, flag)
  call check(.not. flag .and. deletes == 7, 'type_delete_attr runs the delete procedure')
  call MPI_Type_free(copied)
  call MPI_Type_free_keyval(tkeyval)

  ! ---- error handlers ----
  call MPI_Comm_create_errhandler(on_comm_error, handler)
  call MPI_Comm_set_errhandler(dup, handler)
  call MPI_Comm_get_errhandler(dup, got_handler)
  call check(got_handler == handler, 'comm_get_errhandler')
  call MPI_Errhandler_free(got_handler)
  call MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER)
  call check(comm_errors == 1 .and. last_code == MPI_ERR_OTHER, 'comm_call_errhandler')
  call MPI_Send(k, 1, MPI_INTEGER, size, 0, dup, ierr)  ! rank out of range
  call MPI_Error_class(ierr, klass)
  call check(comm_errors == 2 .and. klass == MPI_ERR_RANK, 'comm handler at a real error')
  call MPI_Errhandler_free(handler)

  ! ---- pack / unpack ----
  packed_ints = (/ rank, rank + 1, rank + 2 /)
  position = 0
  call MPI_Pack(packed_ints, 3, MPI_INTEGER, packbuf, len(packbuf), position, MPI_COMM_WORLD)
  call check(position == 12, 'pack position')
  k = position
  position = 0
  unpacked = -1
  call MPI_Unpack(packbuf, k, position, unpacked, 3, MPI_INTEGER, MPI_COMM_WORLD)
  call check(position == 12 .and. all(unpacked == packed_ints), 'unpack')

  ! ---- struct, hindexed, hindexed_block ----
  call MPI_Get_address(rec(1)%a, base_address)
  call MPI_Get_address(rec(1)%x, disps(2))
  disps(1) = 0
  disps(2) = disps(2) - base_address
  blocklengths = (/ 2, 1, 0 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_INTEGER /)
  call MPI_Type_create_struct(2, blocklengths, disps, types, pair_type)
  call MPI_Type_commit(pair_type)
  call MPI_Type_get_extent(pair_type, lb, extent)
  call check(lb == 0 .and. extent == 16, 'struct extent')
  call MPI_Type_size_x(pair_type, bytes_x)
  call check(bytes_x == 16, 'type_size_x')
  call MPI_Type_get_envelope(pair_type, ni, na, nd, combiner)
  call check(combiner == MPI_COMBINER_STRUCT .and. ni == 3 .and. na == 2 .and. nd == 2, 'struct envelope')
  got_types = MPI_DATATYPE_NULL
  call MPI_Type_get_contents(pair_type, 4, 4, 3, ints, addresses, got_types)
  call check(ints(1) == 2 .and. ints(2) == 2 .and. ints(3) == 1 .and. addresses(2) == disps(2) .and. &
             got_types(1) == MPI_INTEGER .and. got_types(2) == MPI_DOUBLE_PRECISION, 'struct contents')
  rec(1) = record(rank, -rank, rank * 0.5d0)
  rec(2) = record(0, 0, 0d0)
  got_rec = record(-1, -1, -1d0)
  call MPI_Sendrecv(rec, 1, pair_type, mod(rank + 1, size), 3, got_rec, 1, pair_type, &
                    mod(rank - 1 + size, size), 3, MPI_COMM_WORLD, status)
  k = mod(rank - 1 + size, size)
  call check(got_rec(1)%a == k .and. got_rec(1)%b == -k .and. got_rec(1)%x == k * 0.5d0 .and. &
             got_rec(2)%a == -1, 'struct sendrecv')
  call MPI_Type_free(pair_type)
  ! hindexed: ints 1..2 and 5 (bytes 0 and 16); hindexed_block: ints 2 and 6 (bytes 4 and 20)
  hvec = (/ (rank * 10 + i, i = 1, 6) /)
  disps(1) = 0
  disps(2) = 16
  blocklengths(1:2) = (/ 2, 1 /)
  call MPI_Type_create_hindexed(2, blocklengths, disps, MPI_INTEGER, hidx)
  call MPI_Type_commit(hidx)
  hgot = 0
  call MPI_Sendrecv(hvec, 1, hidx, rank, 4, hgot, 3, MPI_INTEGER, rank, 4, MPI_COMM_WORLD, status)
  call check(all(hgot(1:3) == (/ rank * 10 + 1, rank * 10 + 2, rank * 10 + 5 /)), 'hindexed')
  call MPI_Type_free(hidx)
  call MPI_Type_create_hindexed_block(2, 1, (/ 4_MPI_ADDRESS_KIND, 20_MPI_ADDRESS_KIND /), MPI_INTEGER, hblock)
  call MPI_Type_commit(hblock)
  hgot = 0
  call MPI_Sendrecv(hvec, 1, hblock, rank, 5, hgot, 2, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, status)
  call check(all(hgot(1:2) == (/ rank * 10 + 2, rank * 10 + 6 /)), 'hindexed_block')
  call MPI_Type_free(hblock)
  call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, matched)
  call MPI_Type_size(matched, k)
  call check(k == 8, 'type_match_size')

  ! ---- Cartesian sub-communicators ----
  dims = 0
  call MPI_Dims_create(size, 2, dims)
  periods = (/ .true., .false. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart)
  periods = .false.
  coords = -1
  call MPI_Cart_get(cart, 2, dims, periods, coords)
  call check(periods(1) .and. .not. periods(2) .and. dims(1) * dims(2) == size .and. &
             coords(1) == rank / dims(2) .and. coords(2) == mod(rank, dims(2)), 'cart_get')
  remain = (/ .false., .true. /)
  call MPI_Cart_sub(cart, remain, row)
  call MPI_Comm_size(row, k)
  call check(k == dims(2), 'cart_sub keeps the second dimension')
  call MPI_Comm_rank(row, k)
  call check(k == mod(rank, dims(2)), 'cart_sub rank')
  call MPI_Comm_free(row)
  call MPI_Comm_free(cart)

  ! ---- ireduce_scatter ----
  allocate(counts(size), contributions(2 * size))
  counts = 2
  contributions = (/ (rank + i, i = 1, 2 * size) /)
  call MPI_Ireduce_scatter(contributions, accbuf, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, status)
  k = size * (size - 1) / 2
  call check(accbuf(1) == k + size * (2 * rank + 1) .and. accbuf(2) == k + size * (2 * rank + 2), &
             'ireduce_scatter')
  deallocate(counts, contributions)

  ! ---- windows: attributes, error handlers, info, request-based accumulates ----
  cells = 0
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'no_locks', 'false')
  call MPI_Win_create(cells, 16_MPI_ADDRESS_KIND, 4, info, MPI_COMM_WORLD, win)
  call MPI_Info_free(info)
  call MPI_Win_set_info(win, MPI_INFO_NULL)
  call MPI_Win_get_info(win, info_used)
  call check(info_used /= MPI_INFO_NULL, 'win_get_info')
  call MPI_Info_get(info_used, 'no_locks', MPI_MAX_INFO_VAL, infoval, flag)
  call check(.not. flag .or. infoval == 'false', 'win info no_locks')
  call MPI_Info_free(info_used)
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, wkeyval, 0_MPI_ADDRESS_KIND)
  call MPI_Win_set_attr(win, wkeyval, 99_MPI_ADDRESS_KIND)
  call MPI_Win_get_attr(win, wkeyval, value, flag)
  call check(flag .and. value == 99, 'win_get_attr')
  call MPI_Win_delete_attr(win, wkeyval)
  call MPI_Win_get_attr(win, wkeyval, value, flag)
  call check(.not. flag, 'win_delete_attr')
  call MPI_Win_free_keyval(wkeyval)
  call MPI_Win_create_errhandler(on_win_error, whandler)
  call MPI_Win_set_errhandler(win, whandler)
  call MPI_Win_get_errhandler(win, got_handler)
  call check(got_handler == whandler, 'win_get_errhandler')
  call MPI_Errhandler_free(got_handler)
  call MPI_Win_call_errhandler(win, MPI_ERR_WIN)
  call check(win_errors == 1 .and. last_code == MPI_ERR_WIN, 'win_call_errhandler')
  accbuf = (/ 1, rank /)
  call MPI_Win_lock_all(0, win)
  call MPI_Raccumulate(accbuf, 2, MPI_INTEGER, 0, 0_MPI_ADDRESS_KIND, 2, MPI_INTEGER, MPI_SUM, win, req)
  call MPI_Wait(req, status)
  call MPI_Win_flush_all(win)
  call MPI_Win_unlock_all(win)
  call MPI_Barrier(MPI_COMM_WORLD)
  result = -1
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)
  call MPI_Rget_accumulate(accbuf, 0, MPI_INTEGER, result, 2, MPI_INTEGER, 0, 0_MPI_ADDRESS_KIND, 2, &
                           MPI_INTEGER, MPI_NO_OP, win, req)
  call MPI_Wait(req, status)
  call MPI_Win_unlock(0, win)
  call check(result(1) == size .and. result(2) == size * (size - 1) / 2, 'raccumulate, rget_accumulate')
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_free(win)
  call MPI_Errhandler_free(whandler)

  ! ---- a generalized request ----
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, int(5 + rank, MPI_ADDRESS_KIND), req)
  call MPI_Test(req, flag, status)
  call check(.not. flag, 'generalized request pending until completed')
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, status)
  call check(req == MPI_REQUEST_NULL .and. status%MPI_SOURCE == 5 + rank .and. status%MPI_TAG == 43 .and. &
             greq_frees == 5 + rank, 'generalized request: query and free')

  ! ---- environment ----
  call MPI_Is_thread_main(main_thread)
  call check(main_thread, 'is_thread_main')
  call MPI_Irecv(mine, 1, MPI_INTEGER, rank, 99, MPI_COMM_WORLD, req)
  call MPI_Cancel(req)
  call MPI_Wait(req, status)
  call MPI_Test_cancelled(status, flag)
  call check(flag, 'test_cancelled')
  call MPI_File_open(MPI_COMM_WORLD, 'nowhere', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_Error_class(ierr, klass)
  call check(klass == MPI_ERR_UNSUPPORTED_OPERATION .and. fh == MPI_FILE_NULL, 'file_open refuses')

  call MPI_Comm_free(dup)
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (nfail == 0 .and. rank == 0) print '(a, i0, a)', 'fortran_f08_more: OK on ', size, ' ranks'
  call MPI_Finalize()
  if (nfail /= 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      nfail = nfail + 1
      print '(a, i0, 2a)', 'fortran_f08_more: rank ', rank, ' FAILED: ', what
    end if
  end subroutine check
end program fortran_f08_more
