! MPI-IO from Fortran as xmsg has it (use mpi): not provided, and says so. MPI_FILE_OPEN,
! MPI_FILE_WRITE_AT, MPI_FILE_SET_VIEW, MPI_FILE_CLOSE and MPI_FILE_DELETE return an error of
! class MPI_ERR_UNSUPPORTED_OPERATION through the default file handler (MPI_ERRORS_RETURN, which
! MPI_FILE_GET_ERRHANDLER on MPI_FILE_NULL reports), MPI_FILE_OPEN leaves MPI_FILE_NULL, and
! the job goes on. Prints "fortran_io: OK on N ranks" only when every check passed.
program fortran_io
  use mpi
  implicit none
  integer :: rank, size, ierr, nfail, fh, cls, eh, sum, values(4), status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: offset

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)

  call MPI_File_get_errhandler(MPI_FILE_NULL, eh, ierr)
  call check(ierr == MPI_SUCCESS .and. eh == MPI_ERRORS_RETURN, 'default file handler is MPI_ERRORS_RETURN')
  fh = 12345
  call MPI_File_open(MPI_COMM_WORLD, 'out.dat', MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  call check(unsupported(ierr), 'MPI_FILE_OPEN')
  call check(fh == MPI_FILE_NULL, 'MPI_FILE_OPEN leaves MPI_FILE_NULL')
  values = rank
  offset = 16 * rank
  call MPI_File_write_at(fh, offset, values, 4, MPI_INTEGER, status, ierr)
  call check(unsupported(ierr), 'MPI_FILE_WRITE_AT')
  offset = 0
  call MPI_File_set_view(fh, offset, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  call check(unsupported(ierr), 'MPI_FILE_SET_VIEW')
  call MPI_File_close(fh, ierr)
  call check(unsupported(ierr), 'MPI_FILE_CLOSE')
  call MPI_File_delete('out.dat', MPI_INFO_NULL, ierr)
  call check(unsupported(ierr), 'MPI_FILE_DELETE')

  call MPI_Allreduce(1, sum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(sum == size, 'the job goes on')
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail == 0 .and. rank == 0) print '(a, i0, a)', 'fortran_io: OK on ', size, ' ranks'
  call MPI_Finalize(ierr)
  if (nfail /= 0) error stop 1

contains

  logical function unsupported(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, cls, e)
    unsupported = code /= MPI_SUCCESS .and. cls == MPI_ERR_UNSUPPORTED_OPERATION
  end function unsupported

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      nfail = nfail + 1
      print '(a, i0, 2a)', 'fortran_io: rank ', rank, ' FAILED: ', what
    end if
  end subroutine check
end program fortran_io
