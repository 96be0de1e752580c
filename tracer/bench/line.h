/* Where a benchmark's ranks run: the round trip of a cache line between the cores of this
 * node's first two ranks, as the tracer times it at MPI_Init and MPI_Finalize, so that an
 * untraced run's placement is known as a trace's is. */
#ifndef LOGGPS_BENCH_LINE_H
#define LOGGPS_BENCH_LINE_H

#include <mpi.h>

#include "../cores.h"
#include "timing.h"

/* ns; -1 where they are not two ranks of one node. Collective over MPI_COMM_WORLD. */
static double line_ns(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    double each = cores_round_trip(node, 0, 1, 20000, now_ns);
    MPI_Comm_free(&node);
    return each;
}

#endif
