! `use mpi_f08`: handles as derived types, TYPE(MPI_Status), optional ierror. Point-to-point
! completed by each Wait and Test routine, probes and matched probes, collectives with
! MPI_IN_PLACE and v-counts, MPI_Comm_split/dup/free, and the communicators of Cart_create,
! Cart_sub, Graph_create, Dist_graph_create_adjacent (MPI_UNWEIGHTED), Intercomm_merge,
! Comm_dup_with_info and Comm_create_group, which are not recorded but whose calls are;
! nonblocking collectives, MPI_Ialltoallw with a datatype per peer, MPI_Comm_idup and calls on
! its communicator; persistent requests, a window of MPI_Win_allocate (its baseptr a
! TYPE(C_PTR)), and MPI_Neighbor_alltoallw (datatype arrays) on the distributed graph. In Open
! MPI the routines with LOGICAL arguments (Test*, Iprobe, Improbe, the topology constructors,
! Intercomm_merge) take another path through the mpi_f08 library than the rest. Under Open MPI
! the window needs OMPI_MCA_osc=sm,pt2pt (see run.sh). Indices of Waitany & co. are not checked
! here (fortran.f90 does): MPICH 4.0's mpi_f08 returns them counted from 0. 2 or 4 (any even
! number) ranks, at most 16.
program fortran_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08
  use fortran_counts
  implicit none
  type(MPI_Comm) :: W, half, dup, ring, grid, row, graph, dist, inter, merged, info_dup, grp_comm
  type(MPI_Comm) :: idup
  type(MPI_Request) :: r(4)
  type(MPI_Message) :: msg
  type(MPI_Status) :: st, sts(4)
  type(MPI_Group) :: wg
  type(MPI_Win) :: win
  type(MPI_Datatype) :: types(1), wtypes(16)
  type(c_ptr) :: baseptr
  integer, pointer :: base(:)
  integer(kind=MPI_ADDRESS_KIND) :: bdispls(1)
  integer :: rank, size, right, left, i, done, idx, outcount, got, v, src, dst
  integer :: a(64), b(64), indices(4), counts(16), displs(16), index(16), edges(32), ones(16)
  double precision :: x(256), y(256)
  logical :: even, flag

  W = MPI_COMM_WORLD
  call tally('MPI_Init'); call MPI_Init()
  call MPI_Comm_rank(W, rank)
  call MPI_Comm_size(W, size)
  call check(mod(size, 2) == 0 .and. size <= 16, 'even number of ranks, at most 16')
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  even = mod(rank, 2) == 0
  a = [(rank * 100 + i, i = 0, 63)]

  ! blocking, even ranks send first; statuses kept and ignored
  if (even) then
     call tally('MPI_Send'); call MPI_Send(a, 4, MPI_INTEGER, right, 1, W)
     call tally('MPI_Recv'); call MPI_Recv(b, 4, MPI_INTEGER, left, 1, W, st)
  else
     call tally('MPI_Recv'); call MPI_Recv(b, 4, MPI_INTEGER, MPI_ANY_SOURCE, 1, W, st)
     call tally('MPI_Send'); call MPI_Send(a, 4, MPI_INTEGER, right, 1, W)
  end if
  call check(st%MPI_SOURCE == left .and. st%MPI_TAG == 1 .and. b(1) == left * 100, 'Recv')
  call tally('MPI_Ssend'); call MPI_Ssend(a, 2, MPI_INTEGER, MPI_PROC_NULL, 2, W)
  call tally('MPI_Sendrecv')
  call MPI_Sendrecv(a, 6, MPI_INTEGER, right, 3, b, 6, MPI_INTEGER, MPI_ANY_SOURCE, 3, W, &
       MPI_STATUS_IGNORE)

  ! nonblocking: Waitall with statuses, Waitany, Waitsome
  call tally('MPI_Irecv'); call MPI_Irecv(b, 5, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, r(1))
  call tally('MPI_Isend'); call MPI_Isend(a, 5, MPI_INTEGER, right, 4, W, r(2))
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, sts)
  call check(sts(1)%MPI_SOURCE == left .and. sts(1)%MPI_TAG == 4, 'Waitall statuses')
  call MPI_Get_count(sts(1), MPI_INTEGER, got)
  call check(got == 5, 'Get_count')
  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, left, 5, W, r(1))
  call tally('MPI_Issend'); call MPI_Issend(a, 2, MPI_INTEGER, right, 5, W, r(2))
  do done = 1, 2
     call tally('MPI_Waitany'); call MPI_Waitany(2, r, idx, MPI_STATUS_IGNORE)
  end do
  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, left, 6, W, r(1))
  call tally('MPI_Isend'); call MPI_Isend(a, 2, MPI_INTEGER, right, 6, W, r(2))
  done = 0
  do while (done < 2)
     call tally('MPI_Waitsome'); call MPI_Waitsome(2, r, outcount, indices, MPI_STATUSES_IGNORE)
     done = done + outcount
  end do
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE) ! a null request

  ! the Test routines and Iprobe (LOGICAL flag)
  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, MPI_ANY_SOURCE, 7, W, r(1))
  call tally('MPI_Isend'); call MPI_Isend(a, 2, MPI_INTEGER, right, 7, W, r(2))
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Test'); call MPI_Test(r(1), flag, st)
  end do
  call check(st%MPI_SOURCE == left .and. r(1) == MPI_REQUEST_NULL, 'Test')
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Testall'); call MPI_Testall(1, r(2:2), flag, MPI_STATUSES_IGNORE)
  end do
  call tally('MPI_Irecv'); call MPI_Irecv(b, 2, MPI_INTEGER, left, 8, W, r(1))
  call tally('MPI_Barrier'); call MPI_Barrier(W) ! the receive is posted: a ready send
  call tally('MPI_Irsend'); call MPI_Irsend(a, 2, MPI_INTEGER, right, 8, W, r(2))
  done = 0
  do while (done < 2)
     call tally('MPI_Testany'); call MPI_Testany(2, r, idx, flag, MPI_STATUS_IGNORE)
     if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
  end do
  call tally('MPI_Irecv'); call MPI_Irecv(b, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, W, r(1))
  call tally('MPI_Issend'); call MPI_Issend(a, 3, MPI_INTEGER, right, 9, W, r(2))
  done = 0
  do while (done < 2)
     call tally('MPI_Testsome'); call MPI_Testsome(2, r, outcount, indices, sts)
     done = done + outcount
  end do
  call tally('MPI_Isend'); call MPI_Isend(a, 11, MPI_INTEGER, right, 10, W, r(1))
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Iprobe'); call MPI_Iprobe(MPI_ANY_SOURCE, 10, W, flag, st)
  end do
  call tally('MPI_Probe'); call MPI_Probe(st%MPI_SOURCE, 10, W, MPI_STATUS_IGNORE)
  call tally('MPI_Recv'); call MPI_Recv(b, 11, MPI_INTEGER, left, 10, W, MPI_STATUS_IGNORE)
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE)
  ! matched probes: Improbe (LOGICAL flag) + Imrecv, Mprobe + Mrecv
  call tally('MPI_Isend'); call MPI_Isend(a, 12, MPI_INTEGER, right, 13, W, r(1))
  flag = .false.
  do while (.not. flag)
     call tally('MPI_Improbe'); call MPI_Improbe(MPI_ANY_SOURCE, 13, W, flag, msg, st)
  end do
  call check(st%MPI_SOURCE == left, 'Improbe status')
  call tally('MPI_Imrecv'); call MPI_Imrecv(b, 12, MPI_INTEGER, msg, r(2))
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE)
  call tally('MPI_Isend'); call MPI_Isend(a, 5, MPI_INTEGER, right, 14, W, r(1))
  call tally('MPI_Mprobe'); call MPI_Mprobe(left, MPI_ANY_TAG, W, msg, MPI_STATUS_IGNORE)
  call tally('MPI_Mrecv'); call MPI_Mrecv(b, 5, MPI_INTEGER, msg, st)
  call check(st%MPI_TAG == 14 .and. msg == MPI_MESSAGE_NULL, 'Mrecv')
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE)
  call tally('MPI_Irecv'); call MPI_Irecv(b, 1, MPI_INTEGER, left, 999, W, r(1))
  call tally('MPI_Cancel'); call MPI_Cancel(r(1))
  call tally('MPI_Wait'); call MPI_Wait(r(1), st)
  call MPI_Test_cancelled(st, flag)
  call check(flag, 'receive cancelled')
  call tally('MPI_Sendrecv_replace')
  call MPI_Sendrecv_replace(b, 3, MPI_INTEGER, right, 11, left, 11, W, MPI_STATUS_IGNORE)
  call tally('MPI_Rsend'); call MPI_Rsend(a, 1, MPI_INTEGER, MPI_PROC_NULL, 12, W)

  ! persistent requests: each start counted as the nonblocking routine it is recorded as
  call MPI_Recv_init(b, 3, MPI_INTEGER, left, 15, W, r(1))
  call MPI_Send_init(a, 3, MPI_INTEGER, right, 15, W, r(2))
  call tally('MPI_Irecv'); call MPI_Start(r(1))
  call tally('MPI_Isend'); call MPI_Start(r(2))
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, MPI_STATUSES_IGNORE)
  call tally('MPI_Irecv'); call tally('MPI_Isend'); call MPI_Startall(2, r)
  call tally('MPI_Waitall'); call MPI_Waitall(2, r, sts)
  call check(sts(1)%MPI_SOURCE == left .and. b(1) == left * 100, 'Startall')
  call MPI_Request_free(r(1))
  call MPI_Request_free(r(2))

  ! a window the library allocates, read through its TYPE(C_PTR) baseptr
  call tally('MPI_Win_allocate')
  call MPI_Win_allocate(64_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, W, baseptr, win)
  call c_f_pointer(baseptr, base, [16])
  base = 0
  call tally('MPI_Win_fence'); call MPI_Win_fence(0, win)
  call tally('MPI_Put'); call MPI_Put(a, 2, MPI_INTEGER, right, 3_MPI_ADDRESS_KIND, 2, MPI_INTEGER, win)
  call tally('MPI_Win_fence'); call MPI_Win_fence(0, win)
  call check(base(4) == left * 100 .and. base(5) == left * 100 + 1, 'Put into an allocated window')
  call tally('MPI_Win_free'); call MPI_Win_free(win)

  ! collectives: MPI_IN_PLACE, v-counts
  x = [(rank + i, i = 1, 256)]
  do i = 1, size
     counts(i) = i
     displs(i) = (i - 1) * 16
  end do
  call tally('MPI_Bcast'); call MPI_Bcast(x, 8, MPI_DOUBLE_PRECISION, size - 1, W)
  call tally('MPI_Allreduce'); call MPI_Allreduce(MPI_IN_PLACE, x, 8, MPI_DOUBLE_PRECISION, MPI_SUM, W)
  call tally('MPI_Reduce'); call MPI_Reduce(x, y, 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, W)
  call tally('MPI_Gatherv')
  call MPI_Gatherv(x, counts(rank + 1), MPI_DOUBLE_PRECISION, y, counts, displs, &
       MPI_DOUBLE_PRECISION, 0, W)
  call tally('MPI_Alltoallv')
  call MPI_Alltoallv(x, counts, displs, MPI_DOUBLE_PRECISION, y, [(rank + 1, i = 1, size)], &
       displs, MPI_DOUBLE_PRECISION, W)
  call tally('MPI_Reduce_scatter_block')
  call MPI_Reduce_scatter_block(x, y, 2, MPI_DOUBLE_PRECISION, MPI_SUM, W)
  call tally('MPI_Scan'); call MPI_Scan(x, y, 3, MPI_DOUBLE_PRECISION, MPI_SUM, W)
  v = rank
  call tally('MPI_Allgather'); call MPI_Allgather(v, 1, MPI_INTEGER, a, 1, MPI_INTEGER, W)
  call check(all(a(1:size) == [(i, i = 0, size - 1)]), 'Allgather result')

  ! nonblocking collectives and an idup, completed together; Ialltoallw exchanging one
  ! MPI_INTEGER with even ranks and one MPI_DOUBLE_PRECISION with odd ones, 8 bytes a peer
  call tally('MPI_Ibarrier'); call MPI_Ibarrier(W, r(1))
  call tally('MPI_Ibcast'); call MPI_Ibcast(x, 4, MPI_DOUBLE_PRECISION, 0, W, r(2))
  call tally('MPI_Iallreduce'); call MPI_Iallreduce(a, b, 4, MPI_INTEGER, MPI_SUM, W, r(3))
  call tally('MPI_Comm_idup'); call MPI_Comm_idup(W, idup, r(4))
  call tally('MPI_Waitall'); call MPI_Waitall(4, r, MPI_STATUSES_IGNORE)
  call check(b(2) == size, 'Iallreduce')
  call tally('MPI_Bcast'); call MPI_Bcast(v, 1, MPI_INTEGER, size - 1, idup)
  call tally('MPI_Allreduce'); call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, idup)
  call check(v == size * (size - 1), 'Allreduce on the idup communicator')
  call tally('MPI_Comm_free'); call MPI_Comm_free(idup)
  do i = 1, size
     wtypes(i) = merge(MPI_INTEGER, MPI_DOUBLE_PRECISION, mod(rank + i - 1, 2) == 0)
     ones(i) = 1
     displs(i) = (i - 1) * 8
     a(2 * i - 1) = rank * 100 + i - 1
  end do
  call tally('MPI_Ialltoallw')
  call MPI_Ialltoallw(a, ones, displs, wtypes, b, ones, displs, wtypes, W, r(1))
  call tally('MPI_Wait'); call MPI_Wait(r(1), MPI_STATUS_IGNORE)
  call check(b(2 * left + 1) == left * 100 + rank, 'Ialltoallw')

  ! communicators
  call tally('MPI_Comm_split'); call MPI_Comm_split(W, mod(rank, 2), -rank, half)
  call tally('MPI_Comm_dup'); call MPI_Comm_dup(half, dup)
  call tally('MPI_Allreduce'); call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, dup)
  call tally('MPI_Comm_free'); call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'Comm_free nulls the handle')

  call MPI_Cart_create(W, 1, [size], [.true.], .true., ring)
  call MPI_Cart_shift(ring, 0, 1, src, dst)
  call tally('MPI_Sendrecv')
  call MPI_Sendrecv(v, 1, MPI_INTEGER, dst, 13, got, 1, MPI_INTEGER, src, 13, ring, MPI_STATUS_IGNORE)
  call MPI_Cart_create(W, 2, [size / 2, 2], [.false., .true.], .false., grid)
  call MPI_Cart_sub(grid, [.false., .true.], row)
  call tally('MPI_Barrier'); call MPI_Barrier(row)

  ! a ring as a graph (every rank gives the whole graph) and as a distributed graph
  do i = 1, size
     index(i) = 2 * i
     edges(2 * i - 1) = mod(i, size)
     edges(2 * i) = mod(i + size - 2, size)
  end do
  call MPI_Graph_create(W, size, index, edges, .false., graph)
  call tally('MPI_Barrier'); call MPI_Barrier(graph)
  call MPI_Dist_graph_create_adjacent(W, 1, [left], MPI_UNWEIGHTED, 1, [right], MPI_UNWEIGHTED, &
       MPI_INFO_NULL, .false., dist)
  call tally('MPI_Barrier'); call MPI_Barrier(dist)
  ! Neighbor_alltoallw's datatype arrays are as long as the topology's in- and out-degree (on
  ! `graph`, MPICH 4.0's mpi_f08 binding fails: it asks for a distributed graph's degrees)
  types = MPI_INTEGER
  bdispls = 0
  a(1) = rank * 100
  b(1) = -1
  call tally('MPI_Neighbor_alltoallw')
  call MPI_Neighbor_alltoallw(a, [1], bdispls, types, b, [1], bdispls, types, dist)
  call check(b(1) == left * 100, 'Neighbor_alltoallw on the distributed graph')

  ! an intercommunicator between the halves (rank 0 of each is its highest world rank), merged;
  ! the intercommunicator itself is unknown to the tracer: its free is not recorded
  call MPI_Intercomm_create(half, 0, W, merge(size - 1, size - 2, even), 77, inter)
  call MPI_Intercomm_merge(inter, .not. even, merged)
  call tally('MPI_Allreduce'); call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, merged)
  call MPI_Comm_dup_with_info(W, MPI_INFO_NULL, info_dup)
  call tally('MPI_Barrier'); call MPI_Barrier(info_dup)
  call MPI_Comm_group(half, wg)
  call MPI_Comm_create_group(half, wg, 5, grp_comm)
  call tally('MPI_Barrier'); call MPI_Barrier(grp_comm)
  call MPI_Group_free(wg)

  call MPI_Comm_free(inter)
  do i = 1, 9
     call tally('MPI_Comm_free')
  end do
  call MPI_Comm_free(grp_comm)
  call MPI_Comm_free(info_dup)
  call MPI_Comm_free(merged)
  call MPI_Comm_free(dist)
  call MPI_Comm_free(graph)
  call MPI_Comm_free(row)
  call MPI_Comm_free(grid)
  call MPI_Comm_free(ring)
  call MPI_Comm_free(half, i)
  call check(i == MPI_SUCCESS, 'ierror')

  call tally('MPI_Finalize')
  call print_counts()
  call MPI_Finalize()
end program fortran_f08
