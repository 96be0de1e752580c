! `use mpi`: every nonblocking collective, outstanding together and completed by one
! MPI_Waitall, then MPI_Iallreduce with MPI_IN_PLACE completed by an MPI_Test loop; MPI_Alltoallw
! and MPI_Ialltoallw with a datatype per peer (a derived one among them, whose arrays Open MPI
! reads again when the operation completes) and MPI_Alltoallw with MPI_IN_PLACE; MPI_Comm_idup,
! completed by MPI_Wait and by MPI_Waitall with an MPI_Ibarrier, whose communicator then carries
! an MPI_Bcast and an MPI_Allreduce. On MPI_COMM_WORLD and on a split communicator ranked in
! reverse world order. 2 or more ranks, at most 16.
program fortran_icoll
  use mpi
  use fortran_counts
  implicit none
  integer :: rank, size, half, ierr

  call tally('MPI_Init'); call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call check(size >= 2 .and. size <= 16, '2 to 16 ranks')

  call all_nonblocking(MPI_COMM_WORLD)
  call alltoallw(MPI_COMM_WORLD)
  call idups(MPI_COMM_WORLD)
  call tally('MPI_Comm_split'); call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call all_nonblocking(half)
  call alltoallw(half)
  call idups(half)
  call tally('MPI_Comm_free'); call MPI_Comm_free(half, ierr)

  call tally('MPI_Finalize')
  call print_counts()
  call MPI_Finalize(ierr)

contains

  subroutine all_nonblocking(c)
    integer, intent(in) :: c
    integer, parameter :: m = 4 ! elements per rank
    integer :: me, n, i, k, root, ierr, r(16), counts(16), displs(16), rcounts(16)
    double precision :: x(16 * m), b(m), y(16 * m, 14)
    logical :: flag
    call MPI_Comm_rank(c, me, ierr)
    call MPI_Comm_size(c, n, ierr)
    x = [(me + i, i = 0, 16 * m - 1)]
    b = me
    do i = 1, n
       counts(i) = 1 + mod(i - 1, m)
       displs(i) = (i - 1) * m
       rcounts(i) = 1 + mod(me, m) ! what rank i - 1 sends me
    end do
    root = n - 1
    k = 0
    k = k + 1; call tally('MPI_Ibarrier'); call MPI_Ibarrier(c, r(k), ierr)
    k = k + 1; call tally('MPI_Ibcast'); call MPI_Ibcast(b, m, MPI_DOUBLE_PRECISION, root, c, r(k), ierr)
    k = k + 1; call tally('MPI_Ireduce')
    call MPI_Ireduce(x, y(1, 1), m, MPI_DOUBLE_PRECISION, MPI_SUM, 0, c, r(k), ierr)
    k = k + 1; call tally('MPI_Iallreduce')
    call MPI_Iallreduce(x, y(1, 2), m, MPI_DOUBLE_PRECISION, MPI_MAX, c, r(k), ierr)
    k = k + 1; call tally('MPI_Igather')
    call MPI_Igather(x, m, MPI_DOUBLE_PRECISION, y(1, 3), m, MPI_DOUBLE_PRECISION, root, c, r(k), ierr)
    k = k + 1; call tally('MPI_Igatherv')
    call MPI_Igatherv(x, counts(me + 1), MPI_DOUBLE_PRECISION, y(1, 4), counts, displs, &
         MPI_DOUBLE_PRECISION, 0, c, r(k), ierr)
    k = k + 1; call tally('MPI_Iscatter')
    call MPI_Iscatter(x, m, MPI_DOUBLE_PRECISION, y(1, 5), m, MPI_DOUBLE_PRECISION, root, c, r(k), ierr)
    k = k + 1; call tally('MPI_Iscatterv')
    call MPI_Iscatterv(x, counts, displs, MPI_DOUBLE_PRECISION, y(1, 6), counts(me + 1), &
         MPI_DOUBLE_PRECISION, 0, c, r(k), ierr)
    k = k + 1; call tally('MPI_Iallgather')
    call MPI_Iallgather(x, m, MPI_DOUBLE_PRECISION, y(1, 7), m, MPI_DOUBLE_PRECISION, c, r(k), ierr)
    k = k + 1; call tally('MPI_Iallgatherv')
    call MPI_Iallgatherv(x, counts(me + 1), MPI_DOUBLE_PRECISION, y(1, 8), counts, displs, &
         MPI_DOUBLE_PRECISION, c, r(k), ierr)
    k = k + 1; call tally('MPI_Ialltoall')
    call MPI_Ialltoall(x, m, MPI_DOUBLE_PRECISION, y(1, 9), m, MPI_DOUBLE_PRECISION, c, r(k), ierr)
    k = k + 1; call tally('MPI_Ialltoallv')
    call MPI_Ialltoallv(x, counts, displs, MPI_DOUBLE_PRECISION, y(1, 10), rcounts, displs, &
         MPI_DOUBLE_PRECISION, c, r(k), ierr)
    k = k + 1; call tally('MPI_Ireduce_scatter')
    call MPI_Ireduce_scatter(x, y(1, 11), counts, MPI_DOUBLE_PRECISION, MPI_SUM, c, r(k), ierr)
    k = k + 1; call tally('MPI_Ireduce_scatter_block')
    call MPI_Ireduce_scatter_block(x, y(1, 12), 2, MPI_DOUBLE_PRECISION, MPI_SUM, c, r(k), ierr)
    k = k + 1; call tally('MPI_Iscan')
    call MPI_Iscan(x, y(1, 13), m, MPI_DOUBLE_PRECISION, MPI_SUM, c, r(k), ierr)
    k = k + 1; call tally('MPI_Iexscan')
    call MPI_Iexscan(x, y(1, 14), m, MPI_DOUBLE_PRECISION, MPI_SUM, c, r(k), ierr)
    call tally('MPI_Waitall'); call MPI_Waitall(k, r, MPI_STATUSES_IGNORE, ierr)
    call check(b(1) == root .and. y(1, 2) == n - 1 .and. y(1, 13) == me * (me + 1) / 2, &
         'Ibcast, Iallreduce, Iscan')
    call check(y(m * (n - 1) + 1, 9) == n - 1 + m * me, 'Ialltoall')

    call tally('MPI_Iallreduce')
    call MPI_Iallreduce(MPI_IN_PLACE, y(1, 2), m, MPI_DOUBLE_PRECISION, MPI_MIN, c, r(1), ierr)
    flag = .false.
    do while (.not. flag)
       call tally('MPI_Test'); call MPI_Test(r(1), flag, MPI_STATUS_IGNORE, ierr)
    end do
    call check(y(1, 2) == n - 1 .and. r(1) == MPI_REQUEST_NULL, 'Iallreduce in place')
  end subroutine all_nonblocking

  ! what ranks i and j exchange: 1 + mod(i + j, 2) elements of the datatype mod(i + j, 3) of
  ! MPI_INTEGER, MPI_DOUBLE_PRECISION and a pair of INTEGERs; 8 INTEGERs a peer in the buffers
  subroutine alltoallw(c)
    integer, intent(in) :: c
    integer :: me, n, j, ierr, pair, r, types(0:2), t(16), counts(16), displs(16)
    integer :: sbuf(8, 16), rbuf(8, 16)
    call MPI_Comm_rank(c, me, ierr)
    call MPI_Comm_size(c, n, ierr)
    call MPI_Type_contiguous(2, MPI_INTEGER, pair, ierr)
    call MPI_Type_commit(pair, ierr)
    types = [MPI_INTEGER, MPI_DOUBLE_PRECISION, pair]
    do j = 1, n
       t(j) = types(mod(me + j - 1, 3))
       counts(j) = 1 + mod(me + j - 1, 2)
       displs(j) = (j - 1) * 32
       sbuf(:, j) = 100 * me + j - 1
    end do
    rbuf = -1
    call tally('MPI_Alltoallw')
    call MPI_Alltoallw(sbuf, counts, displs, t, rbuf, counts, displs, t, c, ierr)
    call check(all(rbuf(1, 1:n) == [(100 * (j - 1) + me, j = 1, n)]), 'Alltoallw')
    rbuf = -1
    call tally('MPI_Ialltoallw')
    call MPI_Ialltoallw(sbuf, counts, displs, t, rbuf, counts, displs, t, c, r, ierr)
    call tally('MPI_Wait'); call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    call check(all(rbuf(1, 1:n) == [(100 * (j - 1) + me, j = 1, n)]), 'Ialltoallw')
    call tally('MPI_Alltoallw')
    call MPI_Alltoallw(MPI_IN_PLACE, counts, displs, t, rbuf, counts, displs, t, c, ierr)
    call check(all(rbuf(1, 1:n) == [(100 * me + j - 1, j = 1, n)]), 'Alltoallw in place')
    call MPI_Type_free(pair, ierr)
  end subroutine alltoallw

  ! an idup completed by MPI_Wait, another with an Ibarrier on the parent by MPI_Waitall; each
  ! communicator then carries a Bcast and an Allreduce
  subroutine idups(c)
    integer, intent(in) :: c
    integer :: n, v, ierr, k, nc(2), r(2)
    call MPI_Comm_size(c, n, ierr)
    call tally('MPI_Comm_idup'); call MPI_Comm_idup(c, nc(1), r(1), ierr)
    call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE, ierr)
    call tally('MPI_Comm_idup'); call MPI_Comm_idup(c, nc(2), r(1), ierr)
    call tally('MPI_Ibarrier'); call MPI_Ibarrier(c, r(2), ierr)
    call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
    do k = 1, 2
       v = 1
       call tally('MPI_Bcast'); call MPI_Bcast(v, 1, MPI_INTEGER, n - 1, nc(k), ierr)
       call tally('MPI_Allreduce')
       call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, nc(k), ierr)
       call check(v == n, 'Allreduce on an idup communicator')
       call tally('MPI_Comm_free'); call MPI_Comm_free(nc(k), ierr)
    end do
  end subroutine idups

end program fortran_icoll
