! The installed tree's mpi_f08 check (relocated.sh): `use mpi_f08` finds mpi_f08.mod (and the
! modules it uses) next to mpif.h, and its routines link from the moved libxmsg_mpi.
program hello_mpi_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, one, sum
  type(MPI_Comm) :: comm
  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nranks)
  one = 1
  if (rank /= 0) one = 0
  call MPI_Allreduce(one, sum, 1, MPI_INTEGER, MPI_SUM, comm)
  write (*, '(a,i0,a,i0,a,i0)') 'hello_mpi_f08: rank ', rank, ' of ', nranks, ', sum ', sum
  call MPI_Comm_free(comm)
  call MPI_Finalize()
end program hello_mpi_f08
