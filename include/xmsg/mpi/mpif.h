! mpif.h: xmsg's MPI for Fortran 77-style programs (INCLUDE 'mpif.h')
! and the body of the `mpi` module. Fixed- and free-form alike: code
! in columns 7-72, comments start with '!'. Build with xmsgfort.
!
! The INTEGER PARAMETERs (handles, datatypes, ops, error classes,
! MPI_STATUS_SIZE, kinds) are generated from mpi.h's values at build
! time into xmsg_mpif_constants.h, next to this file once installed.
! See docs/fortran.md.
      INCLUDE 'xmsg_mpif_constants.h'
!
! MPI-3 Fortran support flags: no subarray descriptors (choice buffers
! pass addresses; a non-contiguous section is copied in and out).
      LOGICAL MPI_SUBARRAYS_SUPPORTED, MPI_ASYNC_PROTECTS_NONBLOCKING
      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)
      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)
!
! Functions (the rest are subroutines with IERROR last).
      DOUBLE PRECISION MPI_WTIME, MPI_WTICK
      DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK
      EXTERNAL MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK
!
! The predefined attribute callbacks, passed to MPI_*_CREATE_KEYVAL
! (MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN: MPI_KEYVAL_CREATE's).
      EXTERNAL MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN
      EXTERNAL MPI_COMM_NULL_DELETE_FN
      EXTERNAL MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN
      EXTERNAL MPI_TYPE_NULL_DELETE_FN
      EXTERNAL MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN
      EXTERNAL MPI_WIN_NULL_DELETE_FN
      EXTERNAL MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN
!
! Sentinel buffers and arrays: the library compares their addresses.
      INTEGER MPI_BOTTOM, MPI_IN_PLACE
      INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)
      INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE, 1)
      INTEGER MPI_ERRCODES_IGNORE(1)
      COMMON /XMSG_MPIF_BOTTOM/ MPI_BOTTOM
      COMMON /XMSG_MPIF_IN_PLACE/ MPI_IN_PLACE
      COMMON /XMSG_MPIF_STATUS_IGNORE/ MPI_STATUS_IGNORE
      COMMON /XMSG_MPIF_STATUSES_IGNORE/ MPI_STATUSES_IGNORE
      COMMON /XMSG_MPIF_ERRCODES_IGNORE/ MPI_ERRCODES_IGNORE
      SAVE /XMSG_MPIF_BOTTOM/, /XMSG_MPIF_IN_PLACE/
      SAVE /XMSG_MPIF_STATUS_IGNORE/, /XMSG_MPIF_STATUSES_IGNORE/
      SAVE /XMSG_MPIF_ERRCODES_IGNORE/
