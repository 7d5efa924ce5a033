! Procedures a Fortran program hands to MPI: attribute keyvals with its own copy and delete
! callbacks and with the predefined MPI_*_NULL_COPY_FN / _DUP_FN / _NULL_DELETE_FN, on
! communicators (MPI-2 and MPI-1's MPI_KEYVAL_CREATE), datatypes and windows; error handlers on
! communicators and windows, called by MPI_*_CALL_ERRHANDLER and by real errors (a file one is
! refused: no MPI-IO); generalized requests with query, free and cancel subroutines.
! Prints "fortran_callbacks: OK on N ranks" only when every check passed.
module callback_counts
  use mpi
  implicit none
  integer :: copies = 0, deletes = 0, handled = 0, last_code = 0, last_handle = -1
  integer(kind=MPI_ADDRESS_KIND) :: seen_extra = 0, deleted_value = 0
  integer :: queries = 0, frees = 0, cancels = 0
contains
  ! Copies value + 1; fails when handed no communicator or keyval.
  subroutine copy_plus_one(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldcomm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    copies = copies + 1
    seen_extra = extra_state
    value_out = value_in + 1
    flag = .true.
    ierror = MPI_SUCCESS
    if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierror = MPI_ERR_OTHER
  end subroutine copy_plus_one

  subroutine count_delete(handle, keyval, value, extra_state, ierror)
    integer :: handle, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
    deletes = deletes + 1
    deleted_value = value
    ierror = MPI_SUCCESS
    if (handle == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID .or. extra_state /= 77) ierror = MPI_ERR_OTHER
  end subroutine count_delete

  ! MPI-1's callbacks: INTEGER values and extra state.
  subroutine copy_twice(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldcomm, keyval, extra_state, value_in, value_out, ierror
    logical :: flag
    copies = copies + 1
    value_out = 2 * value_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
    if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierror = MPI_ERR_OTHER
  end subroutine copy_twice

  subroutine delete_int(comm, keyval, value, extra_state, ierror)
    integer :: comm, keyval, value, extra_state, ierror
    deletes = deletes + 1
    deleted_value = value
    ierror = MPI_SUCCESS
    if (comm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID .or. extra_state /= 3) ierror = MPI_ERR_OTHER
  end subroutine delete_int

  subroutine on_error(handle, code)
    integer :: handle, code
    handled = handled + 1
    last_handle = handle
    last_code = code
  end subroutine on_error

  ! Generalized requests: the query fills the status from the extra state, free and cancel count.
  subroutine greq_query(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierror
    status(MPI_SOURCE) = int(extra_state)
    status(MPI_TAG) = 42
    queries = queries + 1
    ierror = MPI_SUCCESS
  end subroutine greq_query

  subroutine greq_free(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    frees = frees + int(extra_state)
    ierror = MPI_SUCCESS
  end subroutine greq_free

  subroutine greq_cancel(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    if (.not. complete .and. extra_state >= 0) cancels = cancels + 1
    ierror = MPI_SUCCESS
  end subroutine greq_cancel
end module callback_counts

program fortran_callbacks
  use mpi
  use callback_counts
  implicit none
  integer :: rank, size, ierr, nfail, key, key2, key1, tkey, wkey, dup, dup2, t, tdup, win, eh, weh, feh
  integer :: ival, cls, greq, gstatus(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: greq_extra
  integer :: cell(1)
  integer(kind=MPI_ADDRESS_KIND) :: extra, val, cell_bytes
  logical :: flag

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)

  ! A communicator keyval with the program's callbacks: dup copies, free and delete_attr delete.
  extra = 77
  call MPI_Comm_create_keyval(copy_plus_one, count_delete, key, extra, ierr)
  call check(ierr == MPI_SUCCESS .and. key /= MPI_KEYVAL_INVALID, 'MPI_Comm_create_keyval')
  call MPI_Comm_set_attr(dup, key, int(1000 + rank, MPI_ADDRESS_KIND), ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call check(ierr == MPI_SUCCESS .and. copies == 1 .and. seen_extra == 77, 'copy callback ran once, with the extra state')
  call MPI_Comm_get_attr(dup2, key, val, flag, ierr)
  call check(flag .and. val == 1001 + rank, 'the copy holds the callback''s value')
  call MPI_Comm_free(dup2, ierr)
  call check(ierr == MPI_SUCCESS .and. deletes == 1 .and. deleted_value == 1001 + rank, 'delete callback at MPI_Comm_free')
  call MPI_Comm_delete_attr(dup, key, ierr)
  call check(deletes == 2 .and. deleted_value == 1000 + rank, 'delete callback at MPI_Comm_delete_attr')
  call MPI_Comm_free_keyval(key, ierr)
  call check(ierr == MPI_SUCCESS .and. key == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval')

  ! The predefined callbacks: NULL_COPY does not copy, DUP_FN copies the value as it is.
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key2, extra, ierr)
  call MPI_Comm_set_attr(dup, key, 5_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(dup, key2, 6_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call MPI_Comm_get_attr(dup2, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_COMM_NULL_COPY_FN copies nothing')
  call MPI_Comm_get_attr(dup2, key2, val, flag, ierr)
  call check(flag .and. val == 6, 'MPI_COMM_DUP_FN copies the value')
  call MPI_Comm_free(dup2, ierr)
  call MPI_Comm_delete_attr(dup, key, ierr)
  call MPI_Comm_delete_attr(dup, key2, ierr)
  call MPI_Comm_free_keyval(key, ierr)
  call MPI_Comm_free_keyval(key2, ierr)

  ! MPI-1: MPI_KEYVAL_CREATE with INTEGER callbacks, MPI_ATTR_PUT / _GET / _DELETE.
  copies = 0
  deletes = 0
  call MPI_Keyval_create(copy_twice, delete_int, key1, 3, ierr)
  call MPI_Attr_put(dup, key1, 20 + rank, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call MPI_Attr_get(dup2, key1, ival, flag, ierr)
  call check(copies == 1 .and. flag .and. ival == 2 * (20 + rank) + 3, 'MPI_KEYVAL_CREATE copy callback')
  call MPI_Comm_free(dup2, ierr)
  call check(deletes == 1 .and. deleted_value == 2 * (20 + rank) + 3, 'MPI_KEYVAL_CREATE delete callback')
  call MPI_Attr_delete(dup, key1, ierr)
  call check(ierr == MPI_SUCCESS .and. deletes == 2 .and. deleted_value == 20 + rank, 'MPI_Attr_delete')
  call MPI_Keyval_free(key1, ierr)
  call check(ierr == MPI_SUCCESS .and. key1 == MPI_KEYVAL_INVALID, 'MPI_Keyval_free')

  ! Datatypes: MPI_TYPE_DUP_FN copies at MPI_Type_dup, the program's delete runs at free.
  deletes = 0
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, tkey, extra, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, t, ierr)
  call MPI_Type_set_attr(t, tkey, 42_MPI_ADDRESS_KIND, ierr)
  call MPI_Type_dup(t, tdup, ierr)
  call MPI_Type_get_attr(tdup, tkey, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val == 42, 'MPI_TYPE_DUP_FN at MPI_Type_dup')
  call MPI_Type_free(tdup, ierr)
  call check(deletes == 1 .and. deleted_value == 42, 'datatype delete callback at MPI_Type_free')
  call MPI_Type_delete_attr(t, tkey, ierr)
  call MPI_Type_get_attr(t, tkey, val, flag, ierr)
  call check(deletes == 2 .and. .not. flag, 'MPI_Type_delete_attr')
  call MPI_Type_free(t, ierr)
  call MPI_Type_free_keyval(tkey, ierr)
  call check(ierr == MPI_SUCCESS .and. tkey == MPI_KEYVAL_INVALID, 'MPI_Type_free_keyval')

  ! Windows: the delete callback runs at MPI_Win_free.
  deletes = 0
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, wkey, extra, ierr)
  cell_bytes = 4
  call MPI_Win_create(cell, cell_bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_set_attr(win, wkey, 9_MPI_ADDRESS_KIND, ierr)
  call MPI_Win_free(win, ierr)
  call check(ierr == MPI_SUCCESS .and. deletes == 1 .and. deleted_value == 9, 'window delete callback at MPI_Win_free')
  call MPI_Win_free_keyval(wkey, ierr)

  ! A communicator error handler: called by MPI_Comm_call_errhandler and by a failing call,
  ! with the communicator and the code; the call returns the code.
  call MPI_Comm_create_errhandler(on_error, eh, ierr)
  call MPI_Comm_set_errhandler(dup, eh, ierr)
  call MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER, ierr)
  call check(handled == 1 .and. last_code == MPI_ERR_OTHER .and. last_handle == dup, 'MPI_Comm_call_errhandler')
  call MPI_Send(ival, 1, MPI_INTEGER, size, 0, dup, ierr)
  call MPI_Error_class(ierr, cls, ival)
  call check(handled == 2 .and. last_code == ierr .and. cls == MPI_ERR_RANK, 'handler at a send to rank size')
  call MPI_Errhandler_free(eh, ierr)

  ! A window error handler: MPI_Win_call_errhandler, then a put outside any epoch.
  call MPI_Win_create_errhandler(on_error, weh, ierr)
  call MPI_Win_create(cell, cell_bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_set_errhandler(win, weh, ierr)
  call MPI_Win_call_errhandler(win, MPI_ERR_WIN, ierr)
  call check(handled == 3 .and. last_code == MPI_ERR_WIN .and. last_handle == win, 'MPI_Win_call_errhandler')
  ival = 1
  call MPI_Put(ival, 1, MPI_INTEGER, 0, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win, ierr)
  call MPI_Error_class(ierr, cls, ival)
  call check(handled == 4 .and. last_code == ierr .and. cls == MPI_ERR_RMA_SYNC, 'window handler at a put outside an epoch')
  call MPI_Win_free(win, ierr)
  call MPI_Errhandler_free(weh, ierr)

  ! MPI-IO is refused (docs/mpi.md): so is a file error handler, by the file default handler
  ! (MPI_ERRORS_RETURN), naming the call.
  call MPI_File_create_errhandler(on_error, feh, ierr)
  call MPI_Error_class(ierr, cls, ival)
  call check(cls == MPI_ERR_UNSUPPORTED_OPERATION .and. handled == 4, 'MPI_File_create_errhandler refused')

  ! A generalized request: not done until completed; the wait runs the query (whose status the
  ! program gets) and the free, once. Cancel before completion calls the cancel subroutine with
  ! COMPLETE = .FALSE.
  greq_extra = 3 + rank
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, greq_extra, greq, ierr)
  call check(ierr == MPI_SUCCESS .and. greq /= MPI_REQUEST_NULL, 'grequest_start')
  call MPI_Test(greq, flag, gstatus, ierr)
  call check(.not. flag .and. queries == 0, 'a generalized request is not done before it is completed')
  call MPI_Cancel(greq, ierr)
  call check(cancels == 1, 'cancel subroutine called with COMPLETE false')
  call MPI_Grequest_complete(greq, ierr)
  call MPI_Wait(greq, gstatus, ierr)
  call check(ierr == MPI_SUCCESS .and. greq == MPI_REQUEST_NULL .and. gstatus(MPI_SOURCE) == 3 + rank .and. &
             gstatus(MPI_TAG) == 42 .and. queries == 1 .and. frees == 3 + rank, 'grequest wait: query and free ran')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Grequest_complete(12345, ierr)
  call MPI_Error_class(ierr, cls, ival)
  call check(cls == MPI_ERR_REQUEST, 'grequest_complete of a handle that names no request')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)

  call MPI_Comm_free(dup, ierr)
  if (nfail == 0 .and. rank == 0) write(*, '(A,I0,A)') 'fortran_callbacks: OK on ', size, ' ranks'
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write(*, '(A,I0,A,A)') 'fortran_callbacks: rank ', rank, ': FAILED: ', what
      nfail = nfail + 1
    end if
  end subroutine check
end program fortran_callbacks
