! The installed tree's Fortran check (relocated.sh): `use mpi` finds mpi.mod next to mpif.h.
program hello_mpi_f90
  use mpi
  implicit none
  integer :: ierr, rank, nranks, one, sum
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  one = 1
  if (rank /= 0) one = 0
  call MPI_Allreduce(one, sum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  write (*, '(a,i0,a,i0,a,i0)') 'hello_mpi_f90: rank ', rank, ' of ', nranks, ', sum ', sum
  call MPI_Finalize(ierr)
end program hello_mpi_f90
