! Handle conversion: Fortran handles handed to C (handles_c.c) come back through MPI_*_f2c and
! MPI_*_c2f (requests through PMPI_Request_f2c/_c2f and statuses through PMPI_Status_f2c),
! and C uses them. Prints "fortran_handles: OK on N ranks" only when every check passed.
program fortran_handles
  use mpi
  implicit none
  integer :: rank, size, ierr, nfail, dupcomm, vec, group, info, op, req, ival
  integer :: status(MPI_STATUS_SIZE), result
  external :: xmsg_test_handles

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dupcomm, ierr)
  call MPI_Type_vector(2, 1, 3, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Comm_group(dupcomm, group, ierr)
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'xmsg_key', 'fortran value', ierr)
  op = MPI_MAX
  call MPI_Irecv(ival, 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF, req, ierr)
  status = 0
  status(MPI_SOURCE) = 3
  status(MPI_TAG) = 44
  result = -1
  call xmsg_test_handles(dupcomm, vec, group, info, op, req, status, size, result)
  if (result /= 0) then
    write(*, '(A,I0,A,I0)') 'fortran_handles: rank ', rank, ': FAILED: C check ', result
    nfail = nfail + 1
  end if
  ! the request C saw (still pending) completes through the Fortran handle
  call MPI_Send(rank, 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF, ierr)
  call MPI_Wait(req, status, ierr)
  if (req /= MPI_REQUEST_NULL .or. ival /= rank .or. status(MPI_TAG) /= 5) then
    write(*, '(A,I0,A)') 'fortran_handles: rank ', rank, ': FAILED: request after the C round trip'
    nfail = nfail + 1
  end if
  call MPI_Info_free(info, ierr)
  call MPI_Group_free(group, ierr)
  call MPI_Type_free(vec, ierr)
  call MPI_Comm_free(dupcomm, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail == 0 .and. rank == 0) write(*, '(A,I0,A)') 'fortran_handles: OK on ', size, ' ranks'
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1
end program fortran_handles
