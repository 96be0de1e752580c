! `use mpi`: every recorded point-to-point and completion routine, as p2p.c does it (blocking
! sends of every mode, nonblocking ones completed by each Wait and Test routine, wildcard
! receives with MPI_STATUS(ES)_IGNORE, probes, matched probes, a cancelled receive,
! MPI_PROC_NULL, a derived datatype), then a few collectives with MPI_IN_PLACE, MPI_Comm_split,
! and a Cartesian communicator (its creation is not recorded, its traffic is). 2 or 4 (any even
! number) ranks.
program fortran
  use mpi
  use fortran_counts
  implicit none
  integer, parameter :: W = MPI_COMM_WORLD
  integer :: rank, size, right, left, ierr, k, i, done, got, idx, outcount, vec, bufsize
  integer :: a(64), b(64), r(4), indices(4), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4)
  integer :: half, hme, hn, ring, src, dst, v(4), msg
  double precision :: x(8), y(8)
  character, allocatable :: bsendbuf(:)
  logical :: even, flag

  call tally('MPI_Init'); call MPI_Init(ierr)
  call MPI_Comm_rank(W, rank, ierr)
  call MPI_Comm_size(W, size, ierr)
  call check(mod(size, 2) == 0, 'even number of ranks')
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  even = mod(rank, 2) == 0
  a = [(rank * 100 + i, i = 0, 63)]

  ! blocking modes, even ranks send first
  do k = 1, 3
     if (even) then
        call tally('MPI_Send'); call MPI_Send(a, 4, MPI_INTEGER, right, 1, W, ierr)
        call tally('MPI_Recv'); call MPI_Recv(b, 4, MPI_INTEGER, left, 1, W, MPI_STATUS_IGNORE, ierr)
        call tally('MPI_Ssend'); call MPI_Ssend(a, 8, MPI_INTEGER, right, 2, W, ierr)
        call tally('MPI_Recv'); call MPI_Recv(b, 8, MPI_INTEGER, left, 2, W, st, ierr)
     else
        call tally('MPI_Recv'); call MPI_Recv(b, 4, MPI_INTEGER, left, 1, W, MPI_STATUS_IGNORE, ierr)
        call tally('MPI_Send'); call MPI_Send(a, 4, MPI_INTEGER, right, 1, W, ierr)
        call tally('MPI_Recv'); call MPI_Recv(b, 8, MPI_INTEGER, left, 2, W, st, ierr)
        call tally('MPI_Ssend'); call MPI_Ssend(a, 8, MPI_INTEGER, right, 2, W, ierr)
     end if
     call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 2, 'Recv status')
  end do

  ! buffered sends
  bufsize = 4 * (64 * 4 + MPI_BSEND_OVERHEAD)
  allocate (bsendbuf(bufsize))
  call MPI_Buffer_attach(bsendbuf, bufsize, ierr)
  call tally('MPI_Bsend'); call MPI_Bsend(a, 16, MPI_INTEGER, right, 3, W, ierr)
  call tally('MPI_Recv'); call MPI_Recv(b, 16, MPI_INTEGER, MPI_ANY_SOURCE, 3, W, MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Ibsend'); call MPI_Ibsend(a, 5, MPI_INTEGER, right, 3, W, r(1), ierr)
  call tally('MPI_Irecv'); call MPI_Irecv(b, 5, MPI_INTEGER, left, MPI_ANY_TAG, W, r(2), ierr)
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
  call check(all(r(1:2) == MPI_REQUEST_NULL), 'Waitall nulls the requests')
  call MPI_Buffer_detach(bsendbuf, bufsize, ierr)

  ! derived datatype: 4 blocks of 2 integers = 32 bytes
  call MPI_Type_vector(4, 2, 3, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call tally('MPI_Isend'); call MPI_Isend(a, 1, vec, right, 4, W, r(1), ierr)
  call tally('MPI_Recv'); call MPI_Recv(b, 8, MPI_INTEGER, left, 4, W, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, got, ierr)
  call check(got == 8, 'Get_count of the vector')
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE, ierr)
  call check(r(1) == MPI_REQUEST_NULL, 'Wait nulls the request')
  call MPI_Type_free(vec, ierr)

  ! ready sends: the receive is posted before the barrier
  call tally('MPI_Irecv'); call MPI_Irecv(b, 3, MPI_INTEGER, left, 5, W, r(1), ierr)
  call tally('MPI_Barrier'); call MPI_Barrier(W, ierr)
  call tally('MPI_Rsend'); call MPI_Rsend(a, 3, MPI_INTEGER, right, 5, W, ierr)
  call tally('MPI_Wait'); call MPI_Wait(r(1), st, ierr)
  call tally('MPI_Irecv'); call MPI_Irecv(b, 3, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, r(1), ierr)
  call tally('MPI_Barrier'); call MPI_Barrier(W, ierr)
  call tally('MPI_Irsend'); call MPI_Irsend(a, 3, MPI_INTEGER, right, 6, W, r(2), ierr)
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Testall'); call MPI_Testall(2, r, flag, MPI_STATUSES_IGNORE, ierr)
  end do

  ! Isend / Issend with wildcard Irecv, completed by Waitany, Waitsome, Test, Testany, Testsome
  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, r(1), ierr)
  call tally('MPI_Isend'); call MPI_Isend(a, 2, MPI_INTEGER, right, 7, W, r(2), ierr)
  do done = 1, 2
     call tally('MPI_Waitany'); call MPI_Waitany(2, r, idx, MPI_STATUS_IGNORE, ierr)
     call check(idx == 1 .or. idx == 2, 'Waitany index counts from 1')
     call check(r(idx) == MPI_REQUEST_NULL, 'Waitany nulls the request')
  end do
  call tally('MPI_Waitany'); call MPI_Waitany(2, r, idx, MPI_STATUS_IGNORE, ierr) ! all null
  ! (MPICH 4.0's binding adds 1 to MPI_UNDEFINED too)
  call check(idx == MPI_UNDEFINED .or. idx == MPI_UNDEFINED + 1, 'Waitany of null requests')

  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, left, 8, W, r(1), ierr)
  call tally('MPI_Issend'); call MPI_Issend(a, 2, MPI_INTEGER, right, 8, W, r(2), ierr)
  done = 0
  do while (done < 2)
     call tally('MPI_Waitsome'); call MPI_Waitsome(2, r, outcount, indices, MPI_STATUSES_IGNORE, ierr)
     call check(outcount >= 1, 'Waitsome completes some')
     call check(all(indices(1:outcount) >= 1 .and. indices(1:outcount) <= 2), 'Waitsome indices')
     done = done + outcount
  end do

  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, MPI_ANY_SOURCE, 9, W, r(1), ierr)
  call tally('MPI_Isend'); call MPI_Isend(a, 2, MPI_INTEGER, right, 9, W, r(2), ierr)
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Test'); call MPI_Test(r(2), flag, MPI_STATUS_IGNORE, ierr)
  end do
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Test'); call MPI_Test(r(1), flag, st, ierr)
  end do
  call check(st(MPI_SOURCE) == left, 'Test status source')

  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, left, 10, W, r(1), ierr)
  call tally('MPI_Isend'); call MPI_Isend(a, 2, MPI_INTEGER, right, 10, W, r(2), ierr)
  done = 0
  do while (done < 2)
     call tally('MPI_Testany'); call MPI_Testany(2, r, idx, flag, MPI_STATUS_IGNORE, ierr)
     if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
  end do

  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, r(1), ierr)
  call tally('MPI_Isend'); call MPI_Isend(a, 2, MPI_INTEGER, right, 11, W, r(2), ierr)
  r(3) = MPI_REQUEST_NULL
  done = 0
  do while (done < 2)
     call tally('MPI_Testsome'); call MPI_Testsome(3, r, outcount, indices, sts, ierr)
     do i = 1, outcount
        if (indices(i) == 1) call check(sts(MPI_SOURCE, i) == left .and. sts(MPI_TAG, i) == 11, &
             'Testsome status')
     end do
     if (outcount /= MPI_UNDEFINED) done = done + outcount
  end do

  ! sendrecv, plain and wildcard; sendrecv_replace
  call tally('MPI_Sendrecv')
  call MPI_Sendrecv(a, 6, MPI_INTEGER, right, 12, b, 6, MPI_INTEGER, left, 12, W, MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Sendrecv')
  call MPI_Sendrecv(a, 7, MPI_INTEGER, right, 13, b, 7, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, st, ierr)
  call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 13, 'Sendrecv status')
  call check(b(1) == left * 100, 'Sendrecv data')
  call tally('MPI_Sendrecv_replace')
  call MPI_Sendrecv_replace(b, 9, MPI_INTEGER, right, 14, MPI_ANY_SOURCE, 14, W, MPI_STATUS_IGNORE, ierr)

  ! probes
  if (even) then
     call tally('MPI_Send'); call MPI_Send(a, 10, MPI_INTEGER, right, 15, W, ierr)
     call tally('MPI_Probe'); call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, st, ierr)
     call tally('MPI_Recv')
     call MPI_Recv(b, 64, MPI_INTEGER, st(MPI_SOURCE), st(MPI_TAG), W, MPI_STATUS_IGNORE, ierr)
  else
     call tally('MPI_Probe'); call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, MPI_STATUS_IGNORE, ierr)
     call tally('MPI_Recv'); call MPI_Recv(b, 64, MPI_INTEGER, left, 15, W, MPI_STATUS_IGNORE, ierr)
     call tally('MPI_Send'); call MPI_Send(a, 10, MPI_INTEGER, right, 15, W, ierr)
  end if
  call tally('MPI_Isend'); call MPI_Isend(a, 11, MPI_INTEGER, right, 16, W, r(1), ierr)
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Iprobe'); call MPI_Iprobe(MPI_ANY_SOURCE, 16, W, flag, st, ierr)
  end do
  call MPI_Get_count(st, MPI_INTEGER, got, ierr)
  call check(got == 11 .and. st(MPI_SOURCE) == left, 'Iprobe status')
  call tally('MPI_Recv'); call MPI_Recv(b, 11, MPI_INTEGER, MPI_ANY_SOURCE, 16, W, MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE, ierr)

  ! matched probes: Mprobe + Mrecv, Improbe (polling) + Imrecv + Wait, Mprobe on MPI_PROC_NULL
  call tally('MPI_Isend'); call MPI_Isend(a, 13, MPI_INTEGER, right, 20, W, r(1), ierr)
  call tally('MPI_Mprobe'); call MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, msg, st, ierr)
  call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 20, 'Mprobe status')
  call tally('MPI_Mrecv'); call MPI_Mrecv(b, 64, MPI_INTEGER, msg, MPI_STATUS_IGNORE, ierr)
  call check(msg == MPI_MESSAGE_NULL .and. b(1) == left * 100, 'Mrecv')
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Isend'); call MPI_Isend(a, 14, MPI_INTEGER, right, 21, W, r(1), ierr)
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Improbe'); call MPI_Improbe(MPI_ANY_SOURCE, 21, W, flag, msg, MPI_STATUS_IGNORE, ierr)
  end do
  call tally('MPI_Imrecv'); call MPI_Imrecv(b, 64, MPI_INTEGER, msg, r(2), ierr)
  call check(msg == MPI_MESSAGE_NULL, 'Imrecv takes the message')
  call tally('MPI_Wait'); call MPI_Wait(r(2), st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, got, ierr)
  call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 21 .and. got == 14, 'Imrecv status')
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Mprobe'); call MPI_Mprobe(MPI_PROC_NULL, 22, W, msg, st, ierr)
  call check(msg == MPI_MESSAGE_NO_PROC .and. st(MPI_SOURCE) == MPI_PROC_NULL, 'Mprobe on MPI_PROC_NULL')
  call tally('MPI_Mrecv'); call MPI_Mrecv(b, 1, MPI_INTEGER, msg, MPI_STATUS_IGNORE, ierr)

  ! a receive that is never matched, cancelled
  call tally('MPI_Irecv'); call MPI_Irecv(b, 1, MPI_INTEGER, left, 999, W, r(1), ierr)
  call tally('MPI_Cancel'); call MPI_Cancel(r(1), ierr)
  call tally('MPI_Wait'); call MPI_Wait(r(1), st, ierr)
  call MPI_Test_cancelled(st, flag, ierr)
  call check(flag, 'receive cancelled')

  ! a send whose request is freed, completed by the receive
  call tally('MPI_Isend'); call MPI_Isend(a, 2, MPI_INTEGER, right, 19, W, r(1), ierr)
  call tally('MPI_Request_free'); call MPI_Request_free(r(1), ierr)
  call check(r(1) == MPI_REQUEST_NULL, 'Request_free nulls the request')
  call tally('MPI_Recv'); call MPI_Recv(b, 2, MPI_INTEGER, left, 19, W, MPI_STATUS_IGNORE, ierr)

  ! MPI_PROC_NULL peers
  call tally('MPI_Send'); call MPI_Send(a, 1, MPI_INTEGER, MPI_PROC_NULL, 17, W, ierr)
  call tally('MPI_Recv'); call MPI_Recv(b, 1, MPI_INTEGER, MPI_PROC_NULL, 17, W, MPI_STATUS_IGNORE, ierr)

  ! a Waitall with a null request and a wildcard receive, statuses kept
  r(1) = MPI_REQUEST_NULL
  call tally('MPI_Irecv'); call MPI_Irecv(b, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, r(2), ierr)
  call tally('MPI_Isend'); call MPI_Isend(a, 4, MPI_INTEGER, right, 18, W, r(3), ierr)
  call tally('MPI_Waitall'); call MPI_Waitall(3, r, sts, ierr)
  call check(sts(MPI_SOURCE, 2) == left .and. sts(MPI_TAG, 2) == 18, 'Waitall statuses')

  ! a few collectives, MPI_IN_PLACE among them
  x = [(rank + i, i = 1, 8)]
  call tally('MPI_Bcast'); call MPI_Bcast(x, 8, MPI_DOUBLE_PRECISION, size - 1, W, ierr)
  call tally('MPI_Allreduce'); call MPI_Allreduce(x, y, 8, MPI_DOUBLE_PRECISION, MPI_SUM, W, ierr)
  call tally('MPI_Allreduce'); call MPI_Allreduce(MPI_IN_PLACE, y, 8, MPI_DOUBLE_PRECISION, MPI_MAX, W, ierr)
  call tally('MPI_Reduce'); call MPI_Reduce(x, y, 4, MPI_DOUBLE_PRECISION, MPI_SUM, 0, W, ierr)
  v = rank
  call tally('MPI_Allgather'); call MPI_Allgather(v, 1, MPI_INTEGER, a, 1, MPI_INTEGER, W, ierr)
  call check(all(a(1:size) == [(i, i = 0, size - 1)]), 'Allgather result')

  ! split in two halves, ranked in reverse world order; a wildcard fan-in on it
  call tally('MPI_Comm_split'); call MPI_Comm_split(W, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, hme, ierr)
  call MPI_Comm_size(half, hn, ierr)
  call tally('MPI_Allreduce'); call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  if (hme == 0) then
     do i = 1, hn - 1
        call tally('MPI_Recv'); call MPI_Recv(k, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, half, st, ierr)
        call check(st(MPI_TAG) == k, 'fan-in status')
     end do
  else
     call tally('MPI_Send'); call MPI_Send(rank, 1, MPI_INTEGER, 0, rank, half, ierr)
  end if
  call tally('MPI_Comm_free'); call MPI_Comm_free(half, ierr)
  call check(half == MPI_COMM_NULL, 'Comm_free nulls the handle')

  ! a Cartesian ring, reordered: its creation is not recorded, its traffic is
  call MPI_Cart_create(W, 1, [size], [.true.], .true., ring, ierr)
  call MPI_Cart_shift(ring, 0, 1, src, dst, ierr)
  call tally('MPI_Sendrecv')
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, dst, 9, k, 1, MPI_INTEGER, src, 9, ring, MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Comm_free'); call MPI_Comm_free(ring, ierr)

  call tally('MPI_Finalize')
  call print_counts()
  call MPI_Finalize(ierr)
end program fortran
