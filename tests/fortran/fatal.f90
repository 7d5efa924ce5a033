! MPI_ERRORS_ARE_FATAL from Fortran: MPI_Bcast with a root out of range ends the job with the C
! layer's message naming the function; the line after the bad call is never printed.
program fortran_fatal
  use mpi
  implicit none
  integer :: ierr, buf(2), nranks
  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  buf = 0
  call MPI_Bcast(buf, 2, MPI_INTEGER, nranks + 3, MPI_COMM_WORLD, ierr)
  write(*, '(A)') 'fortran_fatal: still running after a fatal error'
  call MPI_Finalize(ierr)
end program fortran_fatal
