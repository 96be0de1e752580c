! MPI initialized where the tracer cannot see it (PMPI_Init, as a static MPI or bindings that
! call the C library's PMPI_ routines would do): the job runs untraced, and the tracer says so
! at exit (one line, from rank 0) instead of leaving nothing.
program fortran_pmpi
  use mpi
  implicit none
  integer :: ierr
  call PMPI_Init(ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call PMPI_Finalize(ierr)
end program fortran_pmpi
