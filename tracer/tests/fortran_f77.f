! mpif.h, fixed form: every recorded collective, as coll.c does it, on MPI_COMM_WORLD, on a
! split communicator whose rank order differs from the world's, on a duplicate, on a
! communicator from MPI_Comm_create and on MPI_COMM_SELF; MPI_Init_thread; communicators from
! MPI_Cart_create, MPI_Cart_sub and MPI_Comm_split_type (not recorded themselves, but the calls
! on them are). 2 or more (an even number of) ranks, at most 16.
      program fortran_f77
      use fortran_counts
      implicit none
      include 'mpif.h'
      integer rank, size, ierr, provided, half, hme, hn, dup, i
      integer v, w, peer, from, rq(2), st(MPI_STATUS_SIZE)
      integer sts(MPI_STATUS_SIZE, 2), wg, g, range(3, 1), first
      integer rest, self2, ring, src, dst, grid, row, node
      integer dims(2)
      logical periods(2), remain(2)

      call tally('MPI_Init_thread')
      call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
      call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
      call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
      call check(size .ge. 2 .and. size .le. 16, 'size')
      call check(mod(size, 2) .eq. 0, 'even number of ranks')

      call all_collectives(MPI_COMM_WORLD)

!     split in two halves, ranked in reverse world order
      call tally('MPI_Comm_split')
      call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half,
     &                    ierr)
      call all_collectives(half)
      v = rank
      call MPI_Comm_rank(half, hme, ierr)
      call MPI_Comm_size(half, hn, ierr)
      if (hme .eq. 0) then
         do i = 1, hn - 1
            call tally('MPI_Recv')
            call MPI_Recv(v, 1, MPI_INTEGER, MPI_ANY_SOURCE,
     &                    MPI_ANY_TAG, half, st, ierr)
            call check(st(MPI_TAG) .eq. v, 'fan-in status')
         end do
      else
         call tally('MPI_Send')
         call MPI_Send(v, 1, MPI_INTEGER, 0, rank, half, ierr)
      end if

!     a duplicate of the half, used and freed
      call tally('MPI_Comm_dup')
      call MPI_Comm_dup(half, dup, ierr)
      call tally('MPI_Allreduce')
      call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, dup,
     &                   ierr)
      peer = mod(hme + 1, hn)
      from = mod(hme + hn - 1, hn)
      w = 0
      call tally('MPI_Irecv')
      call MPI_Irecv(w, 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, dup, rq(1),
     &               ierr)
      call tally('MPI_Isend')
      call MPI_Isend(v, 1, MPI_INTEGER, peer, 5, dup, rq(2), ierr)
      call tally('MPI_Waitall')
      call MPI_Waitall(2, rq, sts, ierr)
      call check(sts(MPI_SOURCE, 1) .eq. from, 'Waitall status')
      call tally('MPI_Comm_free')
      call MPI_Comm_free(dup, ierr)

!     MPI_Comm_create over the first half of the world; the others
!     get MPI_COMM_NULL
      call MPI_Comm_group(MPI_COMM_WORLD, wg, ierr)
      range(1, 1) = 0
      range(2, 1) = (size - 1) / 2
      range(3, 1) = 1
      call MPI_Group_range_incl(wg, 1, range, g, ierr)
      call tally('MPI_Comm_create')
      call MPI_Comm_create(MPI_COMM_WORLD, g, first, ierr)
      if (first .ne. MPI_COMM_NULL) then
         call tally('MPI_Bcast')
         call MPI_Bcast(v, 1, MPI_INTEGER, 0, first, ierr)
         call tally('MPI_Comm_free')
         call MPI_Comm_free(first, ierr)
      end if
      call MPI_Group_free(g, ierr)
      call MPI_Group_free(wg, ierr)

!     a split where rank 0 takes no part
      i = 1
      if (rank .eq. 0) i = MPI_UNDEFINED
      call tally('MPI_Comm_split')
      call MPI_Comm_split(MPI_COMM_WORLD, i, 0, rest, ierr)
      call check((rank .eq. 0) .eqv. (rest .eq. MPI_COMM_NULL),
     &           'split with MPI_UNDEFINED')
      if (rest .ne. MPI_COMM_NULL) then
         call tally('MPI_Barrier')
         call MPI_Barrier(rest, ierr)
         call tally('MPI_Comm_free')
         call MPI_Comm_free(rest, ierr)
      end if

!     MPI_COMM_SELF and a duplicate of it
      call tally('MPI_Barrier')
      call MPI_Barrier(MPI_COMM_SELF, ierr)
      call tally('MPI_Comm_dup')
      call MPI_Comm_dup(MPI_COMM_SELF, self2, ierr)
      call tally('MPI_Allreduce')
      call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM,
     &                   self2, ierr)
      call tally('MPI_Comm_free')
      call MPI_Comm_free(self2, ierr)

!     a Cartesian ring, reordered
      dims(1) = size
      periods(1) = .true.
      call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .true.,
     &                     ring, ierr)
      call MPI_Cart_shift(ring, 0, 1, src, dst, ierr)
      call tally('MPI_Sendrecv')
      call MPI_Sendrecv(v, 1, MPI_INTEGER, dst, 9, w, 1, MPI_INTEGER,
     &                  src, 9, ring, MPI_STATUS_IGNORE, ierr)
      call tally('MPI_Comm_free')
      call MPI_Comm_free(ring, ierr)

!     a 2-D grid and its rows (MPI_Cart_sub), the ranks of one node
      dims(1) = size / 2
      dims(2) = 2
      periods(1) = .false.
      periods(2) = .true.
      call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false.,
     &                     grid, ierr)
      remain(1) = .false.
      remain(2) = .true.
      call MPI_Cart_sub(grid, remain, row, ierr)
      call MPI_Comm_size(row, i, ierr)
      call check(i .eq. 2, 'Cart_sub keeps the second dimension')
      call tally('MPI_Allreduce')
      call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, row,
     &                   ierr)
      call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
     &                         MPI_INFO_NULL, node, ierr)
      call tally('MPI_Barrier')
      call MPI_Barrier(node, ierr)
      call tally('MPI_Comm_free')
      call MPI_Comm_free(node, ierr)
      call tally('MPI_Comm_free')
      call MPI_Comm_free(row, ierr)
      call tally('MPI_Comm_free')
      call MPI_Comm_free(grid, ierr)

      call tally('MPI_Comm_free')
      call MPI_Comm_free(half, ierr)
      call tally('MPI_Finalize')
      call print_counts()
      call MPI_Finalize(ierr)
      end

      subroutine all_collectives(c)
      use fortran_counts
      implicit none
      include 'mpif.h'
      integer c, me, n, i, root, ierr, nn
      parameter (nn = 4)
      double precision x(16 * nn), y(16 * nn)
      integer counts(16), displs(16), rcounts(16), rdispls(16)

      call MPI_Comm_rank(c, me, ierr)
      call MPI_Comm_size(c, n, ierr)
      do i = 1, 16 * nn
         x(i) = me + i
      end do
      do i = 1, n
!        varying per-rank counts; alltoallv: what i sends me is
!        counts_i(me)
         counts(i) = 1 + mod(i - 1, nn)
         displs(i) = (i - 1) * nn
         rcounts(i) = 1 + mod(me, nn)
         rdispls(i) = (i - 1) * nn
      end do
      root = n - 1
      call tally('MPI_Barrier')
      call MPI_Barrier(c, ierr)
      call tally('MPI_Bcast')
      call MPI_Bcast(x, nn, MPI_DOUBLE_PRECISION, root, c, ierr)
      call tally('MPI_Reduce')
      call MPI_Reduce(x, y, nn, MPI_DOUBLE_PRECISION, MPI_SUM, 0, c,
     &                ierr)
      call tally('MPI_Allreduce')
      call MPI_Allreduce(x, y, nn, MPI_DOUBLE_PRECISION, MPI_MAX, c,
     &                   ierr)
      call tally('MPI_Allreduce')
      call MPI_Allreduce(MPI_IN_PLACE, y, nn, MPI_DOUBLE_PRECISION,
     &                   MPI_MAX, c, ierr)
      call tally('MPI_Gather')
      call MPI_Gather(x, nn, MPI_DOUBLE_PRECISION, y, nn,
     &                MPI_DOUBLE_PRECISION, root, c, ierr)
      call tally('MPI_Gather')
      if (me .eq. 0) then
         call MPI_Gather(MPI_IN_PLACE, nn, MPI_DOUBLE_PRECISION, y, nn,
     &                   MPI_DOUBLE_PRECISION, 0, c, ierr)
      else
         call MPI_Gather(x, nn, MPI_DOUBLE_PRECISION, y, nn,
     &                   MPI_DOUBLE_PRECISION, 0, c, ierr)
      end if
      call tally('MPI_Gatherv')
      call MPI_Gatherv(x, counts(me + 1), MPI_DOUBLE_PRECISION, y,
     &                 counts, displs, MPI_DOUBLE_PRECISION, 0, c, ierr)
      call tally('MPI_Scatter')
      call MPI_Scatter(x, nn, MPI_DOUBLE_PRECISION, y, nn,
     &                 MPI_DOUBLE_PRECISION, root, c, ierr)
      call tally('MPI_Scatterv')
      call MPI_Scatterv(x, counts, displs, MPI_DOUBLE_PRECISION, y,
     &                  counts(me + 1), MPI_DOUBLE_PRECISION, 0, c,
     &                  ierr)
      call tally('MPI_Allgather')
      call MPI_Allgather(x, nn, MPI_DOUBLE_PRECISION, y, nn,
     &                   MPI_DOUBLE_PRECISION, c, ierr)
      call tally('MPI_Allgatherv')
      call MPI_Allgatherv(x, counts(me + 1), MPI_DOUBLE_PRECISION, y,
     &                    counts, displs, MPI_DOUBLE_PRECISION, c, ierr)
      call tally('MPI_Alltoall')
      call MPI_Alltoall(x, nn, MPI_DOUBLE_PRECISION, y, nn,
     &                  MPI_DOUBLE_PRECISION, c, ierr)
      call tally('MPI_Alltoallv')
      call MPI_Alltoallv(x, counts, displs, MPI_DOUBLE_PRECISION, y,
     &                   rcounts, rdispls, MPI_DOUBLE_PRECISION, c,
     &                   ierr)
      call tally('MPI_Reduce_scatter')
      call MPI_Reduce_scatter(x, y, counts, MPI_DOUBLE_PRECISION,
     &                        MPI_SUM, c, ierr)
      call tally('MPI_Reduce_scatter_block')
      call MPI_Reduce_scatter_block(x, y, 2, MPI_DOUBLE_PRECISION,
     &                              MPI_SUM, c, ierr)
      call tally('MPI_Scan')
      call MPI_Scan(x, y, nn, MPI_DOUBLE_PRECISION, MPI_SUM, c, ierr)
      call tally('MPI_Exscan')
      call MPI_Exscan(x, y, nn, MPI_DOUBLE_PRECISION, MPI_SUM, c, ierr)
      end
