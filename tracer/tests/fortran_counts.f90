! Test helper, the Fortran counterpart of counts.h: each test program counts its own MPI calls,
! `call tally('MPI_Send')` before the call, and print_counts prints the job-wide totals on rank 0
! as one JSON line "COUNTS {...}". They are summed with a counted MPI_Reduce, not with an unseen
! PMPI_Reduce as in counts.h: MPICH's Fortran PMPI_Reduce calls the C MPI_Reduce, which the
! tracer records. check(cond, what) aborts the job when cond is false.
module fortran_counts
  implicit none
  private
  public :: tally, print_counts, check

  integer, parameter :: n = 99
  character(len=25), parameter :: names(n) = [character(len=25) :: &
       'MPI_Init', 'MPI_Init_thread', 'MPI_Finalize', &
       'MPI_Send', 'MPI_Ssend', 'MPI_Bsend', 'MPI_Rsend', &
       'MPI_Isend', 'MPI_Issend', 'MPI_Ibsend', 'MPI_Irsend', &
       'MPI_Recv', 'MPI_Irecv', 'MPI_Sendrecv', 'MPI_Sendrecv_replace', &
       'MPI_Probe', 'MPI_Iprobe', 'MPI_Cancel', 'MPI_Request_free', &
       'MPI_Mprobe', 'MPI_Improbe', 'MPI_Mrecv', 'MPI_Imrecv', &
       'MPI_Wait', 'MPI_Waitall', 'MPI_Waitany', 'MPI_Waitsome', &
       'MPI_Test', 'MPI_Testall', 'MPI_Testany', 'MPI_Testsome', &
       'MPI_Barrier', 'MPI_Bcast', 'MPI_Reduce', 'MPI_Allreduce', &
       'MPI_Gather', 'MPI_Gatherv', 'MPI_Scatter', 'MPI_Scatterv', &
       'MPI_Allgather', 'MPI_Allgatherv', 'MPI_Alltoall', 'MPI_Alltoallv', &
       'MPI_Reduce_scatter', 'MPI_Reduce_scatter_block', 'MPI_Scan', 'MPI_Exscan', &
       'MPI_Comm_dup', 'MPI_Comm_split', 'MPI_Comm_create', 'MPI_Comm_free', &
       'MPI_Alltoallw', 'MPI_Comm_idup', &
       'MPI_Ibarrier', 'MPI_Ibcast', 'MPI_Ireduce', 'MPI_Iallreduce', &
       'MPI_Igather', 'MPI_Igatherv', 'MPI_Iscatter', 'MPI_Iscatterv', &
       'MPI_Iallgather', 'MPI_Iallgatherv', 'MPI_Ialltoall', 'MPI_Ialltoallv', 'MPI_Ialltoallw', &
       'MPI_Ireduce_scatter', 'MPI_Ireduce_scatter_block', 'MPI_Iscan', 'MPI_Iexscan', &
       'MPI_Win_create', 'MPI_Win_allocate', 'MPI_Win_allocate_shared', 'MPI_Win_create_dynamic', &
       'MPI_Win_free', 'MPI_Win_fence', 'MPI_Win_lock', 'MPI_Win_unlock', 'MPI_Win_lock_all', &
       'MPI_Win_unlock_all', 'MPI_Win_flush', 'MPI_Win_flush_all', 'MPI_Win_flush_local', &
       'MPI_Win_sync', 'MPI_Win_post', 'MPI_Win_start', 'MPI_Win_complete', 'MPI_Win_wait', &
       'MPI_Put', 'MPI_Get', 'MPI_Accumulate', 'MPI_Get_accumulate', 'MPI_Fetch_and_op', &
       'MPI_Compare_and_swap', &
       'MPI_Neighbor_allgather', 'MPI_Neighbor_allgatherv', 'MPI_Neighbor_alltoall', &
       'MPI_Neighbor_alltoallv', 'MPI_Neighbor_alltoallw']
  integer, save :: counted(n) = 0

contains

  subroutine tally(name)
    character(len=*), intent(in) :: name
    integer :: i
    do i = 1, n
       if (names(i) == name) then
          counted(i) = counted(i) + 1
          return
       end if
    end do
    write (0, '(2a)') 'fortran_counts: unknown routine ', name
    stop 2
  end subroutine tally

  ! collective; call it before MPI_Finalize (which the program tallies and calls itself)
  subroutine print_counts()
    use mpi, only: MPI_COMM_WORLD, MPI_INTEGER, MPI_SUM
    integer :: total(n), rank, ierr, i, k
    character(len=4096) :: line
    character(len=16) :: num
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call tally('MPI_Reduce') ! before it, so that the totals include it
    call MPI_Reduce(counted, total, n, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank /= 0) return
    line = ''
    k = 0 ! length of line (trim would drop the space after a comma)
    do i = 1, n
       if (total(i) == 0) cycle
       write (num, '(i0)') total(i)
       if (k > 0) line = line(1:k) // ', '
       if (k > 0) k = k + 2
       line = line(1:k) // '"' // trim(names(i)) // '": ' // trim(num)
       k = len_trim(line)
    end do
    write (*, '(3a)') 'COUNTS {', line(1:k), '}'
    flush (6)
  end subroutine print_counts

  subroutine check(cond, what)
    use mpi, only: MPI_COMM_WORLD
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    integer :: ierr
    if (cond) return
    write (0, '(2a)') 'check failed: ', what
    call PMPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end subroutine check

end module fortran_counts
