! `use mpi`: what persist.c and rma.c do in C. Persistent requests of every *_init routine (not
! recorded), started by MPI_Start and MPI_Startall, each start counted as the nonblocking routine
! the tracer records it as, on MPI_COMM_WORLD and on a communicator of MPI_Comm_create_group;
! every one-sided routine the tracer records (fences, post/start/complete/wait, passive target;
! windows of MPI_Win_create, _allocate with its baseptr, _allocate_shared, _create_dynamic); every
! neighborhood collective on a periodic Cartesian ring, MPI_Neighbor_alltoallw on a graph too. 2 or 4 (any even number of) ranks; under
! Open MPI the windows need OMPI_MCA_osc=sm,pt2pt (see run.sh).
program fortran_persist
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_f_pointer
  use mpi
  use fortran_counts
  implicit none
  integer, parameter :: W = MPI_COMM_WORLD, AK = MPI_ADDRESS_KIND
  integer :: rank, size, right, left, ierr, k, i, bufsize, win, world, from, to, node, ring
  integer :: grp, rev, rr, one, old, cmp
  integer :: r(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2), counts(2), displs(2), types(2)
  integer :: a(64), got(4)
  integer, volatile :: b(64), mem(16) ! written by the library between calls that do not name them
  integer(kind=AK) :: baseptr, bdispls(2)
  integer, pointer :: base(:)
  character, allocatable :: bsendbuf(:)

  call tally('MPI_Init'); call MPI_Init(ierr)
  call MPI_Comm_rank(W, rank, ierr)
  call MPI_Comm_size(W, size, ierr)
  call check(mod(size, 2) == 0, 'even number of ranks')
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  a = [(rank * 100 + i, i = 0, 63)]

  ! ---- persistent requests: one pair started 3 times with MPI_Start, 2 times with MPI_Startall
  call MPI_Recv_init(b, 8, MPI_INTEGER, left, 1, W, r(1), ierr)
  call MPI_Send_init(a, 8, MPI_INTEGER, right, 1, W, r(2), ierr)
  do k = 1, 3
     call tally('MPI_Irecv'); call MPI_Start(r(1), ierr)
     call tally('MPI_Isend'); call MPI_Start(r(2), ierr)
     call tally('MPI_Waitall'); call MPI_Waitall(2, r, sts, ierr)
     call check(all(r /= MPI_REQUEST_NULL) .and. b(1) == left * 100, 'Start, Waitall')
     call check(sts(MPI_SOURCE, 1) == left .and. sts(MPI_TAG, 1) == 1, 'Start status')
  end do
  do k = 1, 2
     call tally('MPI_Irecv'); call tally('MPI_Isend'); call MPI_Startall(2, r, ierr)
     call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Request_free(r(1), ierr) ! inactive: not recorded
  call MPI_Request_free(r(2), ierr)
  call check(all(r == MPI_REQUEST_NULL), 'Request_free nulls the requests')

  ! synchronous sends into a wildcard receive, completed by MPI_Wait
  call MPI_Recv_init(b, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, r(1), ierr)
  call MPI_Ssend_init(a, 4, MPI_INTEGER, right, 2, W, r(2), ierr)
  do k = 1, 2
     call tally('MPI_Irecv'); call tally('MPI_Issend'); call MPI_Startall(2, r, ierr)
     call tally('MPI_Wait'); call MPI_Wait(r(1), st, ierr)
     call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 2, 'Wait status')
     call tally('MPI_Wait'); call MPI_Wait(r(2), MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Request_free(r(1), ierr)
  call MPI_Request_free(r(2), ierr)

  ! buffered sends
  bufsize = 4 * (64 * 4 + MPI_BSEND_OVERHEAD)
  allocate (bsendbuf(bufsize))
  call MPI_Buffer_attach(bsendbuf, bufsize, ierr)
  call MPI_Recv_init(b, 16, MPI_INTEGER, left, 3, W, r(1), ierr)
  call MPI_Bsend_init(a, 16, MPI_INTEGER, right, 3, W, r(2), ierr)
  call tally('MPI_Irecv'); call tally('MPI_Ibsend'); call MPI_Startall(2, r, ierr)
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
  call MPI_Request_free(r(1), ierr)
  call MPI_Request_free(r(2), ierr)
  call MPI_Buffer_detach(bsendbuf, bufsize, ierr)

  ! ready sends: the receive is started before the barrier
  call MPI_Recv_init(b, 3, MPI_INTEGER, left, 5, W, r(1), ierr)
  call MPI_Rsend_init(a, 3, MPI_INTEGER, right, 5, W, r(2), ierr)
  call tally('MPI_Irecv'); call MPI_Start(r(1), ierr)
  call tally('MPI_Barrier'); call MPI_Barrier(W, ierr)
  call tally('MPI_Irsend'); call MPI_Start(r(2), ierr)
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
  call MPI_Request_free(r(1), ierr)
  call MPI_Request_free(r(2), ierr)

  ! an active send freed: recorded as MPI_Request_free of the started send
  call MPI_Send_init(a, 2, MPI_INTEGER, right, 7, W, r(2), ierr)
  call tally('MPI_Isend'); call MPI_Start(r(2), ierr)
  call tally('MPI_Request_free'); call MPI_Request_free(r(2), ierr)
  call tally('MPI_Recv'); call MPI_Recv(b, 2, MPI_INTEGER, left, 7, W, MPI_STATUS_IGNORE, ierr)

  ! a communicator of MPI_Comm_create_group (not recorded; its traffic is): the world reversed
  call MPI_Comm_group(W, world, ierr)
  call MPI_Group_incl(world, size, [(size - 1 - i, i = 0, size - 1)], grp, ierr)
  call MPI_Comm_create_group(W, grp, 77, rev, ierr)
  call MPI_Group_free(grp, ierr)
  call MPI_Comm_rank(rev, rr, ierr)
  call check(rr == size - 1 - rank, 'Comm_create_group rank')
  call MPI_Recv_init(b, 6, MPI_INTEGER, mod(rr + size - 1, size), 8, rev, r(1), ierr)
  call MPI_Send_init(a, 6, MPI_INTEGER, mod(rr + 1, size), 8, rev, r(2), ierr)
  call tally('MPI_Irecv'); call tally('MPI_Isend'); call MPI_Startall(2, r, ierr)
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
  call check(b(1) == right * 100, 'Startall on the reversed world')
  call MPI_Request_free(r(1), ierr)
  call MPI_Request_free(r(2), ierr)
  call tally('MPI_Comm_free'); call MPI_Comm_free(rev, ierr)

  ! ---- one-sided: active target with fences on a window of the program's memory
  mem = 0
  one = 1
  call tally('MPI_Win_create')
  call MPI_Win_create(mem, 64_AK, 4, MPI_INFO_NULL, W, win, ierr)
  call tally('MPI_Win_fence'); call MPI_Win_fence(0, win, ierr)
  call tally('MPI_Put'); call MPI_Put(a, 4, MPI_INTEGER, right, 0_AK, 4, MPI_INTEGER, win, ierr)
  call tally('MPI_Win_fence'); call MPI_Win_fence(0, win, ierr)
  call check(mem(1) == left * 100 .and. mem(4) == left * 100 + 3, 'Put')
  call tally('MPI_Get'); call MPI_Get(b, 4, MPI_INTEGER, right, 0_AK, 4, MPI_INTEGER, win, ierr)
  call tally('MPI_Win_fence'); call MPI_Win_fence(0, win, ierr)
  call check(b(1) == rank * 100, 'Get')
  call tally('MPI_Accumulate')
  call MPI_Accumulate(one, 1, MPI_INTEGER, right, 8_AK, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call tally('MPI_Win_fence'); call MPI_Win_fence(0, win, ierr)
  call check(mem(9) == 1, 'Accumulate')

  ! post/start/complete/wait: my left neighbour puts into my window, I into my right's
  call MPI_Group_incl(world, 1, [left], from, ierr)
  call MPI_Group_incl(world, 1, [right], to, ierr)
  call tally('MPI_Win_post'); call MPI_Win_post(from, 0, win, ierr)
  call tally('MPI_Win_start'); call MPI_Win_start(to, 0, win, ierr)
  call tally('MPI_Put'); call MPI_Put(a(5), 2, MPI_INTEGER, right, 10_AK, 2, MPI_INTEGER, win, ierr)
  call tally('MPI_Win_complete'); call MPI_Win_complete(win, ierr)
  call tally('MPI_Win_wait'); call MPI_Win_wait(win, ierr)
  call check(mem(11) == left * 100 + 4, 'Put in a post/start epoch')
  call MPI_Group_free(from, ierr)
  call MPI_Group_free(to, ierr)
  call tally('MPI_Win_free'); call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'Win_free nulls the handle')

  ! passive target on a window the library allocates, read through its baseptr
  call tally('MPI_Win_allocate')
  call MPI_Win_allocate(64_AK, 4, MPI_INFO_NULL, W, baseptr, win, ierr)
  call c_f_pointer(transfer(baseptr, c_null_ptr), base, [16])
  base = 0
  call tally('MPI_Barrier'); call MPI_Barrier(W, ierr)
  call tally('MPI_Win_lock'); call MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win, ierr)
  call tally('MPI_Put'); call MPI_Put(a, 2, MPI_INTEGER, right, 4_AK, 2, MPI_INTEGER, win, ierr)
  call tally('MPI_Win_flush'); call MPI_Win_flush(right, win, ierr)
  call tally('MPI_Get'); call MPI_Get(b, 1, MPI_INTEGER, right, 12_AK, 1, MPI_INTEGER, win, ierr)
  call tally('MPI_Win_flush_local'); call MPI_Win_flush_local(right, win, ierr)
  call tally('MPI_Win_unlock'); call MPI_Win_unlock(right, win, ierr)
  call tally('MPI_Barrier'); call MPI_Barrier(W, ierr)
  call tally('MPI_Win_lock_all'); call MPI_Win_lock_all(0, win, ierr)
  call tally('MPI_Fetch_and_op')
  call MPI_Fetch_and_op(one, old, MPI_INTEGER, right, 0_AK, MPI_SUM, win, ierr)
  call tally('MPI_Win_flush_all'); call MPI_Win_flush_all(win, ierr)
  cmp = 0
  call tally('MPI_Compare_and_swap')
  call MPI_Compare_and_swap(one, cmp, old, MPI_INTEGER, right, 1_AK, win, ierr)
  call tally('MPI_Get_accumulate')
  call MPI_Get_accumulate(one, 1, MPI_INTEGER, old, 1, MPI_INTEGER, right, 2_AK, 1, MPI_INTEGER, &
       MPI_SUM, win, ierr)
  call tally('MPI_Win_flush_all'); call MPI_Win_flush_all(win, ierr)
  call tally('MPI_Win_sync'); call MPI_Win_sync(win, ierr)
  call tally('MPI_Win_unlock_all'); call MPI_Win_unlock_all(win, ierr)
  call tally('MPI_Barrier'); call MPI_Barrier(W, ierr)
  call check(all(base(1:3) == 1) .and. base(5) == left * 100, 'passive target through baseptr')
  call tally('MPI_Win_free'); call MPI_Win_free(win, ierr)

  ! a shared-memory window among the ranks of one node, a dynamic window
  call MPI_Comm_split_type(W, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
  call tally('MPI_Win_allocate_shared')
  call MPI_Win_allocate_shared(16_AK, 4, MPI_INFO_NULL, node, baseptr, win, ierr)
  call tally('MPI_Win_fence'); call MPI_Win_fence(0, win, ierr)
  call tally('MPI_Win_free'); call MPI_Win_free(win, ierr)
  call tally('MPI_Comm_free'); call MPI_Comm_free(node, ierr)
  call tally('MPI_Win_create_dynamic'); call MPI_Win_create_dynamic(MPI_INFO_NULL, W, win, ierr)
  call tally('MPI_Win_free'); call MPI_Win_free(win, ierr)
  call MPI_Group_free(world, ierr)

  ! ---- neighborhood collectives on a periodic ring: neighbours left and right
  call MPI_Cart_create(W, 1, [size], [.true.], .false., ring, ierr)
  counts = 1
  displs = [0, 1]
  bdispls = [0_AK, 4_AK]
  types = MPI_INTEGER
  call tally('MPI_Neighbor_allgather')
  call MPI_Neighbor_allgather(a, 1, MPI_INTEGER, got, 1, MPI_INTEGER, ring, ierr)
  call check(got(1) == left * 100 .and. got(2) == right * 100, 'Neighbor_allgather')
  call tally('MPI_Neighbor_allgatherv')
  call MPI_Neighbor_allgatherv(a, 1, MPI_INTEGER, got, counts, displs, MPI_INTEGER, ring, ierr)
  call tally('MPI_Neighbor_alltoall')
  call MPI_Neighbor_alltoall(a, 1, MPI_INTEGER, got, 1, MPI_INTEGER, ring, ierr)
  call check(got(1) == left * 100 + 1 .and. got(2) == right * 100, 'Neighbor_alltoall')
  call tally('MPI_Neighbor_alltoallv')
  call MPI_Neighbor_alltoallv(a, counts, displs, MPI_INTEGER, got, counts, displs, MPI_INTEGER, &
       ring, ierr)
  got = -1
  call tally('MPI_Neighbor_alltoallw')
  call MPI_Neighbor_alltoallw(a, counts, bdispls, types, got, counts, bdispls, types, ring, ierr)
  ! (on 2 ranks both neighbours are one rank: MPICH may swap its two blocks)
  call check(got(1) + got(2) == left * 100 + 1 + right * 100 .and. &
       (size == 2 .or. got(1) == left * 100 + 1), 'Neighbor_alltoallw')
  call tally('MPI_Barrier'); call MPI_Barrier(ring, ierr)
  call tally('MPI_Comm_free'); call MPI_Comm_free(ring, ierr)
  ! the ring as a graph (neighbours right, left): Neighbor_alltoallw's datatype arrays as long
  ! as the graph's degree; fortran_f08.f90 does a distributed graph
  call MPI_Graph_create(W, size, [(2 * i, i = 1, size)], &
       [(mod(i + 1, size), mod(i + size - 1, size), i = 0, size - 1)], .false., ring, ierr)
  call tally('MPI_Neighbor_alltoallw')
  call MPI_Neighbor_alltoallw(a, counts, bdispls, types, got, counts, bdispls, types, ring, ierr)
  call tally('MPI_Comm_free'); call MPI_Comm_free(ring, ierr)

  ! messages around them still match
  call tally('MPI_Sendrecv')
  call MPI_Sendrecv(a, 2, MPI_INTEGER, right, 1, b, 2, MPI_INTEGER, left, 1, W, MPI_STATUS_IGNORE, ierr)

  call tally('MPI_Finalize')
  call print_counts()
  call MPI_Finalize(ierr)
end program fortran_persist
