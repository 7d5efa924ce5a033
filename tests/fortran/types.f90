! Derived datatypes from Fortran (use mpi): a row of a column-major 2-D array by
! MPI_Type_vector, a block by MPI_Type_create_subarray (MPI_ORDER_FORTRAN), a derived TYPE by
! MPI_Type_create_struct with MPI_Get_address, contiguous, indexed_block, sizes and extents.
! Prints "fortran_types: OK on N ranks" only when every check passed.
program fortran_types
  use mpi
  implicit none
  integer, parameter :: n = 5, m = 4
  type particle
    integer :: id
    double precision :: pos(3)
    real :: mass
  end type particle
  integer :: rank, size, ierr, i, j, nfail, next, prev
  double precision :: a(n, m), b(n, m)
  integer :: rowtype, subtype, structtype, contig, idxtype, tsize
  integer :: sizes(2), subsizes(2), starts(2), blens(3), types(3), disps_i(3)
  integer(kind=MPI_ADDRESS_KIND) :: base, disps(3), lb, extent
  type(particle) :: p(2), q(2)
  integer :: ibuf(10), ibuf2(10), status(MPI_STATUS_SIZE), count

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  next = mod(rank + 1, size)
  prev = mod(rank - 1 + size, size)
  do j = 1, m
    do i = 1, n
      a(i, j) = rank * 1000 + i * 10 + j
    end do
  end do

  ! a row: m elements, stride n
  call MPI_Type_vector(m, 1, n, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Type_size(rowtype, tsize, ierr)
  call check(tsize == 8 * m, 'vector: size')
  call MPI_Type_get_extent(rowtype, lb, extent, ierr)
  call check(lb == 0 .and. extent == 8 * ((m - 1) * n + 1), 'vector: extent')
  b = -1
  ! row 2 of a goes to row 3 of the next rank's b
  call MPI_Sendrecv(a(2, 1), 1, rowtype, next, 1, b(3, 1), 1, rowtype, prev, 1, MPI_COMM_WORLD, status, ierr)
  do j = 1, m
    call check(b(3, j) == prev * 1000 + 20 + j, 'vector: row received')
    call check(b(2, j) == -1 .and. b(4, j) == -1, 'vector: neighbours untouched')
  end do
  call MPI_Get_count(status, rowtype, count, ierr)
  call check(count == 1, 'vector: get_count')
  call MPI_Get_elements(status, rowtype, count, ierr)
  call check(count == m, 'vector: get_elements')
  call MPI_Type_free(rowtype, ierr)
  call check(rowtype == MPI_DATATYPE_NULL, 'type_free resets the handle')

  ! a 2x3 block starting at (2,2) (0-based starts (1,1)), Fortran order
  sizes = (/ n, m /)
  subsizes = (/ 2, 3 /)
  starts = (/ 1, 1 /)
  call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, subtype, ierr)
  call MPI_Type_commit(subtype, ierr)
  call MPI_Type_size(subtype, tsize, ierr)
  call check(tsize == 8 * 6, 'subarray: size')
  b = -1
  call MPI_Sendrecv(a, 1, subtype, next, 2, b, 1, subtype, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do j = 1, m
    do i = 1, n
      if (i >= 2 .and. i <= 3 .and. j >= 2 .and. j <= 4) then
        call check(b(i, j) == prev * 1000 + i * 10 + j, 'subarray: block received')
      else
        call check(b(i, j) == -1, 'subarray: outside the block untouched')
      end if
    end do
  end do
  call MPI_Type_free(subtype, ierr)

  ! a derived TYPE: id, pos(3), mass; two of them, extent from the addresses
  call MPI_Get_address(p(1)%id, base, ierr)
  call MPI_Get_address(p(1)%pos, disps(2), ierr)
  call MPI_Get_address(p(1)%mass, disps(3), ierr)
  disps(1) = 0
  disps(2) = disps(2) - base
  disps(3) = disps(3) - base
  blens = (/ 1, 3, 1 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_REAL /)
  call MPI_Type_create_struct(3, blens, disps, types, structtype, ierr)
  call MPI_Get_address(p(2)%id, extent, ierr)
  extent = extent - base
  call MPI_Type_create_resized(structtype, 0_MPI_ADDRESS_KIND, extent, contig, ierr)
  call MPI_Type_free(structtype, ierr)
  structtype = contig
  call MPI_Type_commit(structtype, ierr)
  call MPI_Type_size(structtype, tsize, ierr)
  call check(tsize == 4 + 24 + 4, 'struct: size')
  do i = 1, 2
    p(i)%id = rank * 10 + i
    p(i)%pos = (/ 1d0 * rank, 2d0 * i, 3d0 /)
    p(i)%mass = 0.5 * i
    q(i)%id = -1
    q(i)%pos = -1
    q(i)%mass = -1
  end do
  call MPI_Sendrecv(p, 2, structtype, next, 3, q, 2, structtype, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do i = 1, 2
    call check(q(i)%id == prev * 10 + i, 'struct: id')
    call check(all(q(i)%pos == (/ 1d0 * prev, 2d0 * i, 3d0 /)), 'struct: pos')
    call check(q(i)%mass == 0.5 * i, 'struct: mass')
  end do
  call MPI_Type_free(structtype, ierr)

  ! contiguous and indexed_block on INTEGER
  call MPI_Type_contiguous(3, MPI_INTEGER, contig, ierr)
  call MPI_Type_commit(contig, ierr)
  disps_i = (/ 0, 4, 8 /)
  call MPI_Type_create_indexed_block(3, 2, disps_i, MPI_INTEGER, idxtype, ierr)
  call MPI_Type_commit(idxtype, ierr)
  do i = 1, 10
    ibuf(i) = rank * 100 + i
  end do
  ibuf2 = -1
  call MPI_Sendrecv(ibuf, 1, idxtype, next, 4, ibuf2, 2, contig, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(ibuf2(1:6) == prev * 100 + (/ 1, 2, 5, 6, 9, 10 /)), 'indexed_block -> contiguous')
  call check(all(ibuf2(7:10) == -1), 'contiguous: nothing beyond')
  call MPI_Type_free(contig, ierr)
  call MPI_Type_free(idxtype, ierr)

  ! the Fortran datatypes' sizes
  call MPI_Type_size(MPI_INTEGER, tsize, ierr)
  call check(tsize == 4, 'MPI_INTEGER size')
  call MPI_Type_size(MPI_REAL, tsize, ierr)
  call check(tsize == 4, 'MPI_REAL size')
  call MPI_Type_size(MPI_DOUBLE_PRECISION, tsize, ierr)
  call check(tsize == 8, 'MPI_DOUBLE_PRECISION size')
  call MPI_Type_size(MPI_COMPLEX, tsize, ierr)
  call check(tsize == 8, 'MPI_COMPLEX size')
  call MPI_Type_size(MPI_DOUBLE_COMPLEX, tsize, ierr)
  call check(tsize == 16, 'MPI_DOUBLE_COMPLEX size')
  call MPI_Type_size(MPI_LOGICAL, tsize, ierr)
  call check(tsize == 4, 'MPI_LOGICAL size')
  call MPI_Type_size(MPI_CHARACTER, tsize, ierr)
  call check(tsize == 1, 'MPI_CHARACTER size')
  call MPI_Type_size(MPI_INTEGER8, tsize, ierr)
  call check(tsize == 8, 'MPI_INTEGER8 size')

  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail == 0 .and. rank == 0) write(*, '(A,I0,A)') 'fortran_types: OK on ', size, ' ranks'
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write(*, '(A,I0,A,A)') 'fortran_types: rank ', rank, ': FAILED: ', what
      nfail = nfail + 1
    end if
  end subroutine check
end program fortran_types
